// The runtime without the JIT: the .hlox format (round trip, truncated and corrupted files),
// the thread pool, the GEMM against a naive loop, and the sort/top-k runtime functions.
// runtime_jit_test.cc loads hand-built kernels through CpuExecutable.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "runtime/cpu/gemm.h"
#include "runtime/cpu/runtime_functions.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/executable/executable.h"

namespace hloc::runtime {
namespace {

Thunk KernelThunk(const std::string& name, std::vector<BufferSlice> args, int64_t parts = 1) {
  Thunk t;
  t.kind = ThunkKind::kKernel;
  t.name = name;
  t.kernel_name = name;
  t.arguments = std::move(args);
  t.written.assign(t.arguments.size(), false);
  if (!t.written.empty()) t.written.back() = true;
  t.launch.partitions = parts;
  return t;
}

// An executable touching every field, with a while whose body holds a conditional.
Executable RichExecutable() {
  Executable e;
  e.module_name = "rich";
  e.platform = "cpu";
  e.target = "x86_64-unknown-linux-gnu";
  e.profile = "cpu";
  e.code = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3};
  for (int i = 0; i < 4; ++i) {
    BufferAllocation a;
    a.index = i;
    a.size = 64 * (i + 1);
    e.allocations.push_back(a);
  }
  e.allocations[0].is_entry_parameter = true;
  e.allocations[0].parameter_number = 0;
  e.allocations[0].parameter_shape_index = {0, 1};
  e.allocations[1].is_constant = true;
  e.allocations[1].constant_data = {1, 2, 3, 4, 5};
  e.allocations[2].maybe_live_out = true;
  e.allocations[3].is_temp = true;
  ArrayShape f32{"f32", 4, {4, 2}, {0, 1}};
  e.parameter_shapes = {f32};
  e.result_shapes = {f32, ArrayShape{"pred", 1, {}, {}}};
  e.parameter_slices = {{0, 0, 32}};
  e.result_slices = {{2, 0, 32}, {3, 8, 1}};
  e.result_is_tuple = true;

  Thunk copy;
  copy.kind = ThunkKind::kCopy;
  copy.name = "copy.1";
  copy.arguments = {{0, 0, 32}, {2, 0, 32}};
  copy.written = {false, true};
  copy.size = 32;
  Thunk gemm;
  gemm.kind = ThunkKind::kGemm;
  gemm.name = "dot.2";
  gemm.arguments = {{0, 0, 32}, {1, 0, 32}, {2, 32, 16}};
  gemm.gemm.lhs_type = gemm.gemm.rhs_type = gemm.gemm.output_type = gemm.gemm.compute_type = "f32";
  gemm.gemm.m = 2;
  gemm.gemm.n = 2;
  gemm.gemm.k = 4;
  gemm.gemm.rhs_transposed = true;
  gemm.gemm.alpha = 0.5;
  gemm.gemm.beta = 0.25;
  gemm.gemm.epilogue = "BIAS_RELU";
  gemm.gemm.algorithm = 7;
  Thunk memset;
  memset.kind = ThunkKind::kMemset;
  memset.name = "broadcast.3";
  memset.arguments = {{3, 0, 16}};
  memset.memset_value = 0xdeadbeef;
  Thunk cond;
  cond.kind = ThunkKind::kConditional;
  cond.name = "conditional.4";
  cond.predicate = {3, 16, 4};
  cond.branches = {{KernelThunk("branch0", {{3, 0, 8}})}, {KernelThunk("branch1", {{3, 0, 8}}, 4)}, {}};
  Thunk loop;
  loop.kind = ThunkKind::kWhile;
  loop.name = "while.5";
  loop.predicate = {3, 8, 1};
  loop.trip_count = 10;
  loop.condition = {KernelThunk("loop_compare_fusion", {{3, 0, 8}, {3, 8, 1}})};
  loop.body = {KernelThunk("loop_add_fusion", {{3, 0, 8}}), cond};
  Thunk custom;
  custom.kind = ThunkKind::kCustomCall;
  custom.name = "custom-call.6";
  custom.target = "my_target";
  custom.backend_config = "{\"x\": 1}";
  custom.arguments = {{2, 0, 8}};
  Thunk seq;
  seq.kind = ThunkKind::kSequential;
  seq.name = "seq";
  seq.body = {custom};
  Thunk coll;
  coll.kind = ThunkKind::kCollective;
  coll.name = "all-reduce.7";
  coll.target = "all-reduce";
  coll.arguments = {{2, 0, 8}, {2, 8, 8}};
  coll.written = {false, true};
  e.thunks = {copy, gemm, memset, loop, seq, coll};
  e.hlo_text = "HloModule rich\n";
  e.buffer_assignment_text = "BufferAssignment:\n";
  return e;
}

TEST_CASE("hlox: serialize round trip keeps every field", "[runtime][serialize]") {
  Executable e = RichExecutable();
  const std::string bytes = e.Serialize();
  REQUIRE(bytes.substr(0, 4) == "HLOX");
  auto back = Executable::Deserialize(bytes, "rich.hlox");
  REQUIRE(back.ok());
  CHECK(back->Serialize() == bytes);
  CHECK(back->module_name == "rich");
  CHECK(back->code == e.code);
  CHECK(back->allocations[1].constant_data == e.allocations[1].constant_data);
  CHECK(back->allocations[0].parameter_shape_index == std::vector<int64_t>{0, 1});
  CHECK(back->result_shapes[0].minor_to_major == std::vector<int64_t>{0, 1});
  REQUIRE(back->thunks.size() == 6);
  const Thunk& loop = back->thunks[3];
  CHECK(loop.kind == ThunkKind::kWhile);
  CHECK(loop.trip_count == 10);
  REQUIRE(loop.body.size() == 2);
  REQUIRE(loop.body[1].branches.size() == 3);
  CHECK(loop.body[1].branches[1][0].launch.partitions == 4);
  CHECK(loop.body[1].branches[2].empty());
  CHECK(back->thunks[1].gemm.epilogue == "BIAS_RELU");
  CHECK(back->thunks[1].gemm.alpha == 0.5);
  CHECK(back->thunks[2].memset_value == 0xdeadbeef);
  CHECK(back->thunks[4].body[0].backend_config == "{\"x\": 1}");
}

TEST_CASE("hlox: thunk_sequence.txt in XLA's form", "[runtime][serialize]") {
  const std::string text = ThunkSequenceToString(RichExecutable().thunks);
  INFO(text);
  CHECK(text.find("001: kCopy       [source       | next=010 (4)] kCopy\n") != std::string::npos);
  CHECK(text.find("004: kWhile      [prev=003 (1) | sink        ]   \ncondition:\n    005: kKernel [source | sink] "
                  "loop_compare_fusion grid: [1, 1, 1] threads: [1, 1, 1]  shared_memory: 0 bytes\n  body:\n") !=
        std::string::npos);
  CHECK(text.find("branch_1:\n") != std::string::npos);
  CHECK(text.find("partitions: 4") != std::string::npos);
  CHECK(text.find("      No thunks.") != std::string::npos);
  CHECK(text.back() == '\n');
}

TEST_CASE("hlox: wrong magic, version and every truncation are errors", "[runtime][serialize]") {
  const std::string bytes = RichExecutable().Serialize();
  auto bad_magic = Executable::Deserialize("HLOY" + bytes.substr(4), "x.hlox");
  REQUIRE_FALSE(bad_magic.ok());
  CHECK(std::string(bad_magic.status().message()).find("does not start with \"HLOX\"") != std::string::npos);
  std::string v3 = bytes;
  v3[4] = 3;
  auto bad_version = Executable::Deserialize(v3, "x.hlox");
  REQUIRE_FALSE(bad_version.ok());
  CHECK(std::string(bad_version.status().message()).find("version 3") != std::string::npos);
  for (size_t len = 0; len < bytes.size(); ++len) {
    auto r = Executable::Deserialize(bytes.substr(0, len), "cut.hlox");
    INFO("length " << len);
    REQUIRE_FALSE(r.ok());
    if (len >= 8) CHECK(std::string(r.status().message()).find("cut.hlox: ") == 0);
  }
  auto cut = Executable::Deserialize(bytes.substr(0, bytes.size() / 2), "cut.hlox");
  CHECK(std::string(cut.status().message()).find("byte offset") != std::string::npos);
}

TEST_CASE("hlox: corrupted files never crash", "[runtime][serialize]") {
  const std::string bytes = RichExecutable().Serialize();
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int i = 0; i < 600; ++i) {
    std::string m = bytes;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const size_t at = 4 + rng() % (m.size() - 4);
      switch (rng() % 4) {
        case 0: m[at] = static_cast<char>(rng()); break;                 // random byte
        case 1: m[at] = static_cast<char>(0xff); break;                  // huge lengths
        case 2: m.erase(at, 1 + rng() % 8); break;                       // deletion
        default: m.insert(at, std::string(1 + rng() % 8, '\x7f')); break;  // insertion
      }
      if (m.size() < 8) m = bytes;
    }
    auto r = Executable::Deserialize(m, "fuzz.hlox");
    if (r.ok()) {
      ++accepted;
      CHECK(ValidateExecutable(*r, "fuzz").ok());
      (void)ThunkSequenceToString(r->thunks);
      // Every section is checksummed: only an edit that changed nothing (a byte set to the value
      // it had) gets through, not even one inside a string.
      CHECK(m == bytes);
    }
  }
  CHECK(accepted < 10);
}

TEST_CASE("hlox: a flipped byte in any section fails its checksum before it is decoded", "[runtime][serialize]") {
  Executable e = RichExecutable();
  e.code = std::vector<uint8_t>(64, 0x90);  // stands for machine code: any bytes decode as a blob
  const std::string bytes = e.Serialize();
  REQUIRE(Executable::Deserialize(bytes, "ok.hlox").ok());
  // The code section's payload: tag (4) and length (8) after "HLOX", the version and the header
  // section; find it by its bytes.
  const size_t code = bytes.find(std::string(64, '\x90'));
  REQUIRE(code != std::string::npos);
  std::string bad = bytes;
  bad[code + 17] ^= 0x04;
  auto r = Executable::Deserialize(bad, "flip.hlox");
  REQUIRE_FALSE(r.ok());
  INFO(r.status().message());
  CHECK(std::string(r.status().message()).find("flip.hlox: corrupt executable at byte offset") == 0);
  CHECK(std::string(r.status().message()).find("section 2 (code): checksum mismatch") != std::string::npos);
  // Every single-bit flip after the version is refused, wherever it lands.
  for (size_t at = 8; at < bytes.size(); at += 7) {
    bad = bytes;
    bad[at] ^= 0x10;
    INFO("byte " << at);
    CHECK_FALSE(Executable::Deserialize(bad, "flip.hlox").ok());
  }
}

TEST_CASE("hlox: slices outside their allocation are refused", "[runtime][serialize]") {
  Executable e = RichExecutable();
  e.thunks[0].arguments[1] = {2, 150, 64};  // allocation 2 has 192 bytes: 150 + 64 > 192
  auto r = Executable::Deserialize(e.Serialize(), "s.hlox");
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("outside allocation 2") != std::string::npos);
  e = RichExecutable();
  e.thunks[3].body[1].branches[0][0].arguments[0].allocation = 9;
  r = Executable::Deserialize(e.Serialize(), "s.hlox");
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("allocation 9") != std::string::npos);
}

TEST_CASE("thread pool: ParallelFor runs every index once, also nested", "[runtime][threads]") {
  ThreadPool pool(4);
  CHECK(pool.num_threads() == 4);
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor(1000, [&](int64_t i) { hits[i]++; });
  for (auto& h : hits) CHECK(h.load() == 1);
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(16, [&](int64_t i) { pool.ParallelFor(16, [&](int64_t j) { sum += i * 16 + j; }); });
  CHECK(sum.load() == 255 * 256 / 2);
  std::atomic<int> scheduled{0};
  for (int i = 0; i < 100; ++i) pool.Schedule([&] { scheduled++; });
  pool.ParallelFor(0, [](int64_t) { FAIL("no index"); });
  ThreadPool single(1);
  int64_t serial = 0;
  single.ParallelFor(10, [&](int64_t i) { serial += i; });
  CHECK(serial == 45);
  // The pool drains its queue before it stops.
  { ThreadPool drained(3); for (int i = 0; i < 50; ++i) drained.Schedule([&] { scheduled++; }); }
  while (scheduled.load() < 150) std::this_thread::yield();
  CHECK(scheduled.load() == 150);
}

// ---- GEMM ----------------------------------------------------------------------------------

int64_t SizeOfType(const std::string& t) {
  if (t == "f64") return 8;
  if (t == "f32" || t == "s32") return 4;
  if (t == "bf16" || t == "f16") return 2;
  return 1;
}

void FillRandom(const std::string& type, std::vector<uint8_t>& data, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t es = SizeOfType(type), n = static_cast<int64_t>(data.size()) / es;
  for (int64_t i = 0; i < n; ++i) {
    const float v = u(rng);
    uint8_t* p = &data[i * es];
    if (type == "f32") std::memcpy(p, &v, 4);
    if (type == "f64") { double d = v; std::memcpy(p, &d, 8); }
    if (type == "bf16") { uint16_t h = FloatToBf16(v); std::memcpy(p, &h, 2); }
    if (type == "f16") { uint16_t h = FloatToF16(v); std::memcpy(p, &h, 2); }
    if (type == "s8") { int8_t x = static_cast<int8_t>(rng() % 255 - 127); std::memcpy(p, &x, 1); }
    if (type == "s32") { int32_t x = static_cast<int32_t>(rng()); std::memcpy(p, &x, 4); }  // wraps
  }
}

double ValueAt(const std::string& type, const std::vector<uint8_t>& data, int64_t i) {
  const uint8_t* p = &data[i * SizeOfType(type)];
  if (type == "f32") { float v; std::memcpy(&v, p, 4); return v; }
  if (type == "f64") { double v; std::memcpy(&v, p, 8); return v; }
  if (type == "bf16") { uint16_t h; std::memcpy(&h, p, 2); return Bf16ToFloat(h); }
  if (type == "f16") { uint16_t h; std::memcpy(&h, p, 2); return F16ToFloat(h); }
  if (type == "s8") return static_cast<int8_t>(*p);
  int32_t v; std::memcpy(&v, p, 4); return v;
}

// Runs the blocked GEMM and the naive loop on the same random operands and compares.
void CheckGemm(GemmConfig g, double tolerance) {
  auto norm = NormalizeGemmConfig(g);
  REQUIRE(norm.ok());
  g = *norm;
  std::mt19937 rng(static_cast<uint32_t>(g.m * 131 + g.n * 7 + g.k + (g.lhs_transposed ? 1 : 0)));
  const int64_t a_rows = g.lhs_transposed ? g.k : g.m, b_rows = g.rhs_transposed ? g.n : g.k;
  std::vector<uint8_t> a(g.batch * g.lhs_batch_stride * SizeOfType(g.lhs_type) + 64);
  std::vector<uint8_t> b(g.batch * g.rhs_batch_stride * SizeOfType(g.rhs_type) + 64);
  const int64_t out_bytes = g.batch * g.output_batch_stride * SizeOfType(g.output_type);
  std::vector<uint8_t> c(std::max<int64_t>(out_bytes, g.n * SizeOfType(g.output_type)));
  std::vector<uint8_t> d1(out_bytes), d2;
  FillRandom(g.lhs_type, a, rng);
  FillRandom(g.rhs_type, b, rng);
  FillRandom(g.output_type, c, rng);
  FillRandom(g.output_type, d1, rng);
  d2 = d1;
  (void)a_rows;
  (void)b_rows;
  const bool with_c = g.epilogue.find("BIAS") != std::string::npos || g.beta != 0.0;
  REQUIRE(CheckGemmBounds(g, a.size(), b.size(), with_c ? static_cast<int64_t>(c.size()) : -1, d1.size()).ok());
  ThreadPool pool(3);
  RunGemm(g, a.data(), b.data(), with_c ? c.data() : nullptr, d1.data(), &pool);
  NaiveGemm(g, a.data(), b.data(), with_c ? c.data() : nullptr, d2.data());
  double err = 0, ref = 0;
  const int64_t n = out_bytes / SizeOfType(g.output_type);
  for (int64_t i = 0; i < n; ++i) {
    const double x = ValueAt(g.output_type, d1, i), y = ValueAt(g.output_type, d2, i);
    err += (x - y) * (x - y);
    ref += y * y;
  }
  INFO(g.lhs_type << " x " << g.rhs_type << " -> " << g.output_type << " m" << g.m << " n" << g.n << " k" << g.k
                  << " batch" << g.batch << " tA" << g.lhs_transposed << " tB" << g.rhs_transposed << " "
                  << g.epilogue << " alpha " << g.alpha << " beta " << g.beta);
  if (tolerance == 0) {
    CHECK(d1 == d2);
  } else {
    CHECK(std::sqrt(err) <= tolerance * std::sqrt(ref) + 1e-30);
  }
}

TEST_CASE("gemm: blocked matches naive for every type, transpose and epilogue", "[runtime][gemm]") {
  struct TypeCase {
    const char *a, *b, *out;
    double tol;
  };
  const TypeCase types[] = {{"f32", "f32", "f32", 1e-5}, {"f64", "f64", "f64", 1e-12}, {"bf16", "bf16", "bf16", 1e-2},
                            {"bf16", "bf16", "f32", 1e-5}, {"f16", "f16", "f16", 2e-3}, {"s8", "s8", "s32", 0},
                            {"s32", "s32", "s32", 0}};
  for (const TypeCase& tc : types) {
    for (int transposes = 0; transposes < 4; ++transposes) {
      GemmConfig g;
      g.lhs_type = tc.a;
      g.rhs_type = tc.b;
      g.output_type = tc.out;
      g.m = 37;
      g.n = 23;
      g.k = 45;
      g.batch = 2;
      g.lhs_transposed = transposes & 1;
      g.rhs_transposed = transposes & 2;
      CheckGemm(g, tc.tol);
    }
    for (const char* epilogue : {"DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "BIAS_GELU"}) {
      GemmConfig g;
      g.lhs_type = tc.a;
      g.rhs_type = tc.b;
      g.output_type = tc.out;
      g.m = 9;
      g.n = 17;
      g.k = 5;
      g.epilogue = epilogue;
      g.alpha = 1.5;
      g.beta = std::string(epilogue).find("BIAS") == std::string::npos ? 0.5 : 0.0;
      // Integers: the epilogue goes through double and saturates; compare with a tolerance.
      CheckGemm(g, tc.tol == 0 ? 1e-9 : tc.tol);
    }
  }
}

TEST_CASE("gemm: large blocked, strided and threaded f32", "[runtime][gemm]") {
  GemmConfig g;
  g.lhs_type = g.rhs_type = g.output_type = "f32";
  g.m = 131;
  g.n = 517;  // more than one column panel
  g.k = 300;  // more than one k block
  g.batch = 3;
  CheckGemm(g, 1e-5);
  g.lhs_leading_dim = 310;  // padded rows
  g.rhs_leading_dim = 600;
  g.output_leading_dim = 520;
  g.rhs_transposed = false;
  CheckGemm(g, 1e-5);
  g.k = 0;  // an empty contraction gives beta * C (+ nothing)
  g.beta = 1.0;
  CheckGemm(g, 1e-6);
}

TEST_CASE("gemm: bad configs are errors", "[runtime][gemm]") {
  GemmConfig g;
  g.lhs_type = "c64";
  g.rhs_type = g.output_type = "f32";
  CHECK_FALSE(NormalizeGemmConfig(g).ok());
  g.lhs_type = "s8";
  CHECK_FALSE(NormalizeGemmConfig(g).ok());  // mixed int and float operands
  g.lhs_type = "f32";
  g.epilogue = "SWISH";
  CHECK_FALSE(NormalizeGemmConfig(g).ok());
  g.epilogue = "DEFAULT";
  g.m = g.n = g.k = 4;
  auto n = NormalizeGemmConfig(g);
  REQUIRE(n.ok());
  CHECK(CheckGemmBounds(*n, 64, 64, -1, 64).ok());
  CHECK_FALSE(CheckGemmBounds(*n, 60, 64, -1, 64).ok());
  n->epilogue = "BIAS";
  CHECK_FALSE(CheckGemmBounds(*n, 64, 64, -1, 64).ok());
}

TEST_CASE("half and bfloat conversions round to nearest even", "[runtime][gemm]") {
#if defined(__FLT16_MAX__)
  for (float f : {0.f, -0.f, 1.f, -2.5f, 65504.f, 1e-7f, 6.1e-5f, 3.14159f, 1e5f, -1e-8f}) {
    _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    INFO(f);
    CHECK(FloatToF16(f) == bits);
    CHECK(F16ToFloat(bits) == static_cast<float>(h));
  }
#endif
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const bool nan = (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0;
    if (!nan && FloatToF16(F16ToFloat(static_cast<uint16_t>(b))) != b) FAIL("f16 bits " << b << " do not round-trip");
  }
  CHECK(Bf16ToFloat(FloatToBf16(1.00390625f)) == 1.0f);  // tie to even
  CHECK(std::isnan(Bf16ToFloat(FloatToBf16(std::nanf("")))));
}

// ---- sort / top-k ----------------------------------------------------------------------------

extern "C" void LessF32(char* result, char** ops) {
  float a, b;
  std::memcpy(&a, ops[0], 4);
  std::memcpy(&b, ops[1], 4);
  *result = a < b;
}
extern "C" void GreaterF32(char* result, char** ops) {
  float a, b;
  std::memcpy(&a, ops[0], 4);
  std::memcpy(&b, ops[1], 4);
  *result = a > b;
}

TEST_CASE("__hloc_cpu_sort sorts keys with values over [outer, n, inner]", "[runtime][sort]") {
  const int64_t outer = 3, n = 50, inner = 4;
  std::mt19937 rng(7);
  std::vector<float> keys(outer * n * inner);
  std::vector<int32_t> vals(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = static_cast<float>(rng() % 10);  // many ties: stability shows
    vals[i] = static_cast<int32_t>(i);
  }
  std::vector<float> k0 = keys;
  std::vector<int32_t> v0 = vals;
  char* arrays[2] = {reinterpret_cast<char*>(keys.data()), reinterpret_cast<char*>(vals.data())};
  int32_t sizes[2] = {4, 4};
  __hloc_cpu_sort(outer, n, inner, 2, arrays, sizes, 1, &LessF32);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      std::vector<std::pair<float, int32_t>> row;
      for (int64_t e = 0; e < n; ++e) row.push_back({k0[(o * n + e) * inner + in], v0[(o * n + e) * inner + in]});
      std::stable_sort(row.begin(), row.end(), [](auto& x, auto& y) { return x.first < y.first; });
      for (int64_t e = 0; e < n; ++e) {
        CHECK(keys[(o * n + e) * inner + in] == row[e].first);
        CHECK(vals[(o * n + e) * inner + in] == row[e].second);
      }
    }
  }
}

TEST_CASE("__hloc_cpu_topk takes the k largest with their indices", "[runtime][sort]") {
  const int64_t batch = 4, n = 100, k = 7;
  std::mt19937 rng(9);
  std::vector<float> values(batch * n);
  for (float& v : values) v = static_cast<float>(rng() % 30) - 15.f;
  std::vector<float> out(batch * k);
  std::vector<int32_t> idx(batch * k);
  __hloc_cpu_topk(batch, n, k, 4, reinterpret_cast<const char*>(values.data()), reinterpret_cast<char*>(out.data()),
                  idx.data(), &GreaterF32);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t x, int32_t y) { return values[b * n + x] > values[b * n + y]; });
    for (int64_t i = 0; i < k; ++i) {
      CHECK(idx[b * k + i] == order[i]);
      CHECK(out[b * k + i] == values[b * n + order[i]]);
    }
  }
}

}  // namespace
}  // namespace hloc::runtime
