// cuDNN graph (backend) API convolutions (see cudnn_graph.h). The descriptors are built with
// the C backend API (cudnn_graph.h of cuDNN 9), loaded from libcudnn.so.9 with dlopen like the
// legacy entry points; the cuDNN frontend (C++ header library XLA uses) is a wrapper around
// exactly these calls.
#include "runtime/gpu/cudnn_graph.h"
#include "runtime/gpu/graph_timer.h"

#if HLOC_HAVE_CUDA
#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

// The plan's and graph's HANDLE attributes are deprecated in 9.x (a DEVICEPROP may replace
// them) but still honoured, and they are what ties a plan to our device.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace hloc::runtime::gpu {
namespace {

#define HLOC_CUDNN_BACKEND_ENTRIES(X)                                                                 \
  X(cudnnGetErrorString) X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor)             \
  X(cudnnBackendFinalize) X(cudnnBackendSetAttribute) X(cudnnBackendGetAttribute) X(cudnnBackendExecute)

struct BackendLib {
#define HLOC_BK_MEMBER(name) decltype(&::name) name = nullptr;
  HLOC_CUDNN_BACKEND_ENTRIES(HLOC_BK_MEMBER)
#undef HLOC_BK_MEMBER
  decltype(&::cudnnGetLastErrorString) cudnnGetLastErrorString = nullptr;  // optional (9.0+)
};

absl::StatusOr<const BackendLib*> Backend() {
  static absl::StatusOr<const BackendLib*>* loaded = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    absl::StatusOr<void*> lib = OpenLibrary({"libcudnn.so.9", "libcudnn.so"}, "cuDNN 9");
    if (!lib.ok()) {
      loaded = new absl::StatusOr<const BackendLib*>(lib.status());
      return;
    }
    auto* l = new BackendLib();
    std::vector<std::string> missing;
#define HLOC_BK_LOAD(name)                                             \
  l->name = reinterpret_cast<decltype(l->name)>(dlsym(*lib, #name)); \
  if (l->name == nullptr) missing.push_back(#name);
    HLOC_CUDNN_BACKEND_ENTRIES(HLOC_BK_LOAD)
#undef HLOC_BK_LOAD
    l->cudnnGetLastErrorString =
        reinterpret_cast<decltype(l->cudnnGetLastErrorString)>(dlsym(*lib, "cudnnGetLastErrorString"));
    if (!missing.empty()) {
      loaded = new absl::StatusOr<const BackendLib*>(
          absl::UnavailableError(absl::StrCat("cuDNN lacks the backend API: ", absl::StrJoin(missing, ", "))));
      return;
    }
    loaded = new absl::StatusOr<const BackendLib*>(l);
  });
  return *loaded;
}

absl::Status Check(const BackendLib& l, cudnnStatus_t s, const char* fn, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const char* text = l.cudnnGetErrorString(s);
  std::string msg = absl::StrCat(fn, " failed with ", text ? text : "?", " (", static_cast<int>(s), ") while ", what);
  if (l.cudnnGetLastErrorString != nullptr) {
    char detail[512] = {0};
    l.cudnnGetLastErrorString(detail, sizeof(detail));
    if (detail[0] != 0) absl::StrAppend(&msg, ": ", detail);
  }
  if (s == CUDNN_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(msg);
  if (s == CUDNN_STATUS_BAD_PARAM || s == CUDNN_STATUS_NOT_SUPPORTED) return absl::UnimplementedError(msg);
  return absl::InternalError(msg);
}
#define HLOC_BK(lib, fn, what, ...) Check((lib), (lib).fn(__VA_ARGS__), #fn, (what))
#define HLOC_BK_RETURN(expr)          \
  do {                                \
    absl::Status _s = (expr);         \
    if (!_s.ok()) return _s;          \
  } while (0)

// Knob types by number, for the plan text (stable across runs of one cuDNN version: the cache
// key carries the version).
std::string PlanText(int64_t engine, std::vector<std::pair<int64_t, int64_t>> knobs) {
  std::sort(knobs.begin(), knobs.end());
  std::vector<std::string> parts;
  for (const auto& [k, v] : knobs) parts.push_back(absl::StrCat("k", k, "=", v));
  return absl::StrCat("eng", engine, "{", absl::StrJoin(parts, ","), "}");
}

}  // namespace

struct CudnnGraphConv::Impl {
  const BackendLib* l = nullptr;
  std::vector<cudnnBackendDescriptor_t> owned;  // destroyed in reverse order of creation
  cudnnBackendDescriptor_t graph = nullptr;
  std::vector<cudnnBackendDescriptor_t> plans;  // parallel to infos_
  // The variant pack of the last call's pointers (a thunk runs on the same buffers every time).
  cudnnBackendDescriptor_t pack = nullptr;
  CUdeviceptr pack_key[6] = {0, 0, 0, 0, 0, 0};
  static constexpr int64_t kUids[5] = {1, 2, 3, 4, 5};  // x, w, y, bias, side
  static constexpr int64_t kVirtualUids[3] = {10, 11, 12};
  int64_t pack_tensors = 3;  // x, w, y; + bias (+ side) for bias_activation_forward

  ~Impl() {
    if (l == nullptr) return;
    if (pack != nullptr) l->cudnnBackendDestroyDescriptor(pack);
    for (auto it = owned.rbegin(); it != owned.rend(); ++it) l->cudnnBackendDestroyDescriptor(*it);
  }
  absl::StatusOr<cudnnBackendDescriptor_t> Make(cudnnBackendDescriptorType_t type, const std::string& what) {
    cudnnBackendDescriptor_t d = nullptr;
    HLOC_BK_RETURN(HLOC_BK(*l, cudnnBackendCreateDescriptor, what, type, &d));
    owned.push_back(d);
    return d;
  }
  absl::Status Set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                   int64_t count, const void* values, const std::string& what) {
    return HLOC_BK(*l, cudnnBackendSetAttribute, what, d, name, type, count, values);
  }
  absl::Status Finalize(cudnnBackendDescriptor_t d, const std::string& what) {
    return HLOC_BK(*l, cudnnBackendFinalize, what, d);
  }
  absl::StatusOr<cudnnBackendDescriptor_t> Tensor(const GraphConvTensor& t, int64_t uid, cudnnDataType_t type,
                                                  int64_t alignment, const char* name, bool is_virtual = false) {
    const std::string what = absl::StrCat("describing the ", name, " tensor");
    absl::StatusOr<cudnnBackendDescriptor_t> d = Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
    if (!d.ok()) return d.status();
    const int64_t n = static_cast<int64_t>(t.dims.size());
    HLOC_BK_RETURN(Set(*d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, what));
    HLOC_BK_RETURN(Set(*d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, n, t.dims.data(), what));
    HLOC_BK_RETURN(Set(*d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n, t.strides.data(), what));
    HLOC_BK_RETURN(Set(*d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what));
    HLOC_BK_RETURN(Set(*d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what));
    if (is_virtual) HLOC_BK_RETURN(Set(*d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, what));
    HLOC_BK_RETURN(Finalize(*d, what));
    return d;
  }
  // A pointwise operation y = mode(alpha1 * x [, alpha2 * b]) computed in `prec`.
  absl::StatusOr<cudnnBackendDescriptor_t> Pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                                                     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                                                     cudnnBackendDescriptor_t y, double alpha1, double alpha2,
                                                     const char* name) {
    const std::string what = absl::StrCat("describing the ", name, " operation");
    absl::StatusOr<cudnnBackendDescriptor_t> pw = Make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
    if (!pw.ok()) return pw.status();
    HLOC_BK_RETURN(Set(*pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what));
    HLOC_BK_RETURN(Set(*pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, what));
    HLOC_BK_RETURN(Finalize(*pw, what));
    absl::StatusOr<cudnnBackendDescriptor_t> op = Make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
    if (!op.ok()) return op.status();
    HLOC_BK_RETURN(Set(*op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &*pw, what));
    HLOC_BK_RETURN(Set(*op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what));
    if (b != nullptr) HLOC_BK_RETURN(Set(*op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what));
    HLOC_BK_RETURN(Set(*op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what));
    if (prec == CUDNN_DATA_DOUBLE) {
      HLOC_BK_RETURN(Set(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_DOUBLE, 1, &alpha1, what));
      if (b != nullptr) HLOC_BK_RETURN(Set(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_DOUBLE, 1, &alpha2, what));
    } else {
      const float a1 = static_cast<float>(alpha1), a2 = static_cast<float>(alpha2);
      HLOC_BK_RETURN(Set(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &a1, what));
      if (b != nullptr) HLOC_BK_RETURN(Set(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &a2, what));
    }
    HLOC_BK_RETURN(Finalize(*op, what));
    return op;
  }
  absl::Status AddBiasActivation(const GraphConvProblem& p, cudnnBackendDescriptor_t conv_out,
                                 cudnnBackendDescriptor_t y, std::vector<cudnnBackendDescriptor_t>& ops);
};

// The pointwise tail of a fused call: t = conv_out (+ side_scale * z), t + bias, then the
// activation into y (the legacy cudnnConvolutionBiasActivationForward's order).
absl::Status CudnnGraphConv::Impl::AddBiasActivation(const GraphConvProblem& p, cudnnBackendDescriptor_t conv_out,
                                                     cudnnBackendDescriptor_t y,
                                                     std::vector<cudnnBackendDescriptor_t>& ops) {
  Impl& im = *this;
  const cudnnDataType_t compute = p.type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const bool relu = p.activation == "kRelu";
  cudnnBackendDescriptor_t t = conv_out;
  if (p.has_side) {
    absl::StatusOr<cudnnBackendDescriptor_t> z = im.Tensor(p.y, Impl::kUids[4], p.type, p.alignment, "side input");
    if (!z.ok()) return z.status();
    absl::StatusOr<cudnnBackendDescriptor_t> sum =
        im.Tensor(p.y, Impl::kVirtualUids[1], compute, p.alignment, "side-input sum", true);
    if (!sum.ok()) return sum.status();
    absl::StatusOr<cudnnBackendDescriptor_t> add =
        im.Pointwise(CUDNN_POINTWISE_ADD, compute, t, *z, *sum, 1.0, p.side_scale, "side-input add");
    if (!add.ok()) return add.status();
    ops.push_back(*add);
    t = *sum;
  }
  absl::StatusOr<cudnnBackendDescriptor_t> b = im.Tensor(p.bias, Impl::kUids[3], p.type, p.alignment, "bias");
  if (!b.ok()) return b.status();
  // The last operation is always the activation (an identity one for kNone), as XLA builds it:
  // conv + add without one gave wrong results on eqx_dilated_conv1d.small (engines 0 and 11).
  absl::StatusOr<cudnnBackendDescriptor_t> biased =
      im.Tensor(p.y, Impl::kVirtualUids[2], compute, p.alignment, "biased result", true);
  if (!biased.ok()) return biased.status();
  absl::StatusOr<cudnnBackendDescriptor_t> add = im.Pointwise(CUDNN_POINTWISE_ADD, compute, t, *b, *biased, 1.0, 1.0, "bias add");
  if (!add.ok()) return add.status();
  ops.push_back(*add);
  absl::StatusOr<cudnnBackendDescriptor_t> act =
      im.Pointwise(relu ? CUDNN_POINTWISE_RELU_FWD : CUDNN_POINTWISE_IDENTITY, compute, *biased, nullptr, y, 1.0, 0.0,
                   relu ? "relu" : "identity activation");
  if (!act.ok()) return act.status();
  ops.push_back(*act);
  im.pack_tensors = p.has_side ? 5 : 4;
  return absl::OkStatus();
}

CudnnGraphConv::~CudnnGraphConv() = default;

absl::StatusOr<std::unique_ptr<CudnnGraphConv>> CudnnGraphConv::Create(cudnnHandle_t handle,
                                                                       const GraphConvProblem& p,
                                                                       int64_t workspace_cap) {
  absl::StatusOr<const BackendLib*> lib = Backend();
  if (!lib.ok()) return lib.status();
  const BackendLib& l = **lib;
  std::unique_ptr<CudnnGraphConv> conv(new CudnnGraphConv());
  conv->impl_ = std::make_unique<Impl>();
  Impl& im = *conv->impl_;
  im.l = &l;
  const int64_t nsp = static_cast<int64_t>(p.pre_padding.size());
  if (nsp < 1 || p.post_padding.size() != p.pre_padding.size() || p.stride.size() != p.pre_padding.size() ||
      p.dilation.size() != p.pre_padding.size() || p.x.dims.size() != static_cast<size_t>(nsp + 2) ||
      p.w.dims.size() != p.x.dims.size() || p.y.dims.size() != p.x.dims.size()) {
    return absl::InvalidArgumentError("graph convolution: tensor ranks and window sizes disagree");
  }
  // Tensors (uids 1, 2, 3 = x, w, y), the convolution, the one operation, the graph.
  absl::StatusOr<cudnnBackendDescriptor_t> x = im.Tensor(p.x, Impl::kUids[0], p.type, p.alignment, "input");
  if (!x.ok()) return x.status();
  absl::StatusOr<cudnnBackendDescriptor_t> w = im.Tensor(p.w, Impl::kUids[1], p.type, p.alignment, "filter");
  if (!w.ok()) return w.status();
  absl::StatusOr<cudnnBackendDescriptor_t> y = im.Tensor(p.y, Impl::kUids[2], p.type, p.alignment, "output");
  if (!y.ok()) return y.status();
  const bool f64 = p.type == CUDNN_DATA_DOUBLE;
  const cudnnDataType_t compute = f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const bool fused = p.kind == "bias_activation_forward";
  if (fused && p.activation != "kNone" && p.activation != "kRelu") {
    return absl::UnimplementedError(absl::StrCat("the graph path does not build the ", p.activation, " activation"));
  }
  // A fused call's convolution writes a virtual tensor (in the compute type) that the pointwise
  // operations read.
  absl::StatusOr<cudnnBackendDescriptor_t> conv_out = y;
  if (fused) {
    conv_out = im.Tensor(p.y, Impl::kVirtualUids[0], compute, p.alignment, "convolution result", true);
    if (!conv_out.ok()) return conv_out.status();
  }
  const cudnnConvolutionMode_t mode = p.reversed ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
  const std::string cwhat = "describing the convolution";
  absl::StatusOr<cudnnBackendDescriptor_t> cd = im.Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, cwhat);
  if (!cd.ok()) return cd.status();
  HLOC_BK_RETURN(im.Set(*cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp, cwhat));
  HLOC_BK_RETURN(im.Set(*cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, cwhat));
  HLOC_BK_RETURN(im.Set(*cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, cwhat));
  HLOC_BK_RETURN(im.Set(*cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, nsp, p.pre_padding.data(), cwhat));
  HLOC_BK_RETURN(im.Set(*cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, nsp, p.post_padding.data(), cwhat));
  HLOC_BK_RETURN(im.Set(*cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, nsp, p.dilation.data(), cwhat));
  HLOC_BK_RETURN(im.Set(*cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, nsp, p.stride.data(), cwhat));
  HLOC_BK_RETURN(im.Finalize(*cd, cwhat));

  const std::string owhat = absl::StrCat("describing the ", p.kind, " convolution operation");
  cudnnBackendDescriptorType_t op_type;
  cudnnBackendAttributeName_t a_alpha, a_beta, a_conv, a_x, a_w, a_y;
  if (p.kind == "forward" || fused) {
    op_type = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
    a_alpha = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, a_beta = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA;
    a_conv = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, a_x = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
    a_w = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, a_y = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y;
  } else if (p.kind == "backward_input") {
    op_type = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
    a_alpha = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, a_beta = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA;
    a_conv = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, a_x = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX;
    a_w = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, a_y = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
  } else if (p.kind == "backward_filter") {
    op_type = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
    a_alpha = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA;
    a_beta = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA;
    a_conv = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, a_x = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
    a_w = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, a_y = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
  } else {
    return absl::UnimplementedError(absl::StrCat("the graph path does not build '", p.kind, "' convolutions"));
  }
  absl::StatusOr<cudnnBackendDescriptor_t> op = im.Make(op_type, owhat);
  if (!op.ok()) return op.status();
  // alpha/beta are host scalars of the compute type's precision (double for f64 data).
  const float alpha_f = static_cast<float>(p.alpha), beta_f = 0.f;
  const double alpha_d = p.alpha, beta_d = 0.0;
  const cudnnBackendAttributeType_t scalar = f64 ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  HLOC_BK_RETURN(im.Set(*op, a_alpha, scalar, 1, f64 ? static_cast<const void*>(&alpha_d) : &alpha_f, owhat));
  HLOC_BK_RETURN(im.Set(*op, a_beta, scalar, 1, f64 ? static_cast<const void*>(&beta_d) : &beta_f, owhat));
  HLOC_BK_RETURN(im.Set(*op, a_conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &*cd, owhat));
  HLOC_BK_RETURN(im.Set(*op, a_x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &*x, owhat));
  HLOC_BK_RETURN(im.Set(*op, a_w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &*w, owhat));
  HLOC_BK_RETURN(im.Set(*op, a_y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &*conv_out, owhat));
  HLOC_BK_RETURN(im.Finalize(*op, owhat));
  std::vector<cudnnBackendDescriptor_t> ops = {*op};
  if (fused) {
    absl::Status s = im.AddBiasActivation(p, *conv_out, *y, ops);
    if (!s.ok()) return s;
  }

  const std::string gwhat = "building the operation graph";
  absl::StatusOr<cudnnBackendDescriptor_t> graph = im.Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, gwhat);
  if (!graph.ok()) return graph.status();
  HLOC_BK_RETURN(im.Set(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                        static_cast<int64_t>(ops.size()), ops.data(), gwhat));
  HLOC_BK_RETURN(im.Set(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, gwhat));
  HLOC_BK_RETURN(im.Finalize(*graph, gwhat));
  im.graph = *graph;

  // Engine configs from heuristic mode A, then FALLBACK (XLA asks for both: A ranks the fast
  // engines, FALLBACK adds the always-working ones), each turned into a plan.
  constexpr size_t kMaxPlans = 24;
  int configs = 0, by_notes = 0, runtime_compiled = 0, not_finalized = 0, too_hungry = 0;
  std::string first_failure;
  std::set<std::string> seen;
  for (cudnnBackendHeurMode_t heur_mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    const std::string hwhat = absl::StrCat("asking cuDNN's heuristic (mode ", static_cast<int>(heur_mode), ")");
    cudnnBackendDescriptor_t heur = nullptr;
    if (!HLOC_BK(l, cudnnBackendCreateDescriptor, hwhat, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur).ok()) continue;
    std::vector<cudnnBackendDescriptor_t> cfgs;
    auto cleanup = [&] {
      for (cudnnBackendDescriptor_t c : cfgs)
        if (c != nullptr) l.cudnnBackendDestroyDescriptor(c);
      l.cudnnBackendDestroyDescriptor(heur);
    };
    int64_t count = 0;
    absl::Status s = im.Set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &im.graph, hwhat);
    if (s.ok()) s = im.Set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode, hwhat);
    if (s.ok()) s = im.Finalize(heur, hwhat);
    if (s.ok()) {
      s = HLOC_BK(l, cudnnBackendGetAttribute, hwhat, heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr);
    }
    if (s.ok() && count > 0) {
      cfgs.assign(static_cast<size_t>(count), nullptr);
      for (cudnnBackendDescriptor_t& c : cfgs)
        if (s.ok()) s = HLOC_BK(l, cudnnBackendCreateDescriptor, hwhat, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &c);
      int64_t got = 0;
      if (s.ok()) {
        s = HLOC_BK(l, cudnnBackendGetAttribute, hwhat, heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                    CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs.data());
      }
      if (s.ok()) count = std::min(count, got);
    }
    if (!s.ok()) {
      if (first_failure.empty()) first_failure = std::string(s.message());
      cleanup();
      continue;
    }
    for (int64_t i = 0; i < count && conv->infos_.size() < kMaxPlans; ++i) {
      cudnnBackendDescriptor_t cfg = cfgs[i];
      ++configs;
      // The engine: its index, numerical and behaviour notes; the config's knob choices.
      cudnnBackendDescriptor_t engine = nullptr;
      int64_t n = 0, index = -1;
      if (l.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS) continue;
      bool ok = l.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                           &engine) == CUDNN_STATUS_SUCCESS &&
                l.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index) ==
                    CUDNN_STATUS_SUCCESS;
      cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
      int64_t nnotes = 0;
      if (ok && l.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                           CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nnotes, notes) != CUDNN_STATUS_SUCCESS) {
        nnotes = 0;
      }
      cudnnBackendBehaviorNote_t behaviors[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
      int64_t nbehaviors = 0;
      if (ok && l.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                           CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &nbehaviors, behaviors) != CUDNN_STATUS_SUCCESS) {
        nbehaviors = 0;
      }
      l.cudnnBackendDestroyDescriptor(engine);
      if (!ok) {
        ++not_finalized;
        continue;
      }
      std::vector<std::pair<int64_t, int64_t>> knobs;
      {
        std::vector<cudnnBackendDescriptor_t> choices(CUDNN_KNOB_TYPE_COUNTS, nullptr);
        bool made = true;
        for (cudnnBackendDescriptor_t& c : choices)
          made = made && l.cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &c) == CUDNN_STATUS_SUCCESS;
        int64_t nk = 0;
        if (made && l.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                               CUDNN_KNOB_TYPE_COUNTS, &nk, choices.data()) == CUDNN_STATUS_SUCCESS) {
          for (int64_t k = 0; k < nk && k < CUDNN_KNOB_TYPE_COUNTS; ++k) {
            cudnnBackendKnobType_t type;
            int64_t value = 0, m = 0;
            if (l.cudnnBackendGetAttribute(choices[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &m,
                                           &type) == CUDNN_STATUS_SUCCESS &&
                l.cudnnBackendGetAttribute(choices[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &m,
                                           &value) == CUDNN_STATUS_SUCCESS) {
              knobs.emplace_back(static_cast<int64_t>(type), value);
            }
          }
        }
        for (cudnnBackendDescriptor_t c : choices)
          if (c != nullptr) l.cudnnBackendDestroyDescriptor(c);
      }
      const std::string text = PlanText(index, knobs);
      if (!seen.insert(text).second) continue;  // FALLBACK repeats some of A's
      bool forbidden = false, compiled = false, tensor_core = false;
      for (int64_t k = 0; k < nnotes; ++k) {
        tensor_core |= notes[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        // XLA drops input down-conversion always, tensor cores for f32 when TF32 is off.
        forbidden |= notes[k] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
        forbidden |= notes[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && p.type == CUDNN_DATA_FLOAT && !p.allow_tf32;
      }
      for (int64_t k = 0; k < nbehaviors; ++k) compiled |= behaviors[k] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
      if (forbidden) {
        ++by_notes;
        continue;
      }
      if (compiled) {
        ++runtime_compiled;
        continue;
      }
      // The plan.
      const std::string pwhat = absl::StrCat("finalizing the execution plan ", text);
      cudnnBackendDescriptor_t plan = nullptr;
      if (!HLOC_BK(l, cudnnBackendCreateDescriptor, pwhat, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan).ok()) continue;
      int64_t workspace = 0;
      absl::Status ps = im.Set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, pwhat);
      if (ps.ok()) ps = im.Set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg, pwhat);
      if (ps.ok()) ps = im.Finalize(plan, pwhat);
      if (ps.ok()) {
        ps = HLOC_BK(l, cudnnBackendGetAttribute, pwhat, plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                     CUDNN_TYPE_INT64, 1, &n, &workspace);
      }
      if (!ps.ok()) {
        ++not_finalized;
        if (first_failure.empty()) first_failure = std::string(ps.message());
        l.cudnnBackendDestroyDescriptor(plan);
        continue;
      }
      if (workspace > workspace_cap) {
        ++too_hungry;
        l.cudnnBackendDestroyDescriptor(plan);
        continue;
      }
      // Keep the config alive with its plan (the plan may refer to it).
      im.owned.push_back(cfg);
      cfgs[i] = nullptr;
      im.owned.push_back(plan);
      im.plans.push_back(plan);
      conv->infos_.push_back({text, workspace, tensor_core && p.type == CUDNN_DATA_FLOAT});
    }
    cleanup();
  }
  conv->summary_ = absl::StrCat(conv->infos_.size(), " plans from ", configs, " engine configs");
  if (by_notes > 0) absl::StrAppend(&conv->summary_, "; ", by_notes, " dropped by numerical notes");
  if (runtime_compiled > 0) absl::StrAppend(&conv->summary_, "; ", runtime_compiled, " runtime-compiled skipped");
  if (not_finalized > 0) absl::StrAppend(&conv->summary_, "; ", not_finalized, " failed to finalize");
  if (too_hungry > 0) absl::StrAppend(&conv->summary_, "; ", too_hungry, " over the workspace cap");
  if (conv->infos_.empty()) {
    return absl::UnimplementedError(absl::StrCat("cuDNN's graph API offers no usable plan (", conv->summary_,
                                                 first_failure.empty() ? "" : "; first error: " + first_failure, ")"));
  }
  return conv;
}

absl::Status CudnnGraphConv::Execute(cudnnHandle_t handle, size_t plan, const GraphConvArgs& args,
                                     CUdeviceptr workspace, int64_t workspace_bytes) {
  Impl& im = *impl_;
  const BackendLib& l = *im.l;
  if (plan >= im.plans.size()) return absl::InvalidArgumentError("graph convolution: no such plan");
  if (infos_[plan].workspace > workspace_bytes) {
    return absl::FailedPreconditionError(absl::StrCat("graph convolution plan ", infos_[plan].text, " needs ",
                                                      infos_[plan].workspace, " bytes of workspace, ",
                                                      workspace_bytes, " given"));
  }
  const CUdeviceptr key[6] = {args.x, args.w, args.y, args.bias, args.side, workspace};
  if (im.pack == nullptr || !std::equal(key, key + 6, im.pack_key)) {
    if (im.pack != nullptr) l.cudnnBackendDestroyDescriptor(im.pack), im.pack = nullptr;
    const std::string what = "building the variant pack";
    cudnnBackendDescriptor_t pack = nullptr;
    HLOC_BK_RETURN(HLOC_BK(l, cudnnBackendCreateDescriptor, what, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    void* ptrs[5] = {reinterpret_cast<void*>(args.x), reinterpret_cast<void*>(args.w), reinterpret_cast<void*>(args.y),
                     reinterpret_cast<void*>(args.bias), reinterpret_cast<void*>(args.side)};
    void* ws = reinterpret_cast<void*>(workspace);
    absl::Status s = im.Set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, im.pack_tensors, Impl::kUids, what);
    if (s.ok()) s = im.Set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, im.pack_tensors, ptrs, what);
    if (s.ok()) s = im.Set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws, what);
    if (s.ok()) s = im.Finalize(pack, what);
    if (!s.ok()) {
      l.cudnnBackendDestroyDescriptor(pack);
      return s;
    }
    im.pack = pack;
    std::copy(key, key + 6, im.pack_key);
  }
  return HLOC_BK(l, cudnnBackendExecute, absl::StrCat("running plan ", infos_[plan].text), handle, im.plans[plan],
                 im.pack);
}

absl::StatusOr<CudnnGraphConv::Timing> CudnnGraphConv::Autotune(const CudaDriver& drv, cudnnHandle_t handle,
                                                                CUstream stream, const GraphConvArgs& args,
                                                                CUdeviceptr workspace, int64_t workspace_bytes) {
  Timing t;
  CUevent start = nullptr, stop = nullptr;
  HLOC_BK_RETURN(HLOC_CU(drv, cuEventCreate, "creating autotuning events", &start, CU_EVENT_DEFAULT));
  if (absl::Status e = HLOC_CU(drv, cuEventCreate, "creating autotuning events", &stop, CU_EVENT_DEFAULT); !e.ok()) {
    drv.cuEventDestroy(start);
    return e;
  }
  // As cublaslt.cc: a warm-up call, then a few timed ones; short convolutions get more calls
  // (a few are within the events' resolution).
  constexpr int kReps = 3, kShortReps = 20;
  constexpr double kShortUs = 50;
  std::vector<std::string> table;
  std::vector<double> times(infos_.size(), -1);
  bool captured = true;
  absl::Status fatal;
  for (size_t i = 0; i < infos_.size() && fatal.ok(); ++i) {
    if (infos_[i].workspace > workspace_bytes) continue;
    ++t.tried;
    if (!Execute(handle, i, args, workspace, workspace_bytes).ok()) {
      ++t.failed;
      table.push_back(absl::StrCat(infos_[i].text, "=failed"));
      continue;
    }
    // Inside a CUDA graph where the stream can be captured (graph_timer.h), else from the host.
    auto run = [&]() { return Execute(handle, i, args, workspace, workspace_bytes); };
    absl::StatusOr<double> timed =
        TimeAutotuneCandidate(drv, stream, start, stop, kReps, kShortReps, kShortUs, &captured, run);
    if (!timed.ok()) {
      fatal = timed.status();  // an execution error: the context may be broken, say so now
      break;
    }
    const double us = *timed;
    table.push_back(us >= 0 ? absl::StrFormat("%s=%.1fus", infos_[i].text, us) : infos_[i].text + "=failed");
    if (us < 0) ++t.failed;
    times[i] = us;
    if (us >= 0 && (t.best_us < 0 || us < t.best_us)) t.best_us = us, t.best = static_cast<int64_t>(i);
  }
  drv.cuEventDestroy(start);
  drv.cuEventDestroy(stop);
  if (!fatal.ok()) return fatal;
  // A TF32 plan that wins by less than the timing noise gives up f32 accuracy for nothing: the
  // fastest full-precision plan within kPreciseSlack of it runs instead (flax_resnet_stage_train's
  // small backward convolutions, 5-8 us each, where TF32 moved a BatchNorm scale gradient by 7e-3).
  constexpr double kPreciseSlack = 1.1;
  if (t.best >= 0 && infos_[t.best].tensor_core) {
    for (size_t i = 0; i < infos_.size(); ++i) {
      if (infos_[i].tensor_core || times[i] < 0 || times[i] > t.best_us * kPreciseSlack) continue;
      if (t.best < 0 || infos_[t.best].tensor_core || times[i] < times[t.best]) t.best = static_cast<int64_t>(i);
    }
    t.best_us = times[t.best];
  }
  t.table = absl::StrJoin(table, " ");
  if (!captured) absl::StrAppend(&t.table, " (timed from the host: the stream could not be captured)");
  return t;
}

}  // namespace hloc::runtime::gpu
#endif  // HLOC_HAVE_CUDA
