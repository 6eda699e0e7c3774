// The GPU runtime's self-checks (see gpu_selftest.h).
#include "runtime/gpu/gpu_selftest.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/cpu/gemm.h"
#include "runtime/gpu/cuda_driver.h"
#include "runtime/gpu/gpu_executable.h"

namespace hloc::runtime::gpu {
namespace {

#define ST_RETURN_IF_ERROR(expr) \
  do {                           \
    absl::Status _st = (expr);   \
    if (!_st.ok()) return _st;   \
  } while (0)

// Three kernels, one pointer parameter per argument (the compiler's convention); sm_80 PTX is
// JIT-compiled for whatever newer GPU runs it. Checked with `ptxas -arch=sm_90`.
constexpr char kPtx[] = R"PTX(.version 8.0
.target sm_80
.address_size 64

// out[i] = 2 * in[i] + 1 for i < 1000
.visible .entry hloc_selftest_affine(.param .u64 p_in, .param .u64 p_out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_in];
  ld.param.u64 %rd2, [p_out];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  setp.ge.s32 %p1, %r4, 1000;
  @%p1 bra DONE;
  mul.wide.s32 %rd5, %r4, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.f32 %f1, [%rd6];
  fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000;
  add.s64 %rd7, %rd4, %rd5;
  st.global.f32 [%rd7], %f2;
DONE:
  ret;
}

// x[i] += 1 for i < 1000
.visible .entry hloc_selftest_add_one(.param .u64 p_x)
{
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p_x];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  setp.ge.s32 %p1, %r4, 1000;
  @%p1 bra DONE;
  mul.wide.s32 %rd3, %r4, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd4], %f2;
DONE:
  ret;
}

// *counter -= 1; *pred = *counter > 0 (one thread)
.visible .entry hloc_selftest_countdown(.param .u64 p_counter, .param .u64 p_pred)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p_counter];
  ld.param.u64 %rd2, [p_pred];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  ld.global.s32 %r1, [%rd3];
  sub.s32 %r2, %r1, 1;
  st.global.s32 [%rd3], %r2;
  setp.gt.s32 %p1, %r2, 0;
  selp.u32 %r3, 1, 0, %p1;
  st.global.u8 [%rd4], %r3;
  ret;
}
)PTX";

ArrayShape Arr(const std::string& type, std::vector<int64_t> dims) {
  ArrayShape s;
  s.element_type = type;
  s.element_size_in_bytes = type == "f32" || type == "s32" ? 4 : type == "bf16" || type == "f16" ? 2 : type == "f64" ? 8 : 1;
  s.dimensions = std::move(dims);
  for (int64_t i = static_cast<int64_t>(s.dimensions.size()) - 1; i >= 0; --i) s.minor_to_major.push_back(i);
  return s;
}

struct Builder {
  Executable exe;
  explicit Builder(const std::string& name) {
    exe.module_name = name;
    exe.platform = "gpu";
    exe.target = "sm_80";
    exe.profile = "selftest";
  }
  BufferSlice Alloc(int64_t bytes) {
    BufferAllocation a;
    a.index = static_cast<int64_t>(exe.allocations.size());
    a.size = bytes;
    exe.allocations.push_back(a);
    return BufferSlice{a.index, 0, bytes};
  }
  BufferSlice Param(const ArrayShape& s) {
    BufferSlice slice = Alloc(s.byte_size());
    BufferAllocation& a = exe.allocations.back();
    a.is_entry_parameter = true;
    a.parameter_number = static_cast<int64_t>(exe.parameter_shapes.size());
    exe.parameter_shapes.push_back(s);
    exe.parameter_slices.push_back(slice);
    return slice;
  }
  BufferSlice Output(const ArrayShape& s) {
    BufferSlice slice = Alloc(s.byte_size());
    exe.allocations.back().maybe_live_out = true;
    exe.result_shapes.push_back(s);
    exe.result_slices.push_back(slice);
    exe.result_is_tuple = exe.result_shapes.size() > 1;
    return slice;
  }
  BufferSlice Temp(int64_t bytes) {
    BufferSlice slice = Alloc(bytes);
    exe.allocations.back().is_temp = true;
    return slice;
  }
};

Thunk Kernel(const std::string& name, std::vector<BufferSlice> args, std::vector<bool> written, int64_t n = 1000) {
  Thunk t;
  t.kind = ThunkKind::kKernel;
  t.name = name;
  t.kernel_name = name;
  t.arguments = std::move(args);
  t.written = std::move(written);
  t.launch.block_x = 128;
  t.launch.grid_x = (n + 127) / 128;
  return t;
}

Thunk Memset(BufferSlice slice, uint32_t value) {
  Thunk t;
  t.kind = ThunkKind::kMemset;
  t.name = "memset";
  t.arguments = {slice};
  t.written = {true};
  t.memset_value = value;
  return t;
}

Thunk Copy(BufferSlice from, BufferSlice to) {
  Thunk t;
  t.kind = ThunkKind::kCopy;
  t.name = "copy";
  t.arguments = {from, to};
  t.written = {false, true};
  t.size = from.size;
  return t;
}

HostBuffer Host(const ArrayShape& s, const void* data) {
  HostBuffer b;
  b.shape = s;
  const auto* p = static_cast<const uint8_t*>(data);
  b.data.assign(p, p + s.byte_size());
  return b;
}

std::vector<float> Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<float> AsFloats(const HostBuffer& b) {
  std::vector<float> out;
  if (b.shape.element_type == "bf16") {
    for (size_t i = 0; i + 1 < b.data.size(); i += 2) out.push_back(Bf16ToFloat(static_cast<uint16_t>(b.data[i] | (b.data[i + 1] << 8))));
  } else {
    out.resize(b.data.size() / 4);
    std::memcpy(out.data(), b.data.data(), out.size() * 4);
  }
  return out;
}

// ||got - want|| / ||want|| within tol, else an error naming the worst element.
absl::Status Compare(const std::string& what, const std::vector<float>& got, const std::vector<float>& want, double tol) {
  if (got.size() != want.size()) {
    return absl::InternalError(absl::StrCat(what, ": ", got.size(), " elements, expected ", want.size()));
  }
  double diff = 0, norm = 0, worst = -1;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= worst) || std::isnan(d)) worst = std::isnan(d) ? INFINITY : d, at = i;
    diff += d * d;
    norm += static_cast<double>(want[i]) * want[i];
  }
  const double rel = std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
  if (!(rel <= tol)) {
    return absl::InternalError(absl::StrFormat("%s: relative error %.3g > %.3g; worst element %d: got %.6g, want %.6g",
                                               what, rel, tol, at, got[at], want[at]));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<GpuExecutable>> Load(const Builder& b, GpuRunOptions options = {}) {
  Executable exe = b.exe;
  if (exe.code.empty()) exe.code.assign(kPtx, kPtx + sizeof(kPtx) - 1);
  return GpuExecutable::Load(std::move(exe), options);
}

absl::Status KernelCheck() {
  Builder b("selftest_kernel");
  const ArrayShape s = Arr("f32", {1000});
  BufferSlice in = b.Param(s), out = b.Output(s);
  b.exe.thunks.push_back(Kernel("hloc_selftest_affine", {in, out}, {false, true}));
  absl::StatusOr<std::unique_ptr<GpuExecutable>> exe = Load(b);
  if (!exe.ok()) return exe.status();
  std::vector<float> x = Random(1000, 1), want(1000);
  for (int i = 0; i < 1000; ++i) want[i] = 2 * x[i] + 1;
  absl::StatusOr<std::vector<HostBuffer>> r = (*exe)->Run({Host(s, x.data())});
  if (!r.ok()) return r.status();
  return Compare("affine kernel", AsFloats((*r)[0]), want, 1e-6);
}

absl::Status MemoryCheck() {
  Builder b("selftest_memory");
  const ArrayShape s = Arr("f32", {1000}), bytes = Arr("u8", {7});
  BufferSlice in = b.Param(s), out = b.Output(s), small = b.Output(bytes);
  b.exe.thunks.push_back(Copy(in, out));
  b.exe.thunks.push_back(Memset(BufferSlice{out.allocation, 400, 400}, 0x40400000u));  // 3.0f over [100, 200)
  b.exe.thunks.push_back(Memset(small, 0x04030201u));                                    // bytes 1 2 3 4 1 2 3
  b.exe.thunks.push_back(Memset(BufferSlice{out.allocation, 3996, 4}, 0u));             // uniform byte: last = 0
  absl::StatusOr<std::unique_ptr<GpuExecutable>> exe = Load(b);
  if (!exe.ok()) return exe.status();
  std::vector<float> x = Random(1000, 2), want = x;
  for (int i = 100; i < 200; ++i) want[i] = 3.0f;
  want[999] = 0;
  absl::StatusOr<std::vector<HostBuffer>> r = (*exe)->Run({Host(s, x.data())});
  if (!r.ok()) return r.status();
  ST_RETURN_IF_ERROR(Compare("copy + memset", AsFloats((*r)[0]), want, 0));
  const std::vector<uint8_t> want_bytes = {1, 2, 3, 4, 1, 2, 3};
  if ((*r)[1].data != want_bytes) return absl::InternalError("memset of 7 bytes with pattern 0x04030201 is wrong");
  return absl::OkStatus();
}

// A GEMM executable and its host reference (runtime/cpu/gemm.h's NaiveGemm).
absl::Status GemmCheck(const std::string& type, bool tf32, double tol) {
  const char* epilogues[] = {"DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "BIAS_GELU"};
  for (int e = 0; e < 6; ++e) {
    GemmConfig g;
    g.lhs_type = g.rhs_type = g.output_type = type;
    g.compute_type = "f32";
    g.batch = 2, g.m = 40, g.n = 24, g.k = 36;
    g.lhs_transposed = e % 2 == 1;
    g.rhs_transposed = (e / 2) % 2 == 1;
    g.epilogue = epilogues[e];
    g.alpha = e == 2 ? 0.5 : 1.0;
    const bool bias = g.epilogue.rfind("BIAS", 0) == 0;
    const ArrayShape sa = Arr(type, {2, g.lhs_transposed ? g.k : g.m, g.lhs_transposed ? g.m : g.k});
    const ArrayShape sb = Arr(type, {2, g.rhs_transposed ? g.n : g.k, g.rhs_transposed ? g.k : g.n});
    const ArrayShape sc = Arr(type, {g.n}), sd = Arr(type, {2, g.m, g.n});
    Builder b(absl::StrCat("selftest_gemm_", type, "_", g.epilogue));
    Thunk t;
    t.kind = ThunkKind::kGemm;
    t.name = b.exe.module_name;
    t.gemm = g;
    t.arguments = {b.Param(sa), b.Param(sb)};
    if (bias) t.arguments.push_back(b.Param(sc));
    t.arguments.push_back(b.Output(sd));
    t.written.assign(t.arguments.size(), false);
    t.written.back() = true;
    b.exe.thunks.push_back(t);
    GpuRunOptions o;
    o.allow_tf32 = tf32;
    o.autotune = false;
    absl::StatusOr<std::unique_ptr<GpuExecutable>> exe = Load(b, o);
    if (!exe.ok()) return exe.status();
    // Inputs in the type, and the reference from exactly those values.
    std::vector<HostBuffer> args;
    for (const ArrayShape* s : {&sa, &sb, &sc}) {
      if (s == &sc && !bias) continue;
      int64_t n = 1;
      for (int64_t d : s->dimensions) n *= d;
      std::vector<float> v = Random(static_cast<size_t>(n), 10 + args.size() + e);
      HostBuffer h;
      h.shape = *s;
      if (type == "bf16") {
        for (float f : v) {
          const uint16_t bits = FloatToBf16(f);
          h.data.push_back(static_cast<uint8_t>(bits)), h.data.push_back(static_cast<uint8_t>(bits >> 8));
        }
      } else {
        h.data.resize(v.size() * 4);
        std::memcpy(h.data.data(), v.data(), h.data.size());
      }
      args.push_back(std::move(h));
    }
    absl::StatusOr<GemmConfig> norm = NormalizeGemmConfig(g);
    if (!norm.ok()) return norm.status();
    // The reference in f32 output (the GPU rounds once to the output type).
    GemmConfig ref_config = *norm;
    std::vector<float> a = AsFloats(args[0]), bb = AsFloats(args[1]), c = bias ? AsFloats(args[2]) : std::vector<float>();
    ref_config.lhs_type = ref_config.rhs_type = ref_config.output_type = "f32";
    std::vector<float> want(static_cast<size_t>(2 * g.m * g.n));
    NaiveGemm(ref_config, a.data(), bb.data(), bias ? c.data() : nullptr, want.data());
    absl::StatusOr<std::vector<HostBuffer>> r = (*exe)->Run(args);
    if (!r.ok()) return r.status();
    ST_RETURN_IF_ERROR(Compare(absl::StrCat(type, tf32 ? " (tf32)" : "", " GEMM ", g.epilogue,
                                            g.lhs_transposed ? " lhs^T" : "", g.rhs_transposed ? " rhs^T" : ""),
                               AsFloats((*r)[0]), want, tol));
  }
  return absl::OkStatus();
}

absl::Status ControlFlowCheck() {
  Builder b("selftest_control_flow");
  const ArrayShape s = Arr("f32", {1000}), i32 = Arr("s32", {}), pred = Arr("pred", {}), four = Arr("f32", {4});
  BufferSlice counter = b.Param(i32), x = b.Param(s), p = b.Param(pred), index = b.Param(i32);
  BufferSlice d1 = b.Output(s), d2 = b.Output(s), d3 = b.Output(four), d4 = b.Output(four);
  BufferSlice flag = b.Temp(1), zero_counter = b.Temp(4);
  b.exe.thunks.push_back(Copy(x, d1));
  b.exe.thunks.push_back(Copy(x, d2));
  Thunk w;
  w.kind = ThunkKind::kWhile;
  w.name = "while_countdown";
  w.condition.push_back(Kernel("hloc_selftest_countdown", {counter, flag}, {true, true}, 1));
  w.predicate = flag;
  w.body.push_back(Kernel("hloc_selftest_add_one", {d1}, {true}));
  b.exe.thunks.push_back(w);
  // A known trip count skips the condition (which here would stop at once).
  Thunk k = w;
  k.name = "while_known_trip_count";
  k.condition = {Memset(zero_counter, 0), Kernel("hloc_selftest_countdown", {zero_counter, flag}, {true, true}, 1)};
  k.body = {Kernel("hloc_selftest_add_one", {d2}, {true})};
  k.trip_count = 3;
  b.exe.thunks.push_back(k);
  Thunk c;
  c.kind = ThunkKind::kConditional;
  c.name = "conditional_pred";
  c.predicate = p;
  c.branches = {{Memset(d3, 0x3F800000u)}, {Memset(d3, 0x40000000u)}};  // true: 1.0, false: 2.0
  b.exe.thunks.push_back(c);
  Thunk ci = c;
  ci.name = "conditional_index";
  ci.predicate = index;
  ci.branches = {{Memset(d4, 0x41200000u)}, {Memset(d4, 0x41A00000u)}, {Memset(d4, 0x41F00000u)}};  // 10, 20, 30
  b.exe.thunks.push_back(ci);
  absl::StatusOr<std::unique_ptr<GpuExecutable>> exe = Load(b);
  if (!exe.ok()) return exe.status();
  std::vector<float> xs = Random(1000, 3);
  for (auto [count, pv, iv] : {std::tuple<int32_t, uint8_t, int32_t>{5, 1, 1}, {1, 0, 7}}) {
    absl::StatusOr<std::vector<HostBuffer>> r =
        (*exe)->Run({Host(i32, &count), Host(s, xs.data()), Host(pred, &pv), Host(i32, &iv)});
    if (!r.ok()) return r.status();
    std::vector<float> want1 = xs, want2 = xs;
    for (float& v : want1) v += static_cast<float>(std::max(count - 1, 0));  // the body runs count - 1 times
    for (float& v : want2) v += 3;
    ST_RETURN_IF_ERROR(Compare(absl::StrCat("while with counter ", count), AsFloats((*r)[0]), want1, 1e-6));
    ST_RETURN_IF_ERROR(Compare("while with known trip count 3", AsFloats((*r)[1]), want2, 1e-6));
    ST_RETURN_IF_ERROR(Compare(absl::StrCat("conditional on pred ", int(pv)), AsFloats((*r)[2]),
                               std::vector<float>(4, pv ? 1.f : 2.f), 0));
    ST_RETURN_IF_ERROR(Compare(absl::StrCat("conditional on index ", iv), AsFloats((*r)[3]),
                               std::vector<float>(4, iv == 0 ? 10.f : iv == 1 ? 20.f : 30.f), 0));
  }
  return absl::OkStatus();
}

absl::Status GraphCheck() {
  // body: tmp = 2x + 1; out = 2 tmp + 1 = 4x + 3; D = tmp[20x50] x B[50x10] (cuBLASLt in the graph).
  for (bool enabled : {true, false}) {
    Builder b(absl::StrCat("selftest_graph_", enabled ? "on" : "off"));
    const ArrayShape s = Arr("f32", {1000}), sb = Arr("f32", {50, 10}), sd = Arr("f32", {20, 10});
    BufferSlice x = b.Param(s), mb = b.Param(sb), out = b.Output(s), d = b.Output(sd), tmp = b.Temp(4000);
    Thunk cb;
    cb.kind = ThunkKind::kCommandBuffer;
    cb.name = "command_buffer";
    cb.body.push_back(Kernel("hloc_selftest_affine", {x, tmp}, {false, true}));
    cb.body.push_back(Kernel("hloc_selftest_affine", {tmp, out}, {false, true}));
    Thunk g;
    g.kind = ThunkKind::kGemm;
    g.name = "gemm_in_graph";
    g.gemm.lhs_type = g.gemm.rhs_type = g.gemm.output_type = g.gemm.compute_type = "f32";
    g.gemm.m = 20, g.gemm.n = 10, g.gemm.k = 50;
    g.arguments = {tmp, mb, d};
    g.written = {false, false, true};
    cb.body.push_back(g);
    for (const Thunk& t : cb.body) cb.arguments.insert(cb.arguments.end(), t.arguments.begin(), t.arguments.end());
    cb.written.assign(cb.arguments.size(), true);
    b.exe.thunks.push_back(cb);
    GpuRunOptions o;
    o.command_buffers.enabled = enabled;
    o.allow_tf32 = false;
    absl::StatusOr<std::unique_ptr<GpuExecutable>> exe = Load(b, o);
    if (!exe.ok()) return exe.status();
    for (uint64_t seed : {4, 5, 6}) {  // the first run captures, the others replay on new inputs
      std::vector<float> xs = Random(1000, seed), bs = Random(500, seed + 100), want(1000), t(1000), wd(200);
      for (int i = 0; i < 1000; ++i) t[i] = 2 * xs[i] + 1, want[i] = 4 * xs[i] + 3;
      for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 10; ++j) {
          double acc = 0;
          for (int p = 0; p < 50; ++p) acc += static_cast<double>(t[i * 50 + p]) * bs[p * 10 + j];
          wd[i * 10 + j] = static_cast<float>(acc);
        }
      absl::StatusOr<std::vector<HostBuffer>> r = (*exe)->Run({Host(s, xs.data()), Host(sb, bs.data())});
      if (!r.ok()) return r.status();
      const std::string what = absl::StrCat("command buffer ", enabled ? "(CUDA graph)" : "(off)", " run with seed ", seed);
      ST_RETURN_IF_ERROR(Compare(what + ": kernels", AsFloats((*r)[0]), want, 1e-6));
      ST_RETURN_IF_ERROR(Compare(what + ": GEMM", AsFloats((*r)[1]), wd, 1e-5));
    }
    const std::string described = (*exe)->Describe();
    const std::string expect = enabled ? "1 captured into CUDA graphs" : "command buffers: off";
    if (described.find(expect) == std::string::npos) {
      return absl::InternalError(absl::StrCat("expected '", expect, "' in the executable's description:\n", described));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ConvCheck();      // gpu_selftest_more.cc
absl::Status OomCheck();
absl::Status AutotuneCheck();

std::vector<std::string> GpuSelfTestNames() {
  return {"kernel", "memory", "gemm_f32", "gemm_bf16", "gemm_tf32", "while", "graph", "conv", "oom", "autotune"};
}

absl::Status RunGpuSelfTest(const std::string& name) {
  static const std::map<std::string, std::function<absl::Status()>> checks = {
      {"kernel", KernelCheck},
      {"memory", MemoryCheck},
      {"gemm_f32", [] { return GemmCheck("f32", false, 1e-5); }},
      {"gemm_bf16", [] { return GemmCheck("bf16", false, 1e-2); }},
      {"gemm_tf32", [] { return GemmCheck("f32", true, 5e-3); }},
      {"while", ControlFlowCheck},
      {"graph", GraphCheck},
      {"conv", ConvCheck},
      {"oom", OomCheck},
      {"autotune", AutotuneCheck}};
  auto it = checks.find(name);
  if (it == checks.end()) return absl::NotFoundError(absl::StrCat("no GPU self-test named '", name, "'"));
  if (absl::Status s = GpuRuntimeAvailable(); !s.ok()) return s;
  return it->second();
}

}  // namespace hloc::runtime::gpu
