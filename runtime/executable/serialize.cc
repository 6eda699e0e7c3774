// The `.hlox` file: Executable::Serialize / Deserialize.
//
// Layout (all integers little-endian):
//   "HLOX" | u32 version | sections... | end section (tag 0xffff, empty)
//   section: u32 tag | u64 length | payload (length bytes) | u32 CRC-32 of tag, length and payload
// The checksum is verified before a section is decoded: a corrupted code section must never be
// loaded and executed (bounds checks cannot tell flipped machine code from the real thing).
// Every struct inside a section is itself a length-prefixed record (u64 length | fields), so a
// later version may append fields to a record or add sections and an older reader skips what it
// does not know. Strings and byte blobs are u64 length | bytes; vectors u64 count | elements.
//
// Deserialize reads a file that may be truncated, corrupt or hostile: every read is bounds
// checked against the enclosing record, counts are capped by the bytes that remain (so no
// allocation exceeds the file's size), nesting of thunk sequences is capped, and the decoded
// executable is validated (slices inside their allocations, kinds in range) so the runtime can
// trust it. Errors name the origin and the byte offset.
#include <zlib.h>

#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/executable/executable.h"

namespace hloc::runtime {
namespace {

constexpr char kMagic[4] = {'H', 'L', 'O', 'X'};
constexpr uint32_t kFormatVersion = 2;  // 2: every section carries a CRC-32
constexpr int kMaxThunkNesting = 64;
constexpr int64_t kMaxPartitions = 1 << 16;  // parts of one kernel; far above any core count
constexpr int64_t kMaxDevices = 1 << 12;     // devices of one run (each gets a thread and its buffers)

enum SectionTag : uint32_t {
  kHeaderSection = 1,
  kCodeSection = 2,
  kAllocationsSection = 3,
  kEntrySection = 4,  // parameter/result shapes and slices
  kThunksSection = 5,
  kHloTextSection = 6,
  kBufferAssignmentSection = 7,
  kEndSection = 0xffff,  // empty and last: a file cut at a section boundary is still caught
};

uint32_t Crc32(const char* data, size_t size) {
  return static_cast<uint32_t>(crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), size));
}

const char* SectionName(uint32_t tag) {
  switch (tag) {
    case kHeaderSection: return "header";
    case kCodeSection: return "code";
    case kAllocationsSection: return "allocations";
    case kEntrySection: return "entry";
    case kThunksSection: return "thunks";
    case kHloTextSection: return "HLO text";
    case kBufferAssignmentSection: return "buffer assignment";
    case kEndSection: return "end";
    default: return "unknown";
  }
}

// ---- writing -----------------------------------------------------------------------------------

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    U64(bits);
  }
  void Bool(bool v) { U8(v ? 1 : 0); }
  void Bytes(const void* data, size_t size) {
    U64(size);
    out_.append(static_cast<const char*>(data), size);
  }
  void Str(const std::string& s) { Bytes(s.data(), s.size()); }
  void I64s(const std::vector<int64_t>& v) {
    U64(v.size());
    for (int64_t x : v) I64(x);
  }
  // Starts a length-prefixed block; End() patches its length.
  size_t Begin() {
    size_t at = out_.size();
    U64(0);
    return at;
  }
  void End(size_t at) {
    uint64_t len = out_.size() - at - 8;
    for (int i = 0; i < 8; ++i) out_[at + i] = static_cast<char>(static_cast<uint8_t>(len >> (8 * i)));
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

void WriteShape(Writer& w, const ArrayShape& s) {
  size_t rec = w.Begin();
  w.Str(s.element_type);
  w.I64(s.element_size_in_bytes);
  w.I64s(s.dimensions);
  w.I64s(s.minor_to_major);
  w.End(rec);
}

void WriteSlice(Writer& w, const BufferSlice& s) {
  w.I64(s.allocation);
  w.I64(s.offset);
  w.I64(s.size);
}

void WriteSequence(Writer& w, const ThunkSequence& seq);

// A record appended after the fields above (readers of files without it see defaults).
void WriteFft(Writer& w, const FftConfig& f) {
  size_t rec = w.Begin();
  w.Str(f.fft_type);
  w.Str(f.input_type);
  w.Str(f.output_type);
  w.I64s(f.fft_length);
  w.I64s(f.input_dimensions);
  w.I64s(f.output_dimensions);
  w.End(rec);
}

// A record appended after the command buffer lanes (readers of files without it see defaults).
void WriteCollective(Writer& w, const CollectiveConfig& c) {
  size_t rec = w.Begin();
  w.Str(c.op);
  w.Str(c.reduction);
  w.U64(c.element_types.size());
  for (const std::string& t : c.element_types) w.Str(t);
  w.U64(c.groups.size());
  for (const std::vector<int64_t>& g : c.groups) w.I64s(g);
  w.U64(c.source_target_pairs.size());
  for (const auto& [source, target] : c.source_target_pairs) {
    w.I64(source);
    w.I64(target);
  }
  w.I64(c.dimension);
  w.I64s(c.outer);
  w.I64s(c.chunk_bytes);
  w.I64(c.async_id);
  w.End(rec);
}

void WriteThunk(Writer& w, const Thunk& t) {
  size_t rec = w.Begin();
  w.U32(static_cast<uint32_t>(t.kind));
  w.Str(t.name);
  w.U64(t.arguments.size());
  for (const BufferSlice& s : t.arguments) WriteSlice(w, s);
  w.U64(t.written.size());
  for (bool b : t.written) w.Bool(b);
  w.Str(t.kernel_name);
  const LaunchDimensions& l = t.launch;
  for (int64_t v : {l.grid_x, l.grid_y, l.grid_z, l.block_x, l.block_y, l.block_z, l.shared_memory_bytes,
                    l.partitions}) {
    w.I64(v);
  }
  const GemmConfig& g = t.gemm;
  w.Str(g.lhs_type);
  w.Str(g.rhs_type);
  w.Str(g.output_type);
  w.Str(g.compute_type);
  for (int64_t v : {g.batch, g.m, g.n, g.k}) w.I64(v);
  w.Bool(g.lhs_transposed);
  w.Bool(g.rhs_transposed);
  for (int64_t v : {g.lhs_leading_dim, g.rhs_leading_dim, g.output_leading_dim, g.lhs_batch_stride,
                    g.rhs_batch_stride, g.output_batch_stride}) {
    w.I64(v);
  }
  w.F64(g.alpha);
  w.F64(g.beta);
  w.Str(g.epilogue);
  w.I64(g.algorithm);
  w.Str(t.backend_config);
  w.Str(t.target);
  w.U32(t.memset_value);
  w.I64(t.size);
  WriteSlice(w, t.predicate);
  WriteSequence(w, t.condition);
  WriteSequence(w, t.body);
  w.U64(t.branches.size());
  for (const ThunkSequence& b : t.branches) WriteSequence(w, b);
  w.I64(t.trip_count);
  WriteFft(w, t.fft);
  w.I64(t.lanes);
  WriteCollective(w, t.collective);
  w.F64(g.alpha_imag);  // appended: a record without it reads as 0 (real alpha)
  w.End(rec);
}

void WriteSequence(Writer& w, const ThunkSequence& seq) {
  w.U64(seq.size());
  for (const Thunk& t : seq) WriteThunk(w, t);
}

// ---- reading -----------------------------------------------------------------------------------

// A bounds-checked cursor over [pos, end) of the file; errors carry the absolute offset.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& origin, size_t pos, size_t end)
      : bytes_(bytes), origin_(origin), pos_(pos), end_(end) {}

  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  size_t remaining() const { return end_ - pos_; }

  absl::Status Error(const std::string& what) const { return ErrorAt(pos_, what); }
  absl::Status ErrorAt(size_t offset, const std::string& what) const {
    return absl::DataLossError(absl::StrCat(origin_, ": corrupt executable at byte offset ", offset, ": ", what));
  }

  absl::Status Need(size_t n, const char* what) const {
    if (n > remaining()) {
      return Error(absl::StrCat("truncated ", what, " (needs ", n, " bytes, ", remaining(), " left)"));
    }
    return absl::OkStatus();
  }
  absl::Status U8(uint8_t* v, const char* what) {
    if (auto s = Need(1, what); !s.ok()) return s;
    *v = static_cast<uint8_t>(bytes_[pos_++]);
    return absl::OkStatus();
  }
  absl::Status U32(uint32_t* v, const char* what) {
    if (auto s = Need(4, what); !s.ok()) return s;
    uint32_t x = 0;
    for (int i = 0; i < 4; ++i) x |= static_cast<uint32_t>(static_cast<uint8_t>(bytes_[pos_ + i])) << (8 * i);
    pos_ += 4;
    *v = x;
    return absl::OkStatus();
  }
  absl::Status U64(uint64_t* v, const char* what) {
    if (auto s = Need(8, what); !s.ok()) return s;
    uint64_t x = 0;
    for (int i = 0; i < 8; ++i) x |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + i])) << (8 * i);
    pos_ += 8;
    *v = x;
    return absl::OkStatus();
  }
  absl::Status I64(int64_t* v, const char* what) {
    uint64_t u;
    if (auto s = U64(&u, what); !s.ok()) return s;
    *v = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  absl::Status F64(double* v, const char* what) {
    uint64_t u;
    if (auto s = U64(&u, what); !s.ok()) return s;
    std::memcpy(v, &u, sizeof(u));
    return absl::OkStatus();
  }
  absl::Status Bool(bool* v, const char* what) {
    uint8_t b;
    if (auto s = U8(&b, what); !s.ok()) return s;
    if (b > 1) return ErrorAt(pos_ - 1, absl::StrCat(what, ": boolean byte is ", b));
    *v = b != 0;
    return absl::OkStatus();
  }
  // A count of elements each at least `min_element_bytes` long: capped by what remains.
  absl::Status Count(uint64_t* n, size_t min_element_bytes, const char* what) {
    size_t at = pos_;
    if (auto s = U64(n, what); !s.ok()) return s;
    if (*n > remaining() / (min_element_bytes == 0 ? 1 : min_element_bytes)) {
      return ErrorAt(at, absl::StrCat(what, ": count ", *n, " exceeds the ", remaining(), " bytes left (truncated or corrupt)"));
    }
    return absl::OkStatus();
  }
  absl::Status Str(std::string* s, const char* what) {
    uint64_t n;
    if (auto st = Count(&n, 1, what); !st.ok()) return st;
    s->assign(bytes_.data() + pos_, n);
    pos_ += n;
    return absl::OkStatus();
  }
  absl::Status Blob(std::vector<uint8_t>* v, const char* what) {
    uint64_t n;
    if (auto st = Count(&n, 1, what); !st.ok()) return st;
    v->assign(reinterpret_cast<const uint8_t*>(bytes_.data()) + pos_,
              reinterpret_cast<const uint8_t*>(bytes_.data()) + pos_ + n);
    pos_ += n;
    return absl::OkStatus();
  }
  absl::Status I64s(std::vector<int64_t>* v, const char* what) {
    uint64_t n;
    if (auto st = Count(&n, 8, what); !st.ok()) return st;
    v->resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      if (auto st = I64(&(*v)[i], what); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  // Opens a length-prefixed record: returns a reader over it and advances past it.
  absl::StatusOr<Reader> Record(const char* what) {
    uint64_t n;
    if (auto st = Count(&n, 1, what); !st.ok()) return st;
    Reader sub(bytes_, origin_, pos_, pos_ + n);
    pos_ += n;
    return sub;
  }

 private:
  const std::string& bytes_;
  const std::string& origin_;
  size_t pos_;
  size_t end_;
};

#define HLOX_RETURN_IF_ERROR(expr)         \
  do {                                     \
    absl::Status _st = (expr);             \
    if (!_st.ok()) return _st;             \
  } while (0)

#define HLOX_ASSIGN_OR_RETURN(lhs, expr) \
  auto lhs##_or = (expr);                \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

absl::Status ReadShape(Reader& r, ArrayShape* s) {
  HLOX_ASSIGN_OR_RETURN(rec, r.Record("array shape"));
  HLOX_RETURN_IF_ERROR(rec.Str(&s->element_type, "element type"));
  HLOX_RETURN_IF_ERROR(rec.I64(&s->element_size_in_bytes, "element size"));
  HLOX_RETURN_IF_ERROR(rec.I64s(&s->dimensions, "dimensions"));
  HLOX_RETURN_IF_ERROR(rec.I64s(&s->minor_to_major, "minor_to_major"));
  return absl::OkStatus();
}

absl::Status ReadSlice(Reader& r, BufferSlice* s) {
  HLOX_RETURN_IF_ERROR(r.I64(&s->allocation, "slice allocation"));
  HLOX_RETURN_IF_ERROR(r.I64(&s->offset, "slice offset"));
  HLOX_RETURN_IF_ERROR(r.I64(&s->size, "slice size"));
  return absl::OkStatus();
}

absl::Status ReadSequence(Reader& r, ThunkSequence* seq, int depth);

absl::Status ReadFft(Reader& r, FftConfig* f) {
  HLOX_ASSIGN_OR_RETURN(rec, r.Record("fft config"));
  HLOX_RETURN_IF_ERROR(rec.Str(&f->fft_type, "fft type"));
  HLOX_RETURN_IF_ERROR(rec.Str(&f->input_type, "fft input type"));
  HLOX_RETURN_IF_ERROR(rec.Str(&f->output_type, "fft output type"));
  HLOX_RETURN_IF_ERROR(rec.I64s(&f->fft_length, "fft length"));
  HLOX_RETURN_IF_ERROR(rec.I64s(&f->input_dimensions, "fft input dimensions"));
  HLOX_RETURN_IF_ERROR(rec.I64s(&f->output_dimensions, "fft output dimensions"));
  return absl::OkStatus();
}

absl::Status ReadCollective(Reader& r, CollectiveConfig* c) {
  HLOX_ASSIGN_OR_RETURN(rec, r.Record("collective config"));
  HLOX_RETURN_IF_ERROR(rec.Str(&c->op, "collective op"));
  HLOX_RETURN_IF_ERROR(rec.Str(&c->reduction, "collective reduction"));
  uint64_t n;
  HLOX_RETURN_IF_ERROR(rec.Count(&n, 8, "collective element types"));
  c->element_types.resize(n);
  for (std::string& t : c->element_types) HLOX_RETURN_IF_ERROR(rec.Str(&t, "collective element type"));
  HLOX_RETURN_IF_ERROR(rec.Count(&n, 8, "collective groups"));
  c->groups.resize(n);
  for (std::vector<int64_t>& g : c->groups) HLOX_RETURN_IF_ERROR(rec.I64s(&g, "collective group"));
  HLOX_RETURN_IF_ERROR(rec.Count(&n, 16, "source-target pairs"));
  c->source_target_pairs.resize(n);
  for (auto& [source, target] : c->source_target_pairs) {
    HLOX_RETURN_IF_ERROR(rec.I64(&source, "permute source"));
    HLOX_RETURN_IF_ERROR(rec.I64(&target, "permute target"));
  }
  HLOX_RETURN_IF_ERROR(rec.I64(&c->dimension, "collective dimension"));
  HLOX_RETURN_IF_ERROR(rec.I64s(&c->outer, "collective outer counts"));
  HLOX_RETURN_IF_ERROR(rec.I64s(&c->chunk_bytes, "collective chunk sizes"));
  if (rec.remaining() > 0) HLOX_RETURN_IF_ERROR(rec.I64(&c->async_id, "collective async id"));
  return absl::OkStatus();
}

absl::Status ReadThunk(Reader& r, Thunk* t, int depth) {
  HLOX_ASSIGN_OR_RETURN(rec, r.Record("thunk"));
  uint32_t kind;
  size_t kind_at = rec.pos();
  HLOX_RETURN_IF_ERROR(rec.U32(&kind, "thunk kind"));
  if (kind > static_cast<uint32_t>(ThunkKind::kFft)) {
    return rec.ErrorAt(kind_at, absl::StrCat("unknown thunk kind ", kind));
  }
  t->kind = static_cast<ThunkKind>(kind);
  HLOX_RETURN_IF_ERROR(rec.Str(&t->name, "thunk name"));
  uint64_t n;
  HLOX_RETURN_IF_ERROR(rec.Count(&n, 24, "thunk arguments"));
  t->arguments.resize(n);
  for (BufferSlice& s : t->arguments) HLOX_RETURN_IF_ERROR(ReadSlice(rec, &s));
  HLOX_RETURN_IF_ERROR(rec.Count(&n, 1, "thunk written flags"));
  t->written.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    bool b;
    HLOX_RETURN_IF_ERROR(rec.Bool(&b, "written flag"));
    t->written[i] = b;
  }
  HLOX_RETURN_IF_ERROR(rec.Str(&t->kernel_name, "kernel name"));
  LaunchDimensions& l = t->launch;
  for (int64_t* v : {&l.grid_x, &l.grid_y, &l.grid_z, &l.block_x, &l.block_y, &l.block_z, &l.shared_memory_bytes,
                     &l.partitions}) {
    HLOX_RETURN_IF_ERROR(rec.I64(v, "launch dimensions"));
  }
  GemmConfig& g = t->gemm;
  HLOX_RETURN_IF_ERROR(rec.Str(&g.lhs_type, "gemm lhs type"));
  HLOX_RETURN_IF_ERROR(rec.Str(&g.rhs_type, "gemm rhs type"));
  HLOX_RETURN_IF_ERROR(rec.Str(&g.output_type, "gemm output type"));
  HLOX_RETURN_IF_ERROR(rec.Str(&g.compute_type, "gemm compute type"));
  for (int64_t* v : {&g.batch, &g.m, &g.n, &g.k}) HLOX_RETURN_IF_ERROR(rec.I64(v, "gemm dimensions"));
  HLOX_RETURN_IF_ERROR(rec.Bool(&g.lhs_transposed, "gemm lhs_transposed"));
  HLOX_RETURN_IF_ERROR(rec.Bool(&g.rhs_transposed, "gemm rhs_transposed"));
  for (int64_t* v : {&g.lhs_leading_dim, &g.rhs_leading_dim, &g.output_leading_dim, &g.lhs_batch_stride,
                     &g.rhs_batch_stride, &g.output_batch_stride}) {
    HLOX_RETURN_IF_ERROR(rec.I64(v, "gemm strides"));
  }
  HLOX_RETURN_IF_ERROR(rec.F64(&g.alpha, "gemm alpha"));
  HLOX_RETURN_IF_ERROR(rec.F64(&g.beta, "gemm beta"));
  HLOX_RETURN_IF_ERROR(rec.Str(&g.epilogue, "gemm epilogue"));
  HLOX_RETURN_IF_ERROR(rec.I64(&g.algorithm, "gemm algorithm"));
  HLOX_RETURN_IF_ERROR(rec.Str(&t->backend_config, "backend config"));
  HLOX_RETURN_IF_ERROR(rec.Str(&t->target, "target"));
  HLOX_RETURN_IF_ERROR(rec.U32(&t->memset_value, "memset value"));
  HLOX_RETURN_IF_ERROR(rec.I64(&t->size, "copy size"));
  HLOX_RETURN_IF_ERROR(ReadSlice(rec, &t->predicate));
  if (depth >= kMaxThunkNesting) {
    return rec.Error(absl::StrCat("thunk sequences nested deeper than ", kMaxThunkNesting));
  }
  HLOX_RETURN_IF_ERROR(ReadSequence(rec, &t->condition, depth + 1));
  HLOX_RETURN_IF_ERROR(ReadSequence(rec, &t->body, depth + 1));
  HLOX_RETURN_IF_ERROR(rec.Count(&n, 8, "conditional branches"));
  t->branches.clear();
  for (uint64_t i = 0; i < n; ++i) {
    t->branches.emplace_back();
    HLOX_RETURN_IF_ERROR(ReadSequence(rec, &t->branches.back(), depth + 1));
  }
  HLOX_RETURN_IF_ERROR(rec.I64(&t->trip_count, "trip count"));
  if (rec.remaining() > 0) HLOX_RETURN_IF_ERROR(ReadFft(rec, &t->fft));
  if (rec.remaining() > 0) HLOX_RETURN_IF_ERROR(rec.I64(&t->lanes, "command buffer lanes"));
  if (t->lanes < 1 || t->lanes > 16) return rec.Error(absl::StrCat("command buffer lanes ", t->lanes, " not in [1, 16]"));
  if (rec.remaining() > 0) HLOX_RETURN_IF_ERROR(ReadCollective(rec, &t->collective));
  if (rec.remaining() > 0) HLOX_RETURN_IF_ERROR(rec.F64(&g.alpha_imag, "gemm alpha_imag"));
  return absl::OkStatus();  // trailing bytes: fields of a later version
}

absl::Status ReadSequence(Reader& r, ThunkSequence* seq, int depth) {
  uint64_t n;
  // A serialized thunk takes well over 200 bytes; thunks are appended as they are read so a
  // lying count cannot make us allocate more than the file backs.
  HLOX_RETURN_IF_ERROR(r.Count(&n, 200, "thunk sequence"));
  seq->clear();
  for (uint64_t i = 0; i < n; ++i) {
    seq->emplace_back();
    HLOX_RETURN_IF_ERROR(ReadThunk(r, &seq->back(), depth));
  }
  return absl::OkStatus();
}

// ---- validation: what the runtime relies on ---------------------------------------------------

bool AddOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }

absl::Status CheckSlice(const Executable& e, const BufferSlice& s, const std::string& where) {
  if (!s.valid()) return absl::OkStatus();
  if (s.allocation >= static_cast<int64_t>(e.allocations.size())) {
    return absl::DataLossError(absl::StrCat(where, ": slice names allocation ", s.allocation, " of ",
                                            e.allocations.size()));
  }
  int64_t end;
  if (s.offset < 0 || s.size < 0 || AddOverflows(s.offset, s.size, &end) ||
      end > e.allocations[s.allocation].size) {
    return absl::DataLossError(absl::StrCat(where, ": slice [", s.offset, ", +", s.size, ") is outside allocation ",
                                            s.allocation, " of ", e.allocations[s.allocation].size, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const ArrayShape& s, const std::string& where) {
  if (s.element_size_in_bytes <= 0 || s.element_size_in_bytes > 16) {
    return absl::DataLossError(absl::StrCat(where, ": element size ", s.element_size_in_bytes));
  }
  int64_t n = s.element_size_in_bytes;
  for (int64_t d : s.dimensions) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) {
      return absl::DataLossError(absl::StrCat(where, ": bad or overflowing dimensions"));
    }
  }
  if (!s.minor_to_major.empty()) {
    if (s.minor_to_major.size() != s.dimensions.size()) {
      return absl::DataLossError(absl::StrCat(where, ": layout rank differs from the shape's"));
    }
    std::vector<bool> seen(s.dimensions.size(), false);
    for (int64_t d : s.minor_to_major) {
      if (d < 0 || d >= static_cast<int64_t>(seen.size()) || seen[d]) {
        return absl::DataLossError(absl::StrCat(where, ": layout is not a permutation"));
      }
      seen[d] = true;
    }
  }
  return absl::OkStatus();
}

// Device ids inside [0, num_devices), no device in two groups, non-negative geometry; whether
// the sizes fit the op is the CPU runtime's load-time check (runtime/cpu/collectives.h).
absl::Status CheckCollective(const Executable& e, const CollectiveConfig& c, const std::string& where) {
  const int64_t n = e.num_devices();
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (const std::vector<int64_t>& g : c.groups) {
    for (int64_t d : g) {
      if (d < 0 || d >= n) return absl::DataLossError(absl::StrCat(where, ": device ", d, " of ", n, " devices"));
      if (seen[d]) return absl::DataLossError(absl::StrCat(where, ": device ", d, " is in two groups"));
      seen[d] = true;
    }
  }
  for (const auto& [source, target] : c.source_target_pairs) {
    if (source < 0 || source >= n || target < 0 || target >= n)
      return absl::DataLossError(absl::StrCat(where, ": pair {", source, ",", target, "} outside ", n, " devices"));
  }
  for (int64_t v : c.outer)
    if (v < 0) return absl::DataLossError(absl::StrCat(where, ": negative outer count"));
  for (int64_t v : c.chunk_bytes)
    if (v < 0) return absl::DataLossError(absl::StrCat(where, ": negative chunk size"));
  if (c.async_id < -1) return absl::DataLossError(absl::StrCat(where, ": async id ", c.async_id));
  return absl::OkStatus();
}

absl::Status CheckSequence(const Executable& e, const ThunkSequence& seq, const std::string& origin) {
  for (const Thunk& t : seq) {
    std::string where = absl::StrCat(origin, ": thunk ", ThunkKindName(t.kind), " '", t.name, "'");
    for (const BufferSlice& s : t.arguments) HLOX_RETURN_IF_ERROR(CheckSlice(e, s, where));
    HLOX_RETURN_IF_ERROR(CheckSlice(e, t.predicate, where));
    if (!t.written.empty() && t.written.size() != t.arguments.size()) {
      return absl::DataLossError(absl::StrCat(where, ": ", t.written.size(), " written flags for ",
                                              t.arguments.size(), " arguments"));
    }
    if (t.launch.partitions < 1 || t.launch.partitions > kMaxPartitions) {
      return absl::DataLossError(absl::StrCat(where, ": launch partitions ", t.launch.partitions));
    }
    HLOX_RETURN_IF_ERROR(CheckCollective(e, t.collective, where));
    HLOX_RETURN_IF_ERROR(CheckSequence(e, t.condition, origin));
    HLOX_RETURN_IF_ERROR(CheckSequence(e, t.body, origin));
    for (const ThunkSequence& b : t.branches) HLOX_RETURN_IF_ERROR(CheckSequence(e, b, origin));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateExecutable(const Executable& e, const std::string& origin) {
  if (e.num_partitions < 1 || e.replica_count < 1 || e.num_partitions > kMaxDevices ||
      e.replica_count > kMaxDevices / e.num_partitions) {
    return absl::DataLossError(absl::StrCat(origin, ": ", e.num_partitions, " partitions x ", e.replica_count,
                                            " replicas (at most ", kMaxDevices, " devices)"));
  }
  for (size_t i = 0; i < e.allocations.size(); ++i) {
    const BufferAllocation& a = e.allocations[i];
    if (a.index != static_cast<int64_t>(i) || a.size < 0) {
      return absl::DataLossError(
          absl::StrCat(origin, ": allocation ", i, " has index ", a.index, " and size ", a.size));
    }
    if (static_cast<int64_t>(a.constant_data.size()) > a.size) {
      return absl::DataLossError(absl::StrCat(origin, ": allocation ", i, " holds ", a.constant_data.size(),
                                              " constant bytes but has ", a.size));
    }
  }
  if (e.parameter_slices.size() != e.parameter_shapes.size() || e.result_slices.size() != e.result_shapes.size()) {
    return absl::DataLossError(absl::StrCat(origin, ": entry shapes and slices differ in number"));
  }
  for (size_t i = 0; i < e.parameter_shapes.size(); ++i) {
    std::string where = absl::StrCat(origin, ": parameter ", i);
    HLOX_RETURN_IF_ERROR(CheckShape(e.parameter_shapes[i], where));
    HLOX_RETURN_IF_ERROR(CheckSlice(e, e.parameter_slices[i], where));
  }
  for (size_t i = 0; i < e.result_shapes.size(); ++i) {
    std::string where = absl::StrCat(origin, ": result ", i);
    HLOX_RETURN_IF_ERROR(CheckShape(e.result_shapes[i], where));
    HLOX_RETURN_IF_ERROR(CheckSlice(e, e.result_slices[i], where));
  }
  return CheckSequence(e, e.thunks, origin);
}

std::string Executable::Serialize() const {
  Writer w;
  w.out().append(kMagic, 4);
  w.U32(kFormatVersion);
  auto section = [&](SectionTag tag, auto&& body) {
    const size_t start = w.out().size();
    w.U32(tag);
    size_t at = w.Begin();
    body();
    w.End(at);
    w.U32(Crc32(w.out().data() + start, w.out().size() - start));
  };
  section(kHeaderSection, [&] {
    w.Str(module_name);
    w.Str(platform);
    w.Str(target);
    w.Str(profile);
    w.Bool(result_is_tuple);
    w.I64(num_partitions);  // appended fields: older files end before them (one device)
    w.I64(replica_count);
  });
  section(kCodeSection, [&] { w.Bytes(code.data(), code.size()); });
  section(kAllocationsSection, [&] {
    w.U64(allocations.size());
    for (const BufferAllocation& a : allocations) {
      size_t rec = w.Begin();
      w.I64(a.index);
      w.I64(a.size);
      w.Bool(a.is_entry_parameter);
      w.I64(a.parameter_number);
      w.I64s(a.parameter_shape_index);
      w.Bool(a.is_constant);
      w.Bytes(a.constant_data.data(), a.constant_data.size());
      w.Bool(a.maybe_live_out);
      w.Bool(a.is_temp);
      w.End(rec);
    }
  });
  section(kEntrySection, [&] {
    w.U64(parameter_shapes.size());
    for (const ArrayShape& s : parameter_shapes) WriteShape(w, s);
    w.U64(result_shapes.size());
    for (const ArrayShape& s : result_shapes) WriteShape(w, s);
    w.U64(parameter_slices.size());
    for (const BufferSlice& s : parameter_slices) WriteSlice(w, s);
    w.U64(result_slices.size());
    for (const BufferSlice& s : result_slices) WriteSlice(w, s);
  });
  section(kThunksSection, [&] { WriteSequence(w, thunks); });
  section(kHloTextSection, [&] { w.Str(hlo_text); });
  section(kBufferAssignmentSection, [&] { w.Str(buffer_assignment_text); });
  section(kEndSection, [] {});
  return std::move(w.out());
}

absl::StatusOr<Executable> Executable::Deserialize(const std::string& bytes, const std::string& origin) {
  if (bytes.size() < 4 || std::memcmp(bytes.data(), kMagic, 4) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not an hloc executable (the file does not start with \"HLOX\")"));
  }
  Reader r(bytes, origin, 4, bytes.size());
  uint32_t version;
  HLOX_RETURN_IF_ERROR(r.U32(&version, "format version"));
  if (version != kFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": executable format version ", version,
                                                   " is not supported (this runtime reads version ",
                                                   kFormatVersion, "; compile it again with this hloc)"));
  }
  Executable e;
  bool seen[8] = {};
  bool ended = false;
  while (!ended) {
    uint32_t tag;
    size_t tag_at = r.pos();
    if (r.remaining() == 0) {
      return r.Error("truncated executable: the file ends before its end marker");
    }
    HLOX_RETURN_IF_ERROR(r.U32(&tag, "section tag"));
    HLOX_ASSIGN_OR_RETURN(s, r.Record("section"));
    uint32_t stored_crc;
    HLOX_RETURN_IF_ERROR(r.U32(&stored_crc, "section checksum"));
    if (const uint32_t crc = Crc32(bytes.data() + tag_at, s.end() - tag_at); crc != stored_crc) {
      return r.ErrorAt(tag_at, absl::StrFormat("section %u (%s): checksum mismatch (stored %08x, computed %08x); "
                                               "the file is damaged: compile it again",
                                               tag, SectionName(tag), stored_crc, crc));
    }
    if (tag < 8) {
      if (seen[tag]) return r.ErrorAt(tag_at, absl::StrCat("section ", tag, " appears twice"));
      seen[tag] = true;
    }
    switch (tag) {
      case kHeaderSection:
        HLOX_RETURN_IF_ERROR(s.Str(&e.module_name, "module name"));
        HLOX_RETURN_IF_ERROR(s.Str(&e.platform, "platform"));
        HLOX_RETURN_IF_ERROR(s.Str(&e.target, "target"));
        HLOX_RETURN_IF_ERROR(s.Str(&e.profile, "profile"));
        HLOX_RETURN_IF_ERROR(s.Bool(&e.result_is_tuple, "result_is_tuple"));
        if (s.remaining() > 0) HLOX_RETURN_IF_ERROR(s.I64(&e.num_partitions, "num_partitions"));
        if (s.remaining() > 0) HLOX_RETURN_IF_ERROR(s.I64(&e.replica_count, "replica_count"));
        break;
      case kCodeSection:
        HLOX_RETURN_IF_ERROR(s.Blob(&e.code, "code"));
        break;
      case kAllocationsSection: {
        uint64_t n;
        HLOX_RETURN_IF_ERROR(s.Count(&n, 50, "allocations"));
        e.allocations.resize(n);
        for (BufferAllocation& a : e.allocations) {
          HLOX_ASSIGN_OR_RETURN(rec, s.Record("allocation"));
          HLOX_RETURN_IF_ERROR(rec.I64(&a.index, "allocation index"));
          HLOX_RETURN_IF_ERROR(rec.I64(&a.size, "allocation size"));
          HLOX_RETURN_IF_ERROR(rec.Bool(&a.is_entry_parameter, "is_entry_parameter"));
          HLOX_RETURN_IF_ERROR(rec.I64(&a.parameter_number, "parameter number"));
          HLOX_RETURN_IF_ERROR(rec.I64s(&a.parameter_shape_index, "parameter shape index"));
          HLOX_RETURN_IF_ERROR(rec.Bool(&a.is_constant, "is_constant"));
          HLOX_RETURN_IF_ERROR(rec.Blob(&a.constant_data, "constant data"));
          HLOX_RETURN_IF_ERROR(rec.Bool(&a.maybe_live_out, "maybe_live_out"));
          HLOX_RETURN_IF_ERROR(rec.Bool(&a.is_temp, "is_temp"));
        }
        break;
      }
      case kEntrySection: {
        uint64_t n;
        HLOX_RETURN_IF_ERROR(s.Count(&n, 40, "parameter shapes"));
        e.parameter_shapes.resize(n);
        for (ArrayShape& a : e.parameter_shapes) HLOX_RETURN_IF_ERROR(ReadShape(s, &a));
        HLOX_RETURN_IF_ERROR(s.Count(&n, 40, "result shapes"));
        e.result_shapes.resize(n);
        for (ArrayShape& a : e.result_shapes) HLOX_RETURN_IF_ERROR(ReadShape(s, &a));
        HLOX_RETURN_IF_ERROR(s.Count(&n, 24, "parameter slices"));
        e.parameter_slices.resize(n);
        for (BufferSlice& b : e.parameter_slices) HLOX_RETURN_IF_ERROR(ReadSlice(s, &b));
        HLOX_RETURN_IF_ERROR(s.Count(&n, 24, "result slices"));
        e.result_slices.resize(n);
        for (BufferSlice& b : e.result_slices) HLOX_RETURN_IF_ERROR(ReadSlice(s, &b));
        break;
      }
      case kThunksSection:
        HLOX_RETURN_IF_ERROR(ReadSequence(s, &e.thunks, 0));
        break;
      case kHloTextSection:
        HLOX_RETURN_IF_ERROR(s.Str(&e.hlo_text, "HLO text"));
        break;
      case kBufferAssignmentSection:
        HLOX_RETURN_IF_ERROR(s.Str(&e.buffer_assignment_text, "buffer assignment text"));
        break;
      case kEndSection:
        if (r.remaining() != 0) return r.Error(absl::StrCat(r.remaining(), " bytes after the end marker"));
        ended = true;
        break;
      default:
        break;  // a section of a later version: skipped
    }
  }
  for (uint32_t tag : {kHeaderSection, kAllocationsSection, kEntrySection, kThunksSection}) {
    if (!seen[tag]) {
      return absl::DataLossError(absl::StrCat(origin, ": truncated executable: section ", tag,
                                              " is missing (the file ends at byte ", bytes.size(), ")"));
    }
  }
  HLOX_RETURN_IF_ERROR(ValidateExecutable(e, origin));
  return e;
}

}  // namespace hloc::runtime
