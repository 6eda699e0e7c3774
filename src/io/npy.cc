#include "io/npy.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "io/zip.h"
#include "support/file_io.h"
#include "support/host_memory.h"

namespace hloc {

static_assert(std::endian::native == std::endian::little,
              "npy I/O copies little-endian element bytes straight into Literal storage");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy itself refuses headers over 10000 bytes by default; a generous cap still bounds work.
constexpr size_t kMaxHeaderSize = 1 << 20;
constexpr int kMaxRank = 64;  // numpy's NPY_MAXDIMS

absl::Status Bad(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

// ---- The header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A small scanner for the subset of Python literal syntax numpy writes: strings, True/False,
// integers and flat tuples. Anything else is an error, never a guess.
class HeaderScanner {
 public:
  HeaderScanner(std::string_view text, const std::string& where) : s_(text), where_(where) {}

  absl::StatusOr<Header> Parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    if (!Eat('{')) return Error("header does not start with '{'");
    while (true) {
      SkipSpace();
      if (Eat('}')) break;
      auto key = String();
      if (!key.ok()) return key.status();
      if (!Eat(':')) return Error(absl::StrCat("expected ':' after '", *key, "'"));
      if (*key == "descr") {
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == '[') {
          return Error("structured dtypes (a list descr) are not supported");
        }
        auto v = String();
        if (!v.ok()) return v.status();
        h.descr = *v;
        have_descr = true;
      } else if (*key == "fortran_order") {
        auto v = Bool();
        if (!v.ok()) return v.status();
        h.fortran_order = *v;
        have_order = true;
      } else if (*key == "shape") {
        auto v = Tuple();
        if (!v.ok()) return v.status();
        h.shape = std::move(*v);
        have_shape = true;
      } else {
        return Error(absl::StrCat("unexpected key '", *key, "'"));
      }
      SkipSpace();
      if (Eat(',')) continue;
      if (Eat('}')) break;
      return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != s_.size()) return Error("trailing characters after the header dict");
    if (!have_descr || !have_order || !have_shape) {
      return Error("header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    return h;
  }

 private:
  absl::Status Error(const std::string& what) const {
    return Bad(where_, absl::StrCat("bad .npy header at byte ", pos_, ": ", what));
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  absl::StatusOr<std::string> String() {
    SkipSpace();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return Error("expected a string");
    char quote = s_[pos_++];
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') return Error("escapes in strings are not supported");
      ++pos_;
    }
    if (pos_ >= s_.size()) return Error("unterminated string");
    return std::string(s_.substr(start, pos_++ - start));
  }
  absl::StatusOr<bool> Bool() {
    SkipSpace();
    if (s_.substr(pos_, 4) == "True") { pos_ += 4; return true; }
    if (s_.substr(pos_, 5) == "False") { pos_ += 5; return false; }
    return Error("expected True or False");
  }
  absl::StatusOr<int64_t> Int() {
    SkipSpace();
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      int d = s_[pos_] - '0';
      if (v > (INT64_MAX - d) / 10) return Error("dimension too large");
      v = v * 10 + d;
      ++pos_;
    }
    if (pos_ == start) return Error("expected a non-negative integer");
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long suffix in old files
    return v;
  }
  absl::StatusOr<std::vector<int64_t>> Tuple() {
    if (!Eat('(')) return Error("expected a shape tuple");
    std::vector<int64_t> dims;
    while (true) {
      if (Eat(')')) break;
      if (dims.size() >= kMaxRank) return Error(absl::StrCat("more than ", kMaxRank, " dimensions"));
      auto d = Int();
      if (!d.ok()) return d.status();
      dims.push_back(*d);
      if (Eat(',')) continue;
      if (Eat(')')) break;
      return Error("expected ',' or ')' in the shape");
    }
    return dims;
  }

  std::string_view s_;
  const std::string& where_;
  size_t pos_ = 0;
};

// ---- dtypes
struct DType {
  PrimitiveType type;
  int item_size;
  bool big_endian;
};

std::optional<DType> ParseDescr(const std::string& descr) {
  if (descr.empty()) return std::nullopt;
  size_t i = 0;
  bool big = false;
  if (descr[0] == '<' || descr[0] == '|' || descr[0] == '=') {
    i = 1;
  } else if (descr[0] == '>') {
    big = true;
    i = 1;
  }
  std::string code = descr.substr(i);
  static const struct { const char* code; PrimitiveType type; } kCodes[] = {
      {"b1", PrimitiveType::PRED}, {"?", PrimitiveType::PRED},
      {"i1", PrimitiveType::S8},   {"i2", PrimitiveType::S16}, {"i4", PrimitiveType::S32},
      {"i8", PrimitiveType::S64},  {"u1", PrimitiveType::U8},  {"u2", PrimitiveType::U16},
      {"u4", PrimitiveType::U32},  {"u8", PrimitiveType::U64}, {"f2", PrimitiveType::F16},
      {"f4", PrimitiveType::F32},  {"f8", PrimitiveType::F64}, {"c8", PrimitiveType::C64},
      {"c16", PrimitiveType::C128},
  };
  for (const auto& c : kCodes) {
    if (code == c.code) return DType{c.type, ByteWidth(c.type), big};
  }
  return std::nullopt;
}

// The numpy descr hloc writes for a type. bf16 goes out as uint16 bit patterns and the f8/f4
// types as uint8 bit patterns (numpy has neither; the corpus uses this convention), sub-byte
// integers one per byte.
std::optional<std::string> DescrFor(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::PRED: return "|b1";
    case PrimitiveType::S2: case PrimitiveType::S4: case PrimitiveType::S8: return "|i1";
    case PrimitiveType::U2: case PrimitiveType::U4: case PrimitiveType::U8: return "|u1";
    case PrimitiveType::S16: return "<i2";
    case PrimitiveType::S32: return "<i4";
    case PrimitiveType::S64: return "<i8";
    case PrimitiveType::U16: case PrimitiveType::BF16: return "<u2";
    case PrimitiveType::U32: return "<u4";
    case PrimitiveType::U64: return "<u8";
    case PrimitiveType::F16: return "<f2";
    case PrimitiveType::F32: return "<f4";
    case PrimitiveType::F64: return "<f8";
    case PrimitiveType::C64: return "<c8";
    case PrimitiveType::C128: return "<c16";
    default:
      if (IsF8OrF4(t)) return "|u1";
      return std::nullopt;
  }
}

std::string ShapeTuple(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".npy") == 0) base.resize(base.size() - 4);
  return base;
}


// Where a .npy file's bytes come from: a whole file in memory, or a zip member inflated only as
// far as it is read, so that a member whose declared size disagrees with its own header is
// refused before its data is inflated (a small archive can declare gigabytes).
class NpySource {
 public:
  virtual ~NpySource() = default;
  virtual uint64_t size() const = 0;                      // every byte it holds (or declares)
  virtual absl::Status Read(char* out, uint64_t n) = 0;  // the next n bytes; n <= what is left
  virtual absl::Status Finish() = 0;                      // after the last byte: integrity checks
  virtual const char* holds() const = 0;                  // "the file holds", for messages
};

class StringSource : public NpySource {
 public:
  explicit StringSource(const std::string& bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  absl::Status Read(char* out, uint64_t n) override {
    if (n == 0) return absl::OkStatus();  // `out` may be null (an array of no elements)
    std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
    return absl::OkStatus();
  }
  absl::Status Finish() override { return absl::OkStatus(); }
  const char* holds() const override { return "the file holds"; }

 private:
  const std::string& bytes_;
  uint64_t at_ = 0;
};

class ZipSource : public NpySource {
 public:
  explicit ZipSource(ZipMemberReader& reader) : reader_(reader) {}
  uint64_t size() const override { return reader_.size(); }
  absl::Status Read(char* out, uint64_t n) override { return reader_.Read(out, n); }
  absl::Status Finish() override { return reader_.Finish(); }
  const char* holds() const override { return "the zip directory declares for the member"; }

 private:
  ZipMemberReader& reader_;
};

// The header: magic, version, the dict. Leaves `src` at the first data byte; `header_end` is
// that byte's offset.
absl::StatusOr<Header> ReadHeader(NpySource& src, const std::string& where, uint64_t* header_end) {
  const uint64_t total = src.size();
  char prefix[12];
  if (total < kMagicSize + 4) return Bad(where, "not a .npy file (bad magic)");
  if (absl::Status s = src.Read(prefix, kMagicSize + 4); !s.ok()) return s;
  if (std::memcmp(prefix, kMagic, kMagicSize) != 0) return Bad(where, "not a .npy file (bad magic)");
  uint8_t major = static_cast<uint8_t>(prefix[6]), minor = static_cast<uint8_t>(prefix[7]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<uint8_t>(prefix[8]) | static_cast<uint8_t>(prefix[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (total < 12) return Bad(where, "truncated .npy header");
    if (absl::Status s = src.Read(prefix + 10, 2); !s.ok()) return s;
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(prefix[8 + i]);
    header_start = 12;
  } else {
    return Bad(where, absl::StrCat("unsupported .npy format version ", major, ".", minor));
  }
  if (header_len > kMaxHeaderSize) return Bad(where, absl::StrCat(".npy header of ", header_len, " bytes is too large"));
  if (total - header_start < header_len) return Bad(where, "truncated .npy header");
  // v1/v2 headers are latin-1 and v3 UTF-8; the keys and values numpy writes are ASCII either way.
  std::string header_text(header_len, '\0');
  if (absl::Status s = src.Read(header_text.data(), header_len); !s.ok()) return s;
  *header_end = header_start + header_len;
  return HeaderScanner(header_text, where).Parse();
}

// Scatters a column-major array's elements to their row-major places.
void FortranToRowMajor(const uint8_t* src, uint8_t* dst, const std::vector<int64_t>& dims, int64_t n, int size) {
  std::vector<int64_t> strides = RowMajorStrides(dims), idx(dims.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t to = 0;
    for (size_t d = 0; d < dims.size(); ++d) to += idx[d] * strides[d];
    std::memcpy(dst + to * size, src + k * size, size);
    for (size_t d = 0; d < dims.size(); ++d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

absl::StatusOr<NpyArray> ParseNpyFrom(NpySource& src, const std::string& where) {
  uint64_t data_start = 0;
  auto header = ReadHeader(src, where, &data_start);
  if (!header.ok()) return header.status();
  std::optional<DType> dt = ParseDescr(header->descr);
  if (!dt) return Bad(where, absl::StrCat("unsupported dtype '", header->descr, "'"));

  Shape shape(dt->type, header->shape);
  auto count = shape.ElementCount();
  if (!count.ok()) return Bad(where, absl::StrCat("shape ", ShapeTuple(header->shape), " is too large"));
  const uint64_t available = src.size() - data_start;
  // The header's byte count must be exactly what the source holds, checked before anything is
  // allocated or inflated: a huge shape or a huge declared size cannot make us allocate.
  const uint64_t needed_count = static_cast<uint64_t>(*count);
  if (needed_count > available / dt->item_size || needed_count * dt->item_size != available) {
    bool more = needed_count > available / dt->item_size || needed_count * dt->item_size > available;
    return Bad(where, absl::StrCat("shape ", ShapeTuple(header->shape), " of '", header->descr, "' needs ",
                                   more ? "more" : "fewer", " data bytes than the ", available, " ", src.holds(),
                                   more ? " (truncated?)" : ""));
  }
  auto lit = Literal::Create(shape);
  if (!lit.ok()) return Bad(where, std::string(lit.status().message()));

  uint8_t* dst = lit->untyped_data();
  const int64_t n = *count;
  const int size = dt->item_size;
  if (!header->fortran_order || shape.rank() <= 1) {
    if (absl::Status s = src.Read(reinterpret_cast<char*>(dst), available); !s.ok()) return s;
  } else {
    if (absl::Status s = CheckCanAllocate(available, "reordering a Fortran-order array"); !s.ok())
      return Bad(where, std::string(s.message()));
    std::string column_major(available, '\0');
    if (absl::Status s = src.Read(column_major.data(), available); !s.ok()) return s;
    FortranToRowMajor(reinterpret_cast<const uint8_t*>(column_major.data()), dst, header->shape, n, size);
  }
  if (absl::Status s = src.Finish(); !s.ok()) return s;
  if (dt->big_endian && size > 1) {
    // Complex numbers are two floats, each swapped on its own.
    int part = IsComplex(dt->type) ? size / 2 : size;
    for (int64_t k = 0; k < n * (size / part); ++k) {
      uint8_t* p = dst + k * part;
      for (int a = 0, b = part - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
    }
  }
  if (dt->type == PrimitiveType::PRED) {
    for (int64_t k = 0; k < n; ++k) dst[k] = dst[k] != 0;
  }
  NpyArray out;
  out.name = where;
  out.dtype = header->descr;
  out.literal = std::move(*lit);
  return out;
}

}  // namespace

absl::StatusOr<NpyArray> ParseNpy(const std::string& bytes, const std::string& where) {
  StringSource src(bytes);
  return ParseNpyFrom(src, where);
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  auto arr = ParseNpy(*bytes, path);
  if (!arr.ok()) return arr.status();
  arr->name = BaseName(path);
  return arr;
}

absl::StatusOr<std::vector<NpyArray>> ReadNpz(const std::string& path) {
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  return ParseNpz(*bytes, path);
}

absl::StatusOr<std::vector<NpyArray>> ParseNpz(const std::string& bytes, const std::string& path) {
  auto entries = ListZip(bytes, path);
  if (!entries.ok()) return entries.status();
  std::vector<NpyArray> arrays;
  for (const ZipEntry& e : *entries) {
    std::string where = absl::StrCat(path, ": member '", e.name, "'");
    if (e.name.size() <= 4 || e.name.compare(e.name.size() - 4, 4, ".npy") != 0) {
      return Bad(where, "is not a .npy array (an .npz holds only NAME.npy members)");
    }
    ZipMemberReader reader(bytes, e, where);
    ZipSource src(reader);
    auto arr = ParseNpyFrom(src, where);
    if (!arr.ok()) return arr.status();
    arr->name = e.name.substr(0, e.name.size() - 4);
    arrays.push_back(std::move(*arr));
  }
  return arrays;
}

absl::StatusOr<std::string> SerializeNpy(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write a ", shape.ToString(false), " as .npy (arrays only)"));
  }
  std::optional<std::string> descr = DescrFor(shape.element_type());
  if (!descr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no .npy dtype for element type ", std::string(PrimitiveTypeName(shape.element_type()))));
  }
  std::string dict = absl::StrCat("{'descr': '", *descr, "', 'fortran_order': False, 'shape': ",
                                  ShapeTuple(shape.dimensions()), ", }");
  // numpy pads magic + length + dict + '\n' to a multiple of 64 bytes so the data is aligned.
  size_t unpadded = kMagicSize + 2 + 2 + dict.size() + 1;
  bool v2 = false;
  size_t total = (unpadded + 63) / 64 * 64;
  if (total - kMagicSize - 4 > 0xFFFF) {
    v2 = true;
    total = (unpadded + 2 + 63) / 64 * 64;
  }
  size_t prefix = kMagicSize + 2 + (v2 ? 4 : 2);
  size_t header_len = total - prefix;
  dict.append(header_len - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  for (int i = 0; i < (v2 ? 4 : 2); ++i) out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xFF));
  out += dict;
  out.append(reinterpret_cast<const char*>(literal.untyped_data()), literal.size_bytes());
  return out;
}

absl::Status WriteNpz(const std::string& path,
                      const std::vector<std::pair<std::string, const Literal*>>& arrays) {
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto& [name, lit] : arrays) {
    auto bytes = SerializeNpy(*lit);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": array '", name, "': ", bytes.status().message()));
    }
    members.emplace_back(absl::StrCat(name, ".npy"), std::move(*bytes));
  }
  auto zip = WriteZip(members);
  if (!zip.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", zip.status().message()));
  return WriteFileAtomically(path, *zip);
}

absl::StatusOr<Literal> ReinterpretAs(const NpyArray& array, const Shape& shape) {
  const Literal& src = array.literal;
  const PrimitiveType from = src.element_type(), to = shape.element_type();
  auto mismatch = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("array '", array.name, "' (dtype ", array.dtype, ", shape ",
                                                   ShapeTuple(src.shape().dimensions()), ") does not fit ",
                                                   shape.ToString(false), ": ", why));
  };
  if (!shape.IsArray()) return mismatch("only array shapes can be read from .npy");
  if (src.shape().dimensions() != shape.dimensions()) {
    auto n = shape.ElementCount();
    if (n.ok() && *n != src.element_count()) {
      return mismatch(absl::StrCat("it has ", src.element_count(), " elements, the shape needs ", *n));
    }
    return mismatch("the dimensions differ");
  }
  // Which source types may hold which target types (bit patterns of equal width, or unpacked
  // sub-byte integers); everything else must match exactly.
  bool bits = false, range_check = false;
  if (from == to) {
  } else if (to == PrimitiveType::BF16 && (from == PrimitiveType::U16 || from == PrimitiveType::S16)) {
    bits = true;
  } else if (IsF8OrF4(to) && (from == PrimitiveType::U8 || from == PrimitiveType::S8)) {
    bits = true;
    range_check = BitWidth(to) < 8;
  } else if ((to == PrimitiveType::S4 || to == PrimitiveType::S2) && from == PrimitiveType::S8) {
    range_check = true;
  } else if ((to == PrimitiveType::U4 || to == PrimitiveType::U2) && from == PrimitiveType::U8) {
    range_check = true;
  } else {
    const char* hint = to == PrimitiveType::BF16 ? " (bf16 is read from uint16 bit patterns)"
                       : IsF8OrF4(to)             ? " (f8 types are read from uint8 bit patterns)"
                                                  : "";
    return mismatch(absl::StrCat("element type ", std::string(PrimitiveTypeName(from)), " is not ",
                                 std::string(PrimitiveTypeName(to)), hint));
  }
  auto lit = Literal::Create(shape);
  if (!lit.ok()) return lit.status();
  if (range_check) {
    int width = BitWidth(to);
    bool is_signed = IsSignedIntegral(to);
    for (int64_t i = 0; i < src.element_count(); ++i) {
      int64_t v = bits ? static_cast<int64_t>(src.GetRawBits(i)) : src.GetInt(i);
      int64_t lo = is_signed ? -(int64_t{1} << (width - 1)) : 0;
      int64_t hi = is_signed ? (int64_t{1} << (width - 1)) - 1 : (int64_t{1} << width) - 1;
      if (v < lo || v > hi) {
        return mismatch(absl::StrCat("element ", i, " (", v, ") does not fit in ", width, " bits"));
      }
    }
  }
  // Equal storage widths in every accepted case, so the bytes carry over as they are.
  if (src.size_bytes() > 0) std::memcpy(lit->untyped_data(), src.untyped_data(), src.size_bytes());
  return lit;
}

}  // namespace hloc
