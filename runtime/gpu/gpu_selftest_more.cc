// More GPU self-checks (see gpu_selftest.h): cuDNN convolution, out-of-memory recovery and
// the autotune cache.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/gpu/autotune_cache.h"
#include "runtime/gpu/cuda_driver.h"
#include "runtime/gpu/gpu_executable.h"
#include "runtime/gpu/gpu_selftest.h"

namespace hloc::runtime::gpu {
namespace {

ArrayShape F32(std::vector<int64_t> dims, std::vector<int64_t> m2m = {}) {
  ArrayShape s;
  s.element_type = "f32";
  s.element_size_in_bytes = 4;
  s.dimensions = std::move(dims);
  if (m2m.empty())
    for (int64_t i = static_cast<int64_t>(s.dimensions.size()) - 1; i >= 0; --i) m2m.push_back(i);
  s.minor_to_major = std::move(m2m);
  return s;
}

struct Mini {
  Executable exe;
  explicit Mini(const std::string& name) {
    exe.module_name = name;
    exe.platform = "gpu";
    exe.target = "sm_80";
    exe.profile = "selftest";
  }
  BufferSlice Alloc(int64_t bytes, int kind, const ArrayShape* s) {  // kind: 0 param, 1 output, 2 temp
    BufferAllocation a;
    a.index = static_cast<int64_t>(exe.allocations.size());
    a.size = bytes;
    BufferSlice slice{a.index, 0, bytes};
    if (kind == 0) {
      a.is_entry_parameter = true;
      a.parameter_number = static_cast<int64_t>(exe.parameter_shapes.size());
      exe.parameter_shapes.push_back(*s);
      exe.parameter_slices.push_back(slice);
    } else if (kind == 1) {
      a.maybe_live_out = true;
      exe.result_shapes.push_back(*s);
      exe.result_slices.push_back(slice);
    } else {
      a.is_temp = true;
    }
    exe.allocations.push_back(a);
    return slice;
  }
};

std::vector<float> Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

HostBuffer Host(ArrayShape s, const std::vector<float>& v) {
  HostBuffer h;
  s.minor_to_major.clear();  // row-major host data; the runtime lays it out
  h.shape = s;
  h.data.resize(v.size() * 4);
  std::memcpy(h.data.data(), v.data(), h.data.size());
  return h;
}

std::string TensorJson(const ArrayShape& s) {
  return absl::StrCat("{\"type\":\"f32\",\"dims\":[", absl::StrJoin(s.dimensions, ","), "],\"minor_to_major\":[",
                      absl::StrJoin(s.minor_to_major, ","), "]}");
}

}  // namespace

// One convolution thunk of `kind` (cudnn.h's config) on NHWC input, OHWI filter (dims H, W,
// I, O stored O-major: cuDNN's NHWC filter), a 3x3 window with pad 1 and `stride`, checked
// against a host loop; with `one_d`, NWC input, a 3-wide window dilated by 2 with pad 2 (the
// 1-D convolutions cuDNN sees padded to 4-D). The graph-API path must be the one that ran
// (unless HLOC_CUDNN_GRAPH=0 turns it off, or for bias_activation_forward, which it does not build).
absl::Status ConvKindCheck(const std::string& kind, int64_t stride, bool one_d = false) {
  const int64_t N = 2, H = one_d ? 1 : 8, W = one_d ? 16 : 8, C = 4, O = 8, KH = one_d ? 1 : 3, KW = 3;
  const int64_t dil = one_d ? 2 : 1, pad_h = one_d ? 0 : 1, pad_w = dil;
  const int64_t P = (H + 2 * pad_h - (KH - 1) - 1) / stride + 1, Q = (W + 2 * pad_w - dil * (KW - 1) - 1) / stride + 1;
  const bool fused = kind == "bias_activation_forward";
  const ArrayShape in = one_d ? F32({N, W, C}) : F32({N, H, W, C}),
                   filter = one_d ? F32({KW, C, O}, {1, 0, 2}) : F32({KH, KW, C, O}, {2, 1, 0, 3}),
                   out = one_d ? F32({N, Q, O}) : F32({N, P, Q, O}), bias = F32({O});
  const std::vector<float> x = Random(N * H * W * C, 21), w = Random(KH * KW * C * O, 22),
                           dy = Random(N * P * Q * O, 24), bv = Random(O, 23);
  // The host reference, row-major logical indices (H is 1 in 1-D), in double.
  std::vector<double> y(N * P * Q * O, 0.0), dx(N * H * W * C, 0.0), dw(KH * KW * C * O, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oy = 0; oy < P; ++oy)
      for (int64_t ox = 0; ox < Q; ++ox)
        for (int64_t ky = 0; ky < KH; ++ky)
          for (int64_t kx = 0; kx < KW; ++kx) {
            const int64_t iy = oy * stride + ky - pad_h, ix = ox * stride + kx * dil - pad_w;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            for (int64_t c = 0; c < C; ++c)
              for (int64_t o = 0; o < O; ++o) {
                const int64_t xi = ((n * H + iy) * W + ix) * C + c, wi = ((ky * KW + kx) * C + c) * O + o,
                              yi = ((n * P + oy) * Q + ox) * O + o;
                y[yi] += static_cast<double>(x[xi]) * w[wi];
                dx[xi] += static_cast<double>(dy[yi]) * w[wi];
                dw[wi] += static_cast<double>(x[xi]) * dy[yi];
              }
          }
  std::vector<double> want = kind == "backward_input" ? dx : kind == "backward_filter" ? dw : y;
  if (fused)
    for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(0.0, want[i] + bv[i % O]);
  // Thunk arguments in the kind's role order (cudnn.h); the last is the result.
  std::vector<std::pair<std::string, std::pair<const ArrayShape*, const std::vector<float>*>>> roles;
  if (kind == "backward_input") {
    roles = {{"output", {&out, &dy}}, {"filter", {&filter, &w}}, {"input", {&in, nullptr}}};
  } else if (kind == "backward_filter") {
    roles = {{"input", {&in, &x}}, {"output", {&out, &dy}}, {"filter", {&filter, nullptr}}};
  } else {
    roles = {{"input", {&in, &x}}, {"filter", {&filter, &w}}};
    if (fused) roles.push_back({"bias", {&bias, &bv}});
    roles.push_back({"output", {&out, nullptr}});
  }
  const std::string name = absl::StrCat("selftest_conv", one_d ? "1d_" : "_", kind, "_s", stride);
  Mini m(name);
  Thunk t;
  t.kind = ThunkKind::kConvolution;
  t.name = name;
  t.target = kind == "forward"           ? "__cudnn$convForward"
             : kind == "backward_input"  ? "__cudnn$convBackwardInput"
             : kind == "backward_filter" ? "__cudnn$convBackwardFilter"
                                         : "__cudnn$convBiasActivationForward";
  std::vector<HostBuffer> args;
  std::vector<std::string> names;
  for (size_t i = 0; i < roles.size(); ++i) {
    const bool result = i + 1 == roles.size();
    const ArrayShape& s = *roles[i].second.first;
    t.arguments.push_back(m.Alloc(s.byte_size(), result ? 1 : 0, &s));
    if (!result) args.push_back(Host(s, *roles[i].second.second));
    names.push_back(absl::StrCat("\"", roles[i].first, "\""));
  }
  t.written.assign(t.arguments.size(), false);
  t.written.back() = true;
  auto win = [&](int64_t size, int64_t pad, int64_t d) {
    return absl::StrCat("{\"size\":", size, ",\"stride\":", stride, ",\"pad_low\":", pad, ",\"pad_high\":", pad,
                        ",\"lhs_dilation\":1,\"rhs_dilation\":", d, ",\"reversal\":false}");
  };
  const std::string dims =
      one_d ? "\"input_batch_dim\":0,\"input_feature_dim\":2,\"input_spatial_dims\":[1],"
              "\"kernel_input_feature_dim\":1,\"kernel_output_feature_dim\":2,\"kernel_spatial_dims\":[0],"
              "\"output_batch_dim\":0,\"output_feature_dim\":2,\"output_spatial_dims\":[1],"
            : "\"input_batch_dim\":0,\"input_feature_dim\":3,\"input_spatial_dims\":[1,2],"
              "\"kernel_input_feature_dim\":2,\"kernel_output_feature_dim\":3,\"kernel_spatial_dims\":[0,1],"
              "\"output_batch_dim\":0,\"output_feature_dim\":3,\"output_spatial_dims\":[1,2],";
  const std::string windows = one_d ? win(KW, pad_w, dil) : absl::StrCat(win(KH, pad_h, 1), ",", win(KW, pad_w, dil));
  t.backend_config = absl::StrCat(
      "{\"kind\":\"", kind, "\",\"input\":", TensorJson(in), ",\"filter\":", TensorJson(filter),
      ",\"output\":", TensorJson(out), ",", dims, "\"window\":[", windows, "],\"feature_group_count\":1,\"batch_group_count\":1,\"conv_result_scale\":1,"
      "\"side_input_scale\":0,\"activation\":\"", fused ? "kRelu" : "kNone",
      "\",\"leakyrelu_alpha\":0,\"arguments\":[", absl::StrJoin(names, ","), "]}");
  m.exe.thunks.push_back(t);
  GpuRunOptions o;
  o.allow_tf32 = false;
  absl::StatusOr<std::unique_ptr<GpuExecutable>> exe = GpuExecutable::Load(m.exe, o);
  if (!exe.ok()) return exe.status();
  absl::StatusOr<std::vector<HostBuffer>> r = (*exe)->Run(args);
  if (!r.ok()) return r.status();
  // Results come back in their layout (the filter's is O-major): make them row-major.
  absl::StatusOr<HostBuffer> row_major = ToLayout((*r)[0], {});
  if (!row_major.ok()) return row_major.status();
  std::vector<float> got(row_major->data.size() / 4);
  std::memcpy(got.data(), row_major->data.data(), got.size() * 4);
  if (got.size() != want.size()) return absl::InternalError(absl::StrCat(name, ": the result has the wrong size"));
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) diff += (got[i] - want[i]) * (got[i] - want[i]), norm += want[i] * want[i];
  const double rel = std::sqrt(diff / std::max(norm, 1e-30));
  if (!(rel < 1e-4)) {  // FMA math (no TF32); Winograd/FFT algorithms round a little differently
    return absl::InternalError(absl::StrFormat("%s: relative error %.3g against the host loop (%s)", name, rel,
                                               (*exe)->Describe()));
  }
  const char* env = std::getenv("HLOC_CUDNN_GRAPH");
  const bool graph_on = env == nullptr || std::string(env) != "0";
  const std::string d = (*exe)->Describe();
  if (graph_on && !fused && d.find("algorithm by graph eng") == std::string::npos) {
    return absl::InternalError(absl::StrCat(name, ": the graph-API path did not run the convolution:\n", d));
  }
  return absl::OkStatus();
}

absl::Status ConvCheck() {
  for (const auto& [kind, stride] : std::vector<std::pair<std::string, int64_t>>{
           {"forward", 1}, {"bias_activation_forward", 1}, {"forward", 2}, {"backward_input", 2},
           {"backward_filter", 2}, {"backward_input", 1}, {"backward_filter", 1}}) {
    if (absl::Status s = ConvKindCheck(kind, stride); !s.ok()) return s;
  }
  // 1-D, dilated (eqx_dilated_conv1d): every kind, stride 1.
  for (const char* kind : {"forward", "bias_activation_forward", "backward_input", "backward_filter"}) {
    if (absl::Status s = ConvKindCheck(kind, 1, /*one_d=*/true); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status OomCheck() {
#if !HLOC_HAVE_CUDA
  return GpuRuntimeAvailable();
#else
  absl::StatusOr<const CudaContext*> ctx = GetCudaContext(0);
  if (!ctx.ok()) return ctx.status();
  const CudaDriver& d = *(*ctx)->driver;
  if (absl::Status s = (*ctx)->MakeCurrent(); !s.ok()) return s;
  size_t free_before = 0, free_after = 0, total = 0;
  if (absl::Status s = HLOC_CU(d, cuMemGetInfo, "reading free memory", &free_before, &total); !s.ok()) return s;
  Mini m("selftest_oom");
  const ArrayShape small = F32({1000});
  m.Alloc(64 << 20, 2, nullptr);                               // taken first, must be given back
  m.Alloc(static_cast<int64_t>(total) * 2, 2, nullptr);        // cannot be had
  m.Alloc(small.byte_size(), 1, &small);
  absl::StatusOr<std::unique_ptr<GpuExecutable>> exe = GpuExecutable::Load(m.exe, {});
  if (exe.ok()) return absl::InternalError("allocating twice the device's memory succeeded");
  if (exe.status().code() != absl::StatusCode::kResourceExhausted ||
      exe.status().message().find("cannot allocate allocation #1") == std::string::npos) {
    return absl::InternalError(absl::StrCat("expected a ResourceExhausted error naming allocation #1, got: ",
                                            exe.status().ToString()));
  }
  if (absl::Status s = HLOC_CU(d, cuMemGetInfo, "reading free memory", &free_after, &total); !s.ok()) return s;
  if (free_after + (16 << 20) < free_before) {
    return absl::InternalError(absl::StrFormat("after the failed load %.1f MiB less is free: memory was not given back",
                                               (free_before - free_after) / 1048576.0));
  }
  // The process goes on: a normal executable loads and runs.
  if (absl::Status s = RunGpuSelfTest("kernel"); !s.ok()) {
    return absl::InternalError(absl::StrCat("after the out-of-memory error a normal run failed: ", s.message()));
  }
  return absl::OkStatus();
#endif
}

absl::Status AutotuneCheck() {
  const std::string path = absl::StrCat("/tmp/hloc_autotune_selftest_", static_cast<long>(getpid()), ".txt");
  std::remove(path.c_str());
  auto make = [&]() {
    Mini m("selftest_autotune");
    const ArrayShape a = F32({512, 256}), b = F32({256, 384}), out = F32({512, 384});
    Thunk t;
    t.kind = ThunkKind::kGemm;
    t.name = "autotuned_gemm";
    t.gemm.lhs_type = t.gemm.rhs_type = t.gemm.output_type = t.gemm.compute_type = "f32";
    t.gemm.m = 512, t.gemm.n = 384, t.gemm.k = 256;
    t.arguments = {m.Alloc(a.byte_size(), 0, &a), m.Alloc(b.byte_size(), 0, &b), m.Alloc(out.byte_size(), 1, &out)};
    t.written = {false, false, true};
    m.exe.thunks.push_back(t);
    return m.exe;
  };
  GpuRunOptions o;
  o.autotune = true;
  o.autotune_cache = path;
  absl::StatusOr<std::unique_ptr<GpuExecutable>> first = GpuExecutable::Load(make(), o);
  if (!first.ok()) return first.status();
  const std::string d1 = (*first)->Describe();
  if (d1.find("algorithm by autotune") == std::string::npos) {
    std::remove(path.c_str());
    // One candidate only: nothing to time, nothing cached. Say so rather than pass silently.
    return absl::InternalError(absl::StrCat("the GEMM was not autotuned:\n", d1));
  }
  AutotuneCache fresh;
  if (absl::Status s = fresh.Load(path); !s.ok()) return s;
  if (fresh.size() < 1) return absl::InternalError(absl::StrCat("the autotune cache file ", path, " holds no entry"));
  absl::StatusOr<std::unique_ptr<GpuExecutable>> second = GpuExecutable::Load(make(), o);
  std::remove(path.c_str());
  if (!second.ok()) return second.status();
  const std::string d2 = (*second)->Describe();
  if (d2.find("algorithm by cache") == std::string::npos) {
    return absl::InternalError(absl::StrCat("the second load did not take the cached algorithm:\n", d2));
  }
  return absl::OkStatus();
}

}  // namespace hloc::runtime::gpu
