// Dense linear algebra: the evaluator's solver custom calls (potrf/getrf/trsm, LAPACK's info and
// pivot rules), the CPU backend's LAPACK thunks against the evaluator for the cholesky and
// triangular-solve ops (every side/triangle/transpose/unit-diagonal combination) and the
// custom calls (f32/f64/c64, batched, column-major layouts), bad inputs, the GPU compiler's
// thunks (deviceless) and the GPU runtime on cholesky_solve, and every call on the GPU's batched
// and per-matrix paths against the evaluator and each other (skipped without a GPU).
#include <catch2/catch.hpp>

#include <complex>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <stdlib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/gpu/gpu_compiler.h"
#include "codegen/thunk_emitter.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "runtime/cpu/cpu_executable.h"
#include "runtime/executable/linalg_config.h"
#include "runtime/gpu/gpu_executable.h"

namespace hloc {
namespace {

const std::string kSource = HLOC_SOURCE_DIR;
const std::string kCorpus = std::string(HLOC_TESTS_DIR) + "/corpus";
using C = std::complex<double>;

// Inputs: 'g' general in [-1, 1], 'd' the same plus 4 on the diagonal (well-conditioned
// triangles), 's' Hermitian positive definite (M M^H + n I).
Literal Input(const Shape& shape, char kind, std::mt19937& rng) {
  Literal lit(shape);
  std::uniform_real_distribution<double> u(-1, 1);
  const bool cx = IsComplex(shape.element_type());
  const int64_t r = shape.rank(), n = shape.dimensions(r - 1), m = shape.dimensions(r - 2);
  const int64_t per = n * m, batch = per ? lit.element_count() / per : 0;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<C> x(per);
    for (C& v : x) v = C(u(rng), cx ? u(rng) : 0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        C v = x[i * n + j];
        if (kind == 's') {
          v = 0;
          for (int64_t k = 0; k < n; ++k) v += x[i * n + k] * std::conj(x[j * n + k]);
          if (i == j) v = C(v.real() + n, 0);
        } else if (kind == 'd' && i == j) {
          v += 4;
        }
        if (cx) lit.SetComplex(b * per + i * n + j, v);
        else lit.SetDouble(b * per + i * n + j, v.real());
      }
  }
  return lit;
}

Shape ShapeOf(const std::string& text) {
  absl::StatusOr<Shape> s = ParseShape(text);
  REQUIRE(s.ok());
  return *s;
}

// Row-major literals <-> the executable's host buffers (in its layouts).
std::vector<runtime::HostBuffer> ToHost(const std::vector<Literal>& args, const std::vector<runtime::ArrayShape>& shapes) {
  std::vector<runtime::HostBuffer> inputs;
  for (size_t i = 0; i < args.size() && i < shapes.size(); ++i) {
    runtime::HostBuffer h;
    h.shape = shapes[i];
    Shape s = args[i].shape();
    Layout l;
    l.minor_to_major = h.shape.minor_to_major;
    s.set_layout(l);
    h.data = codegen::LiteralBytesInLayout(args[i], s);
    inputs.push_back(std::move(h));
  }
  return inputs;
}
absl::StatusOr<std::vector<Literal>> FromHost(const std::vector<runtime::HostBuffer>& results) {
  std::vector<Literal> out;
  for (const runtime::HostBuffer& h : results) {
    absl::StatusOr<runtime::HostBuffer> rm = runtime::ToLayout(h, {});
    if (!rm.ok()) return rm.status();
    std::optional<PrimitiveType> t = ParsePrimitiveType(rm->shape.element_type);
    if (!t) return absl::InvalidArgumentError("bad result type");
    Literal lit(Shape(*t, rm->shape.dimensions));
    std::memcpy(lit.untyped_data(), rm->data.data(),
                std::min<size_t>(rm->data.size(), lit.element_count() * ByteWidth(*t)));
    out.push_back(std::move(lit));
  }
  return out;
}

absl::StatusOr<std::vector<Literal>> RunCpu(const std::string& text, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  codegen::cpu::CpuCompileOptions options;
  if (absl::Status s = codegen::cpu::LoadCpuProfileAndPipeline("cpu", {kSource + "/configs"}, {kSource + "/pipelines"},
                                                               options);
      !s.ok())
    return s;
  absl::StatusOr<runtime::Executable> exe = codegen::cpu::CpuCompiler::Compile(**m, options);
  if (!exe.ok()) return exe.status();
  // Through the .hlox form, so the thunks' configs survive serialization.
  absl::StatusOr<runtime::Executable> back = runtime::Executable::Deserialize(exe->Serialize(), "linalg_test");
  if (!back.ok()) return back.status();
  std::vector<runtime::HostBuffer> inputs = ToHost(args, back->parameter_shapes);
  runtime::CpuRunOptions ro;
  ro.num_threads = 2;
  absl::StatusOr<std::unique_ptr<runtime::CpuExecutable>> loaded = runtime::CpuExecutable::Load(std::move(*back), ro);
  if (!loaded.ok()) return loaded.status();
  absl::StatusOr<std::vector<runtime::HostBuffer>> results = (*loaded)->Run(inputs);
  if (!results.ok()) return results.status();
  return FromHost(*results);
}

absl::StatusOr<Literal> Eval(const std::string& text, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  return EvaluateModule(**m, args);
}

// Evaluator vs CPU on `text` with inputs of the given kinds (one char per parameter).
void CheckCpu(const std::string& text, const std::string& kinds, double tol = 1e-4) {
  INFO(text);
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  REQUIRE(m.ok());
  std::mt19937 rng(7);
  std::vector<Literal> args;
  const auto& params = (*m)->entry_computation()->parameters();
  for (size_t i = 0; i < params.size(); ++i) args.push_back(Input(params[i]->shape(), kinds[i], rng));
  absl::StatusOr<Literal> want = Eval(text, args);
  INFO((want.ok() ? "evaluated" : std::string(want.status().message())));
  REQUIRE(want.ok());
  absl::StatusOr<std::vector<Literal>> got = RunCpu(text, args);
  INFO((got.ok() ? "ran" : std::string(got.status().message())));
  REQUIRE(got.ok());
  std::vector<const Literal*> leaves = FlattenLeaves(*want);
  REQUIRE(leaves.size() == got->size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    CompareResult r = CompareLiterals((*got)[i], *leaves[i], tol);
    INFO("output " << i << ": " << r.message << " error " << r.error);
    CHECK(r.ok);
  }
}

TEST_CASE("triangular-solve on the CPU matches the evaluator for every flag", "[linalg][cpu]") {
  for (const char* type : {"f32", "f64", "c64"})
    for (bool left : {true, false})
      for (bool lower : {true, false})
        for (const char* trans : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"})
          for (bool unit : {false, true}) {
            const std::string b = left ? "[3,5,2]" : "[3,2,5]";
            CheckCpu(absl::StrCat("HloModule m\nENTRY e { a = ", type, "[3,5,5] parameter(0) b = ", type, b,
                                  " parameter(1)\n ROOT x = ", type, b, " triangular-solve(a, b), left_side=",
                                  left ? "true" : "false", ", lower=", lower ? "true" : "false",
                                  unit ? ", unit_diagonal=true" : "", ", transpose_a=", trans, " }"),
                     "dg");
          }
}

TEST_CASE("cholesky on the CPU matches the evaluator", "[linalg][cpu]") {
  for (const char* type : {"f32", "f64", "c64", "c128"})
    for (bool lower : {true, false})
      CheckCpu(absl::StrCat("HloModule m\nENTRY e { a = ", type, "[2,3,6,6] parameter(0)\n ROOT l = ", type,
                            "[2,3,6,6] cholesky(a), lower=", lower ? "true" : "false", " }"),
               "s");
  // Not positive definite: all NaN, as the evaluator.
  CheckCpu("HloModule m\nENTRY e { a = f32[2,4,4] parameter(0)\n ROOT l = f32[2,4,4] cholesky(a), lower=true }", "g");
}

// JAX's GPU lowering (column-major operands, tuple results) and its CPU one (lapack_*_ffi).
const char* kPotrf = R"(HloModule m
ENTRY e { a = T[3,5,5] parameter(0)
  c = (T[3,5,5]{1,2,0}, s32[3]{0}) custom-call(a), custom_call_target="TARGET", operand_layout_constraints={T[3,5,5]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={CONFIG}
  f = T[3,5,5] get-tuple-element(c), index=0
  i = s32[3] get-tuple-element(c), index=1
  ROOT t = (T[3,5,5], s32[3], T[3,5,5]) tuple(f, i, a) })";
const char* kGetrf = R"(HloModule m
ENTRY e { a = T[2,@M,@N] parameter(0)
  c = (T[2,@M,@N]{1,2,0}, s32[2,@K]{1,0}, s32[2]{0}) custom-call(a), custom_call_target="TARGET", operand_layout_constraints={T[2,@M,@N]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={}
  f = T[2,@M,@N] get-tuple-element(c), index=0
  p = s32[2,@K] get-tuple-element(c), index=1
  i = s32[2] get-tuple-element(c), index=2
  ROOT t = (T[2,@M,@N], s32[2,@K], s32[2]) tuple(f, p, i) })";

std::string Potrf(const std::string& type, const std::string& target, const std::string& config) {
  return absl::StrReplaceAll(kPotrf, {{"TARGET", target}, {"CONFIG", config}, {"T[", type + "["}});
}
std::string Getrf(const std::string& type, const std::string& target, int m, int n) {
  return absl::StrReplaceAll(kGetrf, {{"TARGET", target}, {"T[", type + "["}, {"@M", std::to_string(m)},
                                      {"@N", std::to_string(n)}, {"@K", std::to_string(std::min(m, n))}});
}

TEST_CASE("solver custom calls on the CPU match the evaluator", "[linalg][cpu]") {
  const std::pair<const char*, char> types[] = {{"f32", 's'}, {"f64", 'd'}, {"c64", 'c'}, {"c128", 'z'}};
  for (auto [type, letter] : types) {
    for (bool lower : {true, false}) {
      CheckCpu(Potrf(type, "cusolver_potrf_ffi", lower ? "lower = true" : "lower = false"), "s");
      CheckCpu(Potrf(type, absl::StrCat("lapack_", std::string(1, letter), "potrf_ffi"),
                     lower ? "uplo = 76 : ui8" : "uplo = 85 : ui8"),
               "s");
    }
    CheckCpu(Getrf(type, "cusolver_getrf_ffi", 5, 5), "g");
    CheckCpu(Getrf(type, absl::StrCat("lapack_", std::string(1, letter), "getrf_ffi"), 4, 6), "g");
    CheckCpu(Getrf(type, "cusolver_getrf_ffi", 6, 3), "g");
  }
}

TEST_CASE("the evaluator's potrf and getrf follow LAPACK's info and pivots", "[linalg][eval]") {
  // [[0, 1], [2, 3]]: the pivot of column 0 is row 2 (1-based), then U = [[2, 3], [0, 1]].
  Literal a(ShapeOf("f32[1,2,2]"));
  const double av[] = {0, 1, 2, 3};
  for (int i = 0; i < 4; ++i) a.SetDouble(i, av[i]);
  const std::string getrf1 =
      absl::StrReplaceAll(Getrf("f32", "cusolver_getrf_ffi", 2, 2), {{"[2,", "[1,"}, {"s32[2]", "s32[1]"}});
  absl::StatusOr<Literal> lu = Eval(getrf1, {a});
  INFO((lu.ok() ? "" : std::string(lu.status().message())));
  REQUIRE(lu.ok());
  std::vector<const Literal*> l = FlattenLeaves(*lu);
  CHECK(l[0]->GetDouble(0) == 2);
  CHECK(l[0]->GetDouble(1) == 3);
  CHECK(l[0]->GetDouble(2) == 0);  // l21 = 0 / 2
  CHECK(l[0]->GetDouble(3) == 1);
  CHECK(l[1]->GetInt(0) == 2);
  CHECK(l[1]->GetInt(1) == 2);
  CHECK(l[2]->GetInt(0) == 0);
  // A singular matrix: info = the first zero pivot, 1-based.
  for (int i = 0; i < 4; ++i) a.SetDouble(i, i < 2 ? 1 : 2);  // [[1, 1], [2, 2]]
  lu = Eval(getrf1, {a});
  REQUIRE(lu.ok());
  CHECK(FlattenLeaves(*lu)[2]->GetInt(0) == 2);
  // potrf of diag(4, -1, 9): info 2; the lower factor's first entry is 2.
  const std::string potrf = absl::StrReplaceAll(Potrf("f64", "cusolver_potrf_ffi", "lower = true"),
                                                {{"[3,5,5]", "[1,3,3]"}, {"s32[3]", "s32[1]"}});
  Literal d(ShapeOf("f64[1,3,3]"));
  d.SetDouble(0, 4);
  d.SetDouble(4, -1);
  d.SetDouble(8, 9);
  absl::StatusOr<Literal> f = Eval(potrf, {d});
  INFO((f.ok() ? "" : std::string(f.status().message())));
  REQUIRE(f.ok());
  CHECK(FlattenLeaves(*f)[0]->GetDouble(0) == 2);
  CHECK(FlattenLeaves(*f)[1]->GetInt(0) == 2);
  // The CPU's LAPACK says the same.
  absl::StatusOr<std::vector<Literal>> cpu = RunCpu(potrf, {d});
  REQUIRE(cpu.ok());
  CHECK((*cpu)[1].GetInt(0) == 2);
}

TEST_CASE("bad linear-algebra custom calls are errors, not crashes", "[linalg][eval][cpu]") {
  const std::string nonsquare = R"(HloModule m
ENTRY e { a = f32[2,4,3] parameter(0)
  ROOT c = (f32[2,4,3], s32[2]) custom-call(a), custom_call_target="cusolver_potrf_ffi", backend_config={lower = true} })";
  Literal a(ShapeOf("f32[2,4,3]"));
  absl::StatusOr<Literal> r = Eval(nonsquare, {a});
  REQUIRE(!r.ok());
  CHECK(std::string(r.status().message()).find("square") != std::string::npos);
  absl::StatusOr<std::vector<Literal>> cpu = RunCpu(nonsquare, {a});
  REQUIRE(!cpu.ok());
  CHECK(std::string(cpu.status().message()).find("square") != std::string::npos);
  const std::string bad_info = R"(HloModule m
ENTRY e { a = f32[2,4,4] parameter(0)
  ROOT c = (f32[2,4,4], s32[3]) custom-call(a), custom_call_target="cusolver_potrf_ffi", backend_config={lower = true} })";
  r = Eval(bad_info, {Literal(ShapeOf("f32[2,4,4]"))});
  REQUIRE(!r.ok());
  CHECK(std::string(r.status().message()).find("info") != std::string::npos);
  const std::string rank1 = R"(HloModule m
ENTRY e { a = f32[4] parameter(0)
  ROOT c = (f32[4], s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi" })";
  r = Eval(rank1, {Literal(ShapeOf("f32[4]"))});
  REQUIRE(!r.ok());
  CHECK(std::string(r.status().message()).find("rank >= 2") != std::string::npos);
  // A corrupted thunk config is refused when the executable loads.
  absl::StatusOr<runtime::LinalgConfig> c = runtime::LinalgConfig::Parse("op=potrf;type=f16;shapes=");
  CHECK(!c.ok());
  c = runtime::LinalgConfig::Parse("op=potrf;type=f32;shapes=f32:2,4:0,0");
  CHECK(!c.ok());
}

// The GPU runtime on `text`, its linalg thunks forced onto `path` (HLOC_GPU_LINALG, read when the
// executable loads): "batched", "per-matrix", or "auto" for the size rule.
absl::StatusOr<std::vector<Literal>> RunGpu(const std::string& text, const std::vector<Literal>& args,
                                            const char* path) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  codegen::gpu::GpuCompileOptions options;
  if (absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline("h200", {kSource + "/configs"}, {kSource + "/pipelines"},
                                                               options);
      !s.ok())
    return s;
  absl::StatusOr<runtime::Executable> exe = codegen::gpu::GpuCompiler::Compile(**m, options);
  if (!exe.ok()) return exe.status();
  setenv("HLOC_GPU_LINALG", path, 1);
  absl::StatusOr<std::unique_ptr<runtime::GpuExecutable>> loaded =
      runtime::GpuExecutable::Load(std::move(*exe), runtime::GpuRunOptions{});
  unsetenv("HLOC_GPU_LINALG");
  if (!loaded.ok()) return loaded.status();
  absl::StatusOr<std::vector<runtime::HostBuffer>> results =
      (*loaded)->Run(ToHost(args, (*loaded)->executable().parameter_shapes));
  if (!results.ok()) return results.status();
  return FromHost(*results);
}

// The evaluator vs the GPU's batched path, its per-matrix path, and the two against each other,
// on inputs of the given kinds (only output `only` when set). Returns false (after a warning)
// when there is no GPU.
bool CheckGpu(const std::string& text, const std::string& kinds, double tol = 1e-4,
              std::optional<size_t> only = std::nullopt) {
  if (absl::Status avail = runtime::GpuRuntimeAvailable(); !avail.ok()) {
    WARN("SKIPPED (no GPU): " << avail.message());
    return false;
  }
  INFO(text);
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  REQUIRE(m.ok());
  std::mt19937 rng(5);
  std::vector<Literal> args;
  const auto& params = (*m)->entry_computation()->parameters();
  for (size_t i = 0; i < params.size(); ++i) args.push_back(Input(params[i]->shape(), kinds[i], rng));
  absl::StatusOr<Literal> want = Eval(text, args);
  REQUIRE(want.ok());
  std::vector<const Literal*> leaves = FlattenLeaves(*want);
  std::map<std::string, std::vector<Literal>> got;
  for (const char* path : {"batched", "per-matrix", "auto"}) {
    absl::StatusOr<std::vector<Literal>> r = RunGpu(text, args, path);
    INFO(path << ": " << (r.ok() ? "ran" : std::string(r.status().message())));
    REQUIRE(r.ok());
    REQUIRE(r->size() == leaves.size());
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (only && i != *only) continue;
      CompareResult c = CompareLiterals((*r)[i], *leaves[i], tol);
      INFO(path << " vs the evaluator, output " << i << ": " << c.message << " error " << c.error);
      CHECK(c.ok);
    }
    got[path] = std::move(*r);
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (only && i != *only) continue;
    CompareResult c = CompareLiterals(got["batched"][i], got["per-matrix"][i], tol);
    INFO("batched vs per-matrix, output " << i << ": " << c.message << " error " << c.error);
    CHECK(c.ok);
  }
  return true;
}

// Batches of 3 and more (the batched path's territory) for every call and type.
TEST_CASE("potrf on the GPU: batched and per-matrix agree with the evaluator", "[linalg][gpu]") {
  for (const char* type : {"f32", "f64", "c64", "c128"})
    for (bool lower : {true, false}) {
      if (!CheckGpu(Potrf(type, "cusolver_potrf_ffi", lower ? "lower = true" : "lower = false"), "s")) return;
      CheckGpu(absl::StrCat("HloModule m\nENTRY e { a = ", type, "[2,3,6,6] parameter(0)\n ROOT l = ", type,
                            "[2,3,6,6] cholesky(a), lower=", lower ? "true" : "false", " }"),
               "s");
    }
  // Some matrices not positive definite: info > 0 from the custom call (what is left in a failed
  // factor is the library's business: JAX masks it), NaN from the op.
  CheckGpu(Potrf("f32", "cusolver_potrf_ffi", "lower = true"), "g", 1e-4, 1);
  CheckGpu("HloModule m\nENTRY e { a = f32[4,4,4] parameter(0)\n ROOT l = f32[4,4,4] cholesky(a), lower=false }", "g");
}

TEST_CASE("getrf on the GPU: batched and per-matrix agree with the evaluator", "[linalg][gpu]") {
  auto batch4 = [](const std::string& text) {
    return absl::StrReplaceAll(text, {{"[2,", "[4,"}, {"s32[2]", "s32[4]"}});
  };
  for (const char* type : {"f32", "f64", "c64", "c128"}) {
    if (!CheckGpu(batch4(Getrf(type, "cusolver_getrf_ffi", 5, 5)), "g")) return;
    CheckGpu(batch4(Getrf(type, "cusolver_getrf_ffi", 16, 16)), "g");
    CheckGpu(batch4(Getrf(type, "cusolver_getrf_ffi", 6, 3)), "g");  // not square: always per matrix
  }
}

TEST_CASE("triangular-solve on the GPU: batched and per-matrix agree for every flag", "[linalg][gpu]") {
  for (const char* type : {"f32", "f64", "c64", "c128"}) {
    const bool all = std::string(type) == "f32" || std::string(type) == "c64";  // every flag on one of each kind
    for (bool left : {true, false})
      for (bool lower : {true, false})
        for (const char* trans : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"})
          for (bool unit : {false, true}) {
            if (!all && (unit || std::string(trans) == "ADJOINT")) continue;
            const std::string b = left ? "[4,5,3]" : "[4,3,5]";
            if (!CheckGpu(absl::StrCat("HloModule m\nENTRY e { a = ", type, "[4,5,5] parameter(0) b = ", type, b,
                                       " parameter(1)\n ROOT x = ", type, b, " triangular-solve(a, b), left_side=",
                                       left ? "true" : "false", ", lower=", lower ? "true" : "false",
                                       unit ? ", unit_diagonal=true" : "", ", transpose_a=", trans, " }"),
                          "dg"))
              return;
          }
  }
}

std::string ReadCorpus(const std::string& name) {
  std::ifstream in(kCorpus + "/" + name);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_CASE("cholesky_solve compiles for the GPU into cuSOLVER and cuBLAS thunks", "[linalg][gpu]") {
  codegen::gpu::GpuCompileOptions options;
  REQUIRE(codegen::gpu::LoadGpuProfileAndPipeline("h200", {kSource + "/configs"}, {kSource + "/pipelines"}, options)
              .ok());
  const std::string text = ReadCorpus("public2/cholesky_solve.small.before_optimizations.txt");
  REQUIRE(!text.empty());
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  REQUIRE(m.ok());
  absl::StatusOr<runtime::Executable> exe = codegen::gpu::GpuCompiler::Compile(**m, options);
  INFO((exe.ok() ? "" : std::string(exe.status().message())));
  REQUIRE(exe.ok());
  std::map<std::string, int> targets;
  std::function<void(const runtime::ThunkSequence&)> walk = [&](const runtime::ThunkSequence& seq) {
    for (const runtime::Thunk& t : seq) {
      if (t.kind == runtime::ThunkKind::kCustomCall) ++targets[t.target];
      walk(t.body);
    }
  };
  walk(exe->thunks);
  CHECK(targets[runtime::kLinalgPotrfTarget] == 1);
  CHECK(targets[runtime::kLinalgGetrfTarget] == 1);
  CHECK(targets[runtime::kLinalgTrsmTarget] == 2);

  // On a GPU: run it and compare with XLA's outputs.
  absl::Status avail = runtime::GpuRuntimeAvailable();
  if (!avail.ok()) {
    WARN("SKIPPED (no GPU): " << avail.message());
    return;
  }
  absl::StatusOr<std::unique_ptr<runtime::GpuExecutable>> loaded =
      runtime::GpuExecutable::Load(std::move(*exe), runtime::GpuRunOptions{});
  INFO((loaded.ok() ? "" : std::string(loaded.status().message())));
  REQUIRE(loaded.ok());
  std::mt19937 rng(11);
  std::vector<Literal> in;
  for (const HloInstruction* p : (*m)->entry_computation()->parameters()) in.push_back(Input(p->shape(), 'g', rng));
  absl::StatusOr<Literal> want = Eval(text, in);
  REQUIRE(want.ok());
  absl::StatusOr<std::vector<runtime::HostBuffer>> got =
      (*loaded)->Run(ToHost(in, (*loaded)->executable().parameter_shapes));
  INFO((got.ok() ? "" : std::string(got.status().message())));
  REQUIRE(got.ok());
  absl::StatusOr<std::vector<Literal>> lits = FromHost(*got);
  REQUIRE(lits.ok());
  std::vector<const Literal*> leaves = FlattenLeaves(*want);
  REQUIRE(leaves.size() == lits->size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    CompareResult r = CompareLiterals((*lits)[i], *leaves[i], 1e-3);
    INFO("output " << i << ": " << r.message << " error " << r.error);
    CHECK(r.ok);
  }
}

}  // namespace
}  // namespace hloc
