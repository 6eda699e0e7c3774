// Running cuDNN convolutions: descriptors from a ConvSpec, algorithm choice, execution
// (see cudnn.h). The config parsing is in cudnn.cc.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/gpu/cudnn.h"
#include "runtime/gpu/cudnn_graph.h"

#if HLOC_HAVE_CUDA
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>

namespace hloc::runtime::gpu {
namespace {

#define HLOC_CUDNN_ENTRIES(X)                                                                                     \
  X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnCreate) X(cudnnSetStream) X(cudnnCreateTensorDescriptor)       \
  X(cudnnDestroyTensorDescriptor) X(cudnnSetTensorNdDescriptor) X(cudnnCreateFilterDescriptor)                    \
  X(cudnnDestroyFilterDescriptor) X(cudnnSetFilterNdDescriptor) X(cudnnCreateConvolutionDescriptor)               \
  X(cudnnDestroyConvolutionDescriptor) X(cudnnSetConvolutionNdDescriptor) X(cudnnSetConvolutionGroupCount)        \
  X(cudnnSetConvolutionMathType) X(cudnnGetConvolutionNdForwardOutputDim) X(cudnnCreateActivationDescriptor)      \
  X(cudnnDestroyActivationDescriptor) X(cudnnSetActivationDescriptor) X(cudnnGetConvolutionForwardAlgorithm_v7)   \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7) X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                 \
  X(cudnnFindConvolutionForwardAlgorithmEx) X(cudnnFindConvolutionBackwardDataAlgorithmEx)                        \
  X(cudnnFindConvolutionBackwardFilterAlgorithmEx) X(cudnnConvolutionForward) X(cudnnConvolutionBackwardData)     \
  X(cudnnConvolutionBackwardFilter) X(cudnnConvolutionBiasActivationForward)

struct CudnnLib {
  size_t version = 0;
#define HLOC_DNN_MEMBER(name) decltype(&::name) name = nullptr;
  HLOC_CUDNN_ENTRIES(HLOC_DNN_MEMBER)
#undef HLOC_DNN_MEMBER
};

absl::StatusOr<std::unique_ptr<CudnnLib>> LoadOnce() {
  absl::StatusOr<void*> lib = OpenLibrary({"libcudnn.so.9", "libcudnn.so"}, "cuDNN 9");
  if (!lib.ok()) return lib.status();
  auto l = std::make_unique<CudnnLib>();
  std::vector<std::string> missing;
#define HLOC_DNN_LOAD(name)                                           \
  l->name = reinterpret_cast<decltype(l->name)>(dlsym(*lib, #name)); \
  if (l->name == nullptr) missing.push_back(#name);
  HLOC_CUDNN_ENTRIES(HLOC_DNN_LOAD)
#undef HLOC_DNN_LOAD
  if (!missing.empty()) return absl::UnavailableError(absl::StrCat("cuDNN lacks ", absl::StrJoin(missing, ", ")));
  l->version = l->cudnnGetVersion();
  return l;
}

absl::StatusOr<const CudnnLib*> Lib() { return LoadLibraryOnce(LoadOnce); }

absl::Status DnnCheck(const CudnnLib& l, cudnnStatus_t s, const char* fn, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const char* text = l.cudnnGetErrorString(s);
  std::string msg = absl::StrCat(fn, " failed with ", text ? text : "?", " (", static_cast<int>(s), ") while ", what);
  if (s == CUDNN_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(msg);
  if (s == CUDNN_STATUS_NOT_SUPPORTED) return absl::UnimplementedError(msg);
  if (s == CUDNN_STATUS_BAD_PARAM) return absl::InvalidArgumentError(msg);
  return absl::InternalError(msg);
}
#define HLOC_DNN(lib, fn, what, ...) DnnCheck((lib), (lib).fn(__VA_ARGS__), #fn, (what))

// One handle per device; calls on it take the mutex (cudnnSetStream + the call).
struct SharedHandle {
  cudnnHandle_t handle = nullptr;
  std::mutex mu;
};

absl::StatusOr<SharedHandle*> Handle(const CudnnLib& l, const CudaContext& ctx) {
  static std::mutex mu;
  static auto* handles = new std::map<int, std::unique_ptr<SharedHandle>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<SharedHandle>& h = (*handles)[ctx.info.ordinal];
  if (h != nullptr) return h.get();
  if (absl::Status s = ctx.MakeCurrent(); !s.ok()) return s;
  auto fresh = std::make_unique<SharedHandle>();
  if (absl::Status s = HLOC_DNN(l, cudnnCreate, "creating the cuDNN handle", &fresh->handle); !s.ok()) return s;
  h = std::move(fresh);
  return h.get();
}

std::optional<std::pair<cudnnDataType_t, int64_t>> DnnType(const std::string& t) {
  if (t == "f32") return std::make_pair(CUDNN_DATA_FLOAT, int64_t{4});
  if (t == "f16") return std::make_pair(CUDNN_DATA_HALF, int64_t{2});
  if (t == "bf16") return std::make_pair(CUDNN_DATA_BFLOAT16, int64_t{2});
  if (t == "f64") return std::make_pair(CUDNN_DATA_DOUBLE, int64_t{8});
  return std::nullopt;
}

// A tensor's dims in cuDNN's order (batch/out-feature, feature/in-feature, spatial...) with the
// strides its layout gives, padded to 4 dims with size-1 spatial dims. A padded dim takes the
// stride of the dim before it, the stride it has when the layout is packed with it in place
// (NHWC with W=1: W's stride is C, not 1): a stride of 1 beside the real innermost dim makes the
// layout ambiguous, and on the graph path engines 0 and 28 then computed 1-D convolutions wrong.
struct NdShape {
  std::vector<int> dims, strides;
};
absl::StatusOr<NdShape> CudnnOrder(const ConvTensorSpec& t, int64_t d0, int64_t d1, const std::vector<int64_t>& spatial,
                                   const char* what) {
  std::vector<int64_t> stride(t.dims.size());
  int64_t s = 1;
  for (int64_t d : t.minor_to_major) {
    stride[d] = s;
    s *= std::max<int64_t>(t.dims[d], 1);
  }
  if (s > INT32_MAX) return absl::UnimplementedError(absl::StrCat("the ", what, " tensor has over 2^31 elements (cuDNN's limit)"));
  NdShape out;
  std::vector<int64_t> order = {d0, d1};
  order.insert(order.end(), spatial.begin(), spatial.end());
  for (int64_t d : order) {
    out.dims.push_back(static_cast<int>(t.dims[d]));
    out.strides.push_back(static_cast<int>(stride[d]));
  }
  while (out.dims.size() < 4) {
    out.dims.push_back(1);
    out.strides.push_back(out.strides.back());
  }
  return out;
}

// Multiply-adds x 2 of a convolution: every output element sums input features / groups x the
// window's taps (the same count for the backward kinds, which compute the same products).
double ConvFlops(const ConvSpec& c) {
  double out = 1, taps = 1;
  for (int64_t d : c.output.dims) out *= static_cast<double>(d);
  for (size_t i = 0; i < c.filter.dims.size(); ++i)
    if (static_cast<int64_t>(i) != c.kernel_output_feature_dim) taps *= static_cast<double>(c.filter.dims[i]);
  return 2 * out * taps;
}

// Below this many FLOPs an f32 convolution is launch-bound (a quarter of a microsecond at an
// H100/H200's CUDA-core f32 rate), so TF32 tensor cores cannot make it faster, only less exact:
// it runs in f32 FMA math. flax_resnet_stage_train.small (37 kFLOP per convolution, 3 and 4
// channels): cuDNN's TF32 plans moved a BatchNorm scale gradient by 7e-3, XLA's FMA algorithms
// (DEFAULT_MATH, algorithms 0 and 11) by 3e-7.
constexpr double kTf32MinFlops = 16e6;

struct Candidate {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t memory = 0;
  float time = -1;
};

}  // namespace

absl::Status CudnnAvailable() {
  absl::StatusOr<const CudnnLib*> l = Lib();
  return l.ok() ? absl::OkStatus() : l.status();
}

struct ConvPlanState {
  const CudnnLib* lib = nullptr;
  const CudaContext* ctx = nullptr;
  SharedHandle* handle = nullptr;
  ConvSpec spec;
  ConvOptions options;
  std::string name, description, key, chosen_by = "none";
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnMathType_t base_math = CUDNN_DEFAULT_MATH;
  bool tf32 = true;  // f32 may use TF32 tensor cores (options.allow_tf32 and not launch-bound)
  std::vector<Candidate> heuristic;
  Candidate chosen;
  bool have_algo = false;
  bool f64 = false;
  float alpha_f = 1, beta_f = 0, alpha2_f = 0;
  double alpha_d = 1, beta_d = 0, alpha2_d = 0;
  // Thunk argument index of each role (-1: absent).
  int in = -1, filt = -1, out = -1, bias_arg = -1, side = -1;
  // The graph-API path (cudnn_graph.h), preferred when it has a plan; `graph_plan` is the
  // chosen plan (-1: the legacy algorithm runs) and `graph_note` why the graph path is not used.
  std::unique_ptr<CudnnGraphConv> graph;
  int64_t graph_plan = -1;
  std::string graph_note;
  static constexpr int64_t kGraphAlignment = 16;
  bool GraphAligned(const std::vector<CUdeviceptr>& args) const {
    for (int i : {in, filt, out, bias_arg, side})
      if (i >= 0 && args[i] % kGraphAlignment != 0) return false;
    return true;
  }
  GraphConvArgs GraphArgs(const std::vector<CUdeviceptr>& args) const {
    GraphConvArgs g;
    g.x = args[in], g.w = args[filt], g.y = args[out];
    if (bias_arg >= 0) g.bias = args[bias_arg];
    if (side >= 0) g.side = args[side];
    return g;
  }

  std::string Where(const std::string& what) const {
    return absl::StrCat(what, " for convolution '", name, "' (", description, ")");
  }
  const void* Alpha() const { return f64 ? static_cast<const void*>(&alpha_d) : static_cast<const void*>(&alpha_f); }
  const void* Beta() const { return f64 ? static_cast<const void*>(&beta_d) : static_cast<const void*>(&beta_f); }
  const void* Alpha2() const { return f64 ? static_cast<const void*>(&alpha2_d) : static_cast<const void*>(&alpha2_f); }
};

CudnnConvolution::~CudnnConvolution() {
  if (state_ == nullptr || state_->lib == nullptr) return;
  const CudnnLib& l = *state_->lib;
  for (cudnnTensorDescriptor_t t : {state_->x, state_->y, state_->bias})
    if (t != nullptr) l.cudnnDestroyTensorDescriptor(t);
  if (state_->w != nullptr) l.cudnnDestroyFilterDescriptor(state_->w);
  if (state_->conv != nullptr) l.cudnnDestroyConvolutionDescriptor(state_->conv);
  if (state_->act != nullptr) l.cudnnDestroyActivationDescriptor(state_->act);
}

const std::string& CudnnConvolution::description() const { return state_->description; }
const std::string& CudnnConvolution::chosen_by() const { return state_->chosen_by; }

int64_t CudnnConvolution::workspace_bytes() const {
  // The first few heuristic choices; the fastest ones are often the hungriest, so allow them
  // up to a cap that leaves the model its memory.
  constexpr int64_t kCap = int64_t{1} << 30;
  int64_t need = 0;
  if (state_->graph != nullptr) {
    // Every graph plan (Create dropped those over the cap) and the leanest legacy algorithm,
    // the fallback for misaligned buffers.
    for (const GraphPlanInfo& p : state_->graph->plans()) need = std::max(need, p.workspace);
    int64_t lean = kCap;
    for (const Candidate& k : state_->heuristic) lean = std::min(lean, static_cast<int64_t>(k.memory));
    return std::max(need, state_->heuristic.empty() ? 0 : lean);
  }
  for (size_t i = 0; i < state_->heuristic.size() && i < 3; ++i)
    if (static_cast<int64_t>(state_->heuristic[i].memory) <= kCap)
      need = std::max(need, static_cast<int64_t>(state_->heuristic[i].memory));
  return need;
}

absl::StatusOr<std::unique_ptr<CudnnConvolution>> CudnnConvolution::Create(const CudaContext& ctx, const ConvSpec& c,
                                                                           const std::vector<int64_t>& argument_bytes,
                                                                           const ConvOptions& options,
                                                                           const std::string& name) {
  absl::StatusOr<const CudnnLib*> lib = Lib();
  if (!lib.ok()) return lib.status();
  const CudnnLib& l = **lib;
  std::unique_ptr<CudnnConvolution> plan(new CudnnConvolution());
  plan->state_ = std::make_unique<ConvPlanState>();
  ConvPlanState& st = *plan->state_;
  st.lib = &l;
  st.ctx = &ctx;
  st.spec = c;
  st.options = options;
  st.name = name;
  auto dims = [](const ConvTensorSpec& t) {
    return absl::StrCat(t.type, "[", absl::StrJoin(t.dims, ","), "]{", absl::StrJoin(t.minor_to_major, ","), "}");
  };
  std::vector<std::string> win;
  for (const ConvWindowDim& w : c.window)
    win.push_back(absl::StrCat("size=", w.size, " stride=", w.stride, " pad=", w.pad_low, "_", w.pad_high,
                               w.rhs_dilation != 1 ? absl::StrCat(" rhs_dil=", w.rhs_dilation) : "",
                               w.lhs_dilation != 1 ? absl::StrCat(" lhs_dil=", w.lhs_dilation) : ""));
  st.description = absl::StrCat(c.kind, " input ", dims(c.input), " filter ", dims(c.filter), " output ",
                                dims(c.output), " window {", absl::StrJoin(win, "; "), "} groups ",
                                c.feature_group_count, c.kind == "bias_activation_forward" ? " " + c.activation : "");
  auto unimplemented = [&](const std::string& why) { return absl::UnimplementedError(st.Where(why)); };
  // What the legacy API can do.
  const size_t ns = c.window.size();
  if (ns < 1 || ns > 3) return unimplemented(absl::StrCat(ns, " spatial dimensions (cuDNN: 1 to 3)"));
  if (c.input.type != c.filter.type || c.input.type != c.output.type) return unimplemented("mixed element types");
  auto type = DnnType(c.input.type);
  if (!type) return unimplemented(absl::StrCat("element type ", c.input.type, " (f32, f16, bf16, f64)"));
  st.f64 = c.input.type == "f64";
  if (c.batch_group_count != 1) return unimplemented("batch_group_count != 1");
  bool all_rev = true, no_rev = true;
  for (const ConvWindowDim& w : c.window) {
    if (w.lhs_dilation != 1) return unimplemented("input (lhs) dilation");
    if (w.stride < 1 || w.rhs_dilation < 1 || w.pad_low < 0) return unimplemented("a negative pad or a zero stride");
    all_rev &= w.reversal;
    no_rev &= !w.reversal;
  }
  if (!all_rev && !no_rev) return unimplemented("a window reversed in some dimensions only");
  // Argument roles.
  for (size_t i = 0; i < c.arguments.size(); ++i) {
    const std::string& r = c.arguments[i];
    int* slot = r == "input" ? &st.in : r == "filter" ? &st.filt : r == "output" ? &st.out : r == "bias" ? &st.bias_arg : &st.side;
    *slot = static_cast<int>(i);
  }
  if (argument_bytes.size() != c.arguments.size()) {
    return absl::InvalidArgumentError(st.Where(absl::StrCat("the thunk has ", argument_bytes.size(),
                                                            " arguments, the config names ", c.arguments.size())));
  }
  auto elements = [](const ConvTensorSpec& t) {
    int64_t n = 1;
    for (int64_t d : t.dims) n *= d;
    return n;
  };
  for (auto [idx, t, what] : {std::tuple<int, const ConvTensorSpec*, const char*>{st.in, &c.input, "input"},
                              {st.filt, &c.filter, "filter"}, {st.out, &c.output, "output"},
                              {st.side, &c.output, "side input"}}) {
    if (idx >= 0 && argument_bytes[idx] < elements(*t) * type->second) {
      return absl::InvalidArgumentError(st.Where(absl::StrCat("the ", what, " slice holds ", argument_bytes[idx],
                                                              " bytes, the tensor needs ", elements(*t) * type->second)));
    }
  }
  const int64_t features = c.output.dims[c.output_feature_dim];
  if (st.bias_arg >= 0 && argument_bytes[st.bias_arg] < features * type->second) {
    return absl::InvalidArgumentError(st.Where("the bias slice is smaller than the output features"));
  }
  // Filter format from its physical dim order (size-1 dims go anywhere).
  std::vector<int64_t> phys;  // major to minor, size > 1 only
  for (auto it = c.filter.minor_to_major.rbegin(); it != c.filter.minor_to_major.rend(); ++it)
    if (c.filter.dims[*it] != 1) phys.push_back(*it);
  auto filtered = [&](std::vector<int64_t> order) {
    std::vector<int64_t> f;
    for (int64_t d : order)
      if (c.filter.dims[d] != 1) f.push_back(d);
    return f;
  };
  std::vector<int64_t> nchw = {c.kernel_output_feature_dim, c.kernel_input_feature_dim}, nhwc = {c.kernel_output_feature_dim};
  nchw.insert(nchw.end(), c.kernel_spatial_dims.begin(), c.kernel_spatial_dims.end());
  nhwc.insert(nhwc.end(), c.kernel_spatial_dims.begin(), c.kernel_spatial_dims.end());
  nhwc.push_back(c.kernel_input_feature_dim);
  cudnnTensorFormat_t format;
  if (phys == filtered(nchw)) {
    format = CUDNN_TENSOR_NCHW;
  } else if (phys == filtered(nhwc)) {
    format = CUDNN_TENSOR_NHWC;
  } else {
    return unimplemented("a filter layout that is neither [out, in, spatial...] nor [out, spatial..., in] major to minor");
  }
  absl::StatusOr<NdShape> xs = CudnnOrder(c.input, c.input_batch_dim, c.input_feature_dim, c.input_spatial_dims, "input");
  absl::StatusOr<NdShape> ys = CudnnOrder(c.output, c.output_batch_dim, c.output_feature_dim, c.output_spatial_dims, "output");
  absl::StatusOr<NdShape> ws = CudnnOrder(c.filter, c.kernel_output_feature_dim, c.kernel_input_feature_dim,
                                          c.kernel_spatial_dims, "filter");
  for (const auto* s : {&xs, &ys, &ws})
    if (!s->ok()) return absl::Status(s->status().code(), st.Where(std::string(s->status().message())));
  const int nd = static_cast<int>(xs->dims.size());
  auto where = [&](const char* what) { return st.Where(what); };
  if (absl::Status s = HLOC_DNN(l, cudnnCreateTensorDescriptor, where("creating descriptors"), &st.x); !s.ok()) return s;
  if (absl::Status s = HLOC_DNN(l, cudnnCreateTensorDescriptor, where("creating descriptors"), &st.y); !s.ok()) return s;
  if (absl::Status s = HLOC_DNN(l, cudnnCreateFilterDescriptor, where("creating descriptors"), &st.w); !s.ok()) return s;
  if (absl::Status s = HLOC_DNN(l, cudnnCreateConvolutionDescriptor, where("creating descriptors"), &st.conv); !s.ok()) {
    return s;
  }
  if (absl::Status s = HLOC_DNN(l, cudnnSetTensorNdDescriptor, where("describing the input"), st.x, type->first, nd,
                                xs->dims.data(), xs->strides.data());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = HLOC_DNN(l, cudnnSetTensorNdDescriptor, where("describing the output"), st.y, type->first, nd,
                                ys->dims.data(), ys->strides.data());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = HLOC_DNN(l, cudnnSetFilterNdDescriptor, where("describing the filter"), st.w, type->first, format,
                                nd, ws->dims.data());
      !s.ok()) {
    return s;
  }
  std::vector<int> pad, stride, dil;
  for (const ConvWindowDim& w : c.window) {
    pad.push_back(static_cast<int>(w.pad_low));
    stride.push_back(static_cast<int>(w.stride));
    dil.push_back(static_cast<int>(w.rhs_dilation));
  }
  while (static_cast<int>(pad.size()) < nd - 2) pad.push_back(0), stride.push_back(1), dil.push_back(1);
  const cudnnDataType_t compute = st.f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  if (absl::Status s = HLOC_DNN(l, cudnnSetConvolutionNdDescriptor, where("describing the convolution"), st.conv, nd - 2,
                                pad.data(), stride.data(), dil.data(),
                                all_rev && !no_rev ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION, compute);
      !s.ok()) {
    return s;
  }
  if (c.feature_group_count != 1) {
    if (absl::Status s = HLOC_DNN(l, cudnnSetConvolutionGroupCount, where("setting the group count"), st.conv,
                                  static_cast<int>(c.feature_group_count));
        !s.ok()) {
      return s;
    }
  }
  st.tf32 = options.allow_tf32 && ConvFlops(c) >= kTf32MinFlops;
  st.base_math = c.input.type == "f32" ? (st.tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH)
                 : st.f64              ? CUDNN_DEFAULT_MATH
                                       : CUDNN_TENSOR_OP_MATH;
  if (absl::Status s = HLOC_DNN(l, cudnnSetConvolutionMathType, where("setting the math type"), st.conv, st.base_math);
      !s.ok()) {
    return s;
  }
  // The output size cuDNN computes from pad_low alone must be the config's (see cudnn.h).
  std::vector<int> got(nd);
  if (absl::Status s = HLOC_DNN(l, cudnnGetConvolutionNdForwardOutputDim, where("checking the output size"), st.conv,
                                st.x, st.w, nd, got.data());
      !s.ok()) {
    return s;
  }
  if (got != ys->dims) {
    return unimplemented(absl::StrCat("padding cuDNN cannot express: with pad_low on both sides the output would be [",
                                      absl::StrJoin(got, ","), "], the config's is [", absl::StrJoin(ys->dims, ","),
                                      "] (cuDNN order N, C, spatial)"));
  }
  if (c.kind == "bias_activation_forward") {
    std::vector<int> bdims(nd, 1), bstrides(nd, 1);
    bdims[1] = static_cast<int>(features);
    for (int i = nd - 2; i >= 0; --i) bstrides[i] = bstrides[i + 1] * bdims[i + 1];
    if (absl::Status s = HLOC_DNN(l, cudnnCreateTensorDescriptor, where("creating descriptors"), &st.bias); !s.ok()) {
      return s;
    }
    if (absl::Status s = HLOC_DNN(l, cudnnSetTensorNdDescriptor, where("describing the bias"), st.bias, type->first, nd,
                                  bdims.data(), bstrides.data());
        !s.ok()) {
      return s;
    }
    cudnnActivationMode_t mode;
    double coef = 0;
    if (c.activation == "kNone") mode = CUDNN_ACTIVATION_IDENTITY;
    else if (c.activation == "kRelu") mode = CUDNN_ACTIVATION_RELU;
    else if (c.activation == "kRelu6") mode = CUDNN_ACTIVATION_CLIPPED_RELU, coef = 6;
    else if (c.activation == "kElu") mode = CUDNN_ACTIVATION_ELU, coef = 1;
    else if (c.activation == "kTanh") mode = CUDNN_ACTIVATION_TANH;
    else if (c.activation == "kSigmoid") mode = CUDNN_ACTIVATION_SIGMOID;
    else return unimplemented(absl::StrCat("activation ", c.activation, " in cuDNN's fused convolution"));
    if (absl::Status s = HLOC_DNN(l, cudnnCreateActivationDescriptor, where("creating descriptors"), &st.act); !s.ok()) {
      return s;
    }
    if (absl::Status s = HLOC_DNN(l, cudnnSetActivationDescriptor, where("describing the activation"), st.act, mode,
                                  CUDNN_NOT_PROPAGATE_NAN, coef);
        !s.ok()) {
      return s;
    }
  }
  st.alpha_f = static_cast<float>(c.conv_result_scale), st.alpha_d = c.conv_result_scale;
  st.alpha2_f = st.side >= 0 ? static_cast<float>(c.side_input_scale) : 0.f;
  st.alpha2_d = st.side >= 0 ? c.side_input_scale : 0.0;
  absl::StatusOr<SharedHandle*> h = Handle(l, ctx);
  if (!h.ok()) return h.status();
  st.handle = *h;
  // The heuristic's candidates (no GPU work).
  constexpr int kMax = 16;
  int returned = 0;
  std::lock_guard<std::mutex> lock(st.handle->mu);
  auto collect = [&](const auto* perf) {
    for (int i = 0; i < returned; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS)
        st.heuristic.push_back({static_cast<int>(perf[i].algo), perf[i].mathType, perf[i].memory, -1});
  };
  if (c.kind == "forward" || c.kind == "bias_activation_forward") {
    cudnnConvolutionFwdAlgoPerf_t perf[kMax];
    if (absl::Status s = HLOC_DNN(l, cudnnGetConvolutionForwardAlgorithm_v7, where("asking cuDNN's heuristic"),
                                  st.handle->handle, st.x, st.w, st.conv, st.y, kMax, &returned, perf);
        !s.ok()) {
      return s;
    }
    collect(perf);
    if (c.kind == "bias_activation_forward" && c.activation == "kNone") {
      // cuDNN runs an identity activation only with IMPLICIT_PRECOMP_GEMM.
      std::erase_if(st.heuristic, [](const Candidate& k) { return k.algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM; });
      if (st.heuristic.empty()) st.heuristic.push_back({CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, st.base_math, 0, -1});
    }
  } else if (c.kind == "backward_input") {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
    if (absl::Status s = HLOC_DNN(l, cudnnGetConvolutionBackwardDataAlgorithm_v7, where("asking cuDNN's heuristic"),
                                  st.handle->handle, st.w, st.y, st.conv, st.x, kMax, &returned, perf);
        !s.ok()) {
      return s;
    }
    collect(perf);
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
    if (absl::Status s = HLOC_DNN(l, cudnnGetConvolutionBackwardFilterAlgorithm_v7, where("asking cuDNN's heuristic"),
                                  st.handle->handle, st.x, st.y, st.conv, st.w, kMax, &returned, perf);
        !s.ok()) {
      return s;
    }
    collect(perf);
  }
  // The graph-API path (XLA's for every cuDNN 9 convolution): same tensors, same padding.
  const char* env = std::getenv("HLOC_CUDNN_GRAPH");
  const char* fused_env = std::getenv("HLOC_CUDNN_FUSED_GRAPH");
  const char* one_d_env = std::getenv("HLOC_CUDNN_GRAPH_1D");
  if (env != nullptr && std::string(env) == "0") {
    st.graph_note = "graph API off (HLOC_CUDNN_GRAPH=0)";
  } else if (c.window.size() < 2 && one_d_env != nullptr && std::string(one_d_env) == "0") {
    st.graph_note = "graph API off for 1-D convolutions (HLOC_CUDNN_GRAPH_1D=0)";
  } else if (c.kind == "bias_activation_forward" && fused_env != nullptr && std::string(fused_env) == "0") {
    st.graph_note = "graph API off for fused convolutions (HLOC_CUDNN_FUSED_GRAPH=0)";
  } else {
    GraphConvProblem p;
    p.kind = c.kind;
    p.type = type->first;
    auto to64 = [](const NdShape& s) {
      return GraphConvTensor{std::vector<int64_t>(s.dims.begin(), s.dims.end()),
                             std::vector<int64_t>(s.strides.begin(), s.strides.end())};
    };
    p.x = to64(*xs), p.w = to64(*ws), p.y = to64(*ys);
    p.pre_padding.assign(pad.begin(), pad.end());
    p.post_padding.assign(pad.begin(), pad.end());  // as the legacy path: pad_low gives the output size
    p.stride.assign(stride.begin(), stride.end());
    p.dilation.assign(dil.begin(), dil.end());
    p.reversed = all_rev && !no_rev;
    p.allow_tf32 = st.tf32;
    p.alpha = c.conv_result_scale;
    p.alignment = ConvPlanState::kGraphAlignment;
    if (c.kind == "bias_activation_forward") {
      // [1, C, 1, ...], packed (as the legacy path's bias descriptor).
      p.bias.dims.assign(nd, 1);
      p.bias.dims[1] = features;
      p.bias.strides.assign(nd, 1);
      for (int i = nd - 2; i >= 0; --i) p.bias.strides[i] = p.bias.strides[i + 1] * p.bias.dims[i + 1];
      p.has_side = st.side >= 0;
      p.side_scale = c.side_input_scale;
      p.activation = c.activation;
    }
    absl::StatusOr<std::unique_ptr<CudnnGraphConv>> g = CudnnGraphConv::Create(st.handle->handle, p, int64_t{1} << 30);
    if (g.ok()) {
      st.graph = std::move(*g);
    } else {
      st.graph_note = std::string(g.status().message());
    }
  }
  if (st.heuristic.empty() && st.graph == nullptr) {
    return unimplemented(absl::StrCat("cuDNN's heuristic offers no algorithm (graph API: ", st.graph_note, ")"));
  }
  st.key = absl::StrCat(st.description, " fmt", static_cast<int>(format), " math", static_cast<int>(st.base_math));
  return plan;
}

absl::Status CudnnConvolution::Run(CUstream stream, const std::vector<CUdeviceptr>& args, CUdeviceptr workspace,
                                   int64_t workspace_bytes) const {
  const ConvPlanState& st = *state_;
  const CudnnLib& l = *st.lib;
  if (st.graph_plan >= 0 && st.GraphAligned(args)) {
    std::lock_guard<std::mutex> lock(st.handle->mu);
    cudnnHandle_t h = st.handle->handle;
    if (absl::Status s = HLOC_DNN(l, cudnnSetStream, st.Where("setting the stream"), h,
                                  reinterpret_cast<cudaStream_t>(stream));
        !s.ok()) {
      return s;
    }
    absl::Status s = state_->graph->Execute(h, static_cast<size_t>(st.graph_plan), st.GraphArgs(args), workspace,
                                            workspace_bytes);
    return s.ok() ? s : absl::Status(s.code(), st.Where(std::string(s.message())));
  }
  if (!st.have_algo) return absl::FailedPreconditionError(st.Where("running before an algorithm was chosen"));
  auto ptr = [&](int i) { return reinterpret_cast<void*>(args[i]); };
  void* ws = reinterpret_cast<void*>(workspace);
  const size_t ws_bytes = static_cast<size_t>(workspace_bytes);
  std::lock_guard<std::mutex> lock(st.handle->mu);
  cudnnHandle_t h = st.handle->handle;
  if (absl::Status s = HLOC_DNN(l, cudnnSetStream, st.Where("setting the stream"), h, reinterpret_cast<cudaStream_t>(stream));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = HLOC_DNN(l, cudnnSetConvolutionMathType, st.Where("setting the math type"), st.conv, st.chosen.math);
      !s.ok()) {
    return s;
  }
  const std::string& kind = st.spec.kind;
  if (kind == "forward") {
    return HLOC_DNN(l, cudnnConvolutionForward, st.Where("running"), h, st.Alpha(), st.x, ptr(st.in), st.w, ptr(st.filt),
                    st.conv, static_cast<cudnnConvolutionFwdAlgo_t>(st.chosen.algo), ws, ws_bytes, st.Beta(), st.y,
                    ptr(st.out));
  }
  if (kind == "backward_input") {
    return HLOC_DNN(l, cudnnConvolutionBackwardData, st.Where("running"), h, st.Alpha(), st.w, ptr(st.filt), st.y,
                    ptr(st.out), st.conv, static_cast<cudnnConvolutionBwdDataAlgo_t>(st.chosen.algo), ws, ws_bytes,
                    st.Beta(), st.x, ptr(st.in));
  }
  if (kind == "backward_filter") {
    return HLOC_DNN(l, cudnnConvolutionBackwardFilter, st.Where("running"), h, st.Alpha(), st.x, ptr(st.in), st.y,
                    ptr(st.out), st.conv, static_cast<cudnnConvolutionBwdFilterAlgo_t>(st.chosen.algo), ws, ws_bytes,
                    st.Beta(), st.w, ptr(st.filt));
  }
  // bias_activation_forward: y = act(alpha1 * conv(x, w) + alpha2 * z + bias); without a side
  // input z is y with alpha2 = 0 (cuDNN reads it, so it must be a valid tensor).
  void* z = st.side >= 0 ? ptr(st.side) : ptr(st.out);
  return HLOC_DNN(l, cudnnConvolutionBiasActivationForward, st.Where("running"), h, st.Alpha(), st.x, ptr(st.in), st.w,
                  ptr(st.filt), st.conv, static_cast<cudnnConvolutionFwdAlgo_t>(st.chosen.algo), ws, ws_bytes,
                  st.Alpha2(), st.y, z, st.bias, ptr(st.bias_arg), st.act, st.y, ptr(st.out));
}

namespace {

// How a legacy algorithm was chosen, with why the graph path is not in use.
std::string Legacy(const ConvPlanState& st, const std::string& how) {
  return absl::StrCat("legacy ", how, st.graph_note.empty() ? "" : absl::StrCat(" (graph API: ", st.graph_note, ")"));
}

// Chooses the graph plan: from the autotune cache (under its own key: the engine and knob
// text), the heuristic's first when not autotuning, else by timing every plan on our buffers.
// False (with graph_note set) when no plan can run here.
absl::StatusOr<bool> PrepareGraph(ConvPlanState& st, CUstream stream, const std::vector<CUdeviceptr>& args,
                                  CUdeviceptr workspace, int64_t workspace_bytes) {
  const CudnnLib& l = *st.lib;
  CudnnGraphConv& g = *st.graph;
  if (!st.GraphAligned(args)) {
    st.graph_note = absl::StrCat("a buffer is not ", ConvPlanState::kGraphAlignment, "-byte aligned");
    return false;
  }
  const std::vector<GraphPlanInfo>& plans = g.plans();
  const std::string key = absl::StrCat(st.options.profile.empty() ? "any" : st.options.profile, "|", st.ctx->info.name,
                                       "|cudnn-graph-", l.version, "|", st.key);
  auto choose = [&](size_t i, const std::string& how) {
    st.graph_plan = static_cast<int64_t>(i);
    st.chosen_by = absl::StrCat("graph ", plans[i].text, " (workspace ", plans[i].workspace, ") by ", how);
    return true;
  };
  if (st.options.cache != nullptr) {
    if (std::optional<AutotuneEntry> e = st.options.cache->Lookup(key)) {
      for (size_t i = 0; i < plans.size(); ++i)
        if (plans[i].text == e->algorithm && plans[i].workspace <= workspace_bytes) return choose(i, "cache");
    }
  }
  size_t first = plans.size();
  for (size_t i = 0; i < plans.size() && first == plans.size(); ++i)
    if (plans[i].workspace <= workspace_bytes) first = i;
  if (first == plans.size()) {
    st.graph_note = absl::StrCat("every plan needs more than the ", workspace_bytes, " bytes of workspace");
    return false;
  }
  if (!st.options.autotune || plans.size() == 1) return choose(first, absl::StrCat("heuristic (", g.summary(), ")"));
  absl::StatusOr<CudnnGraphConv::Timing> t;
  {
    std::lock_guard<std::mutex> lock(st.handle->mu);
    cudnnHandle_t h = st.handle->handle;
    if (absl::Status s = HLOC_DNN(l, cudnnSetStream, st.Where("setting the stream"), h,
                                  reinterpret_cast<cudaStream_t>(stream));
        !s.ok()) {
      return s;
    }
    t = g.Autotune(*st.ctx->driver, h, stream, st.GraphArgs(args), workspace, workspace_bytes);
  }
  if (!t.ok()) return absl::Status(t.status().code(), st.Where(std::string(t.status().message())));
  if (t->best < 0) {
    st.graph_note = absl::StrCat("none of ", t->tried, " plans ran (", g.summary(), ")");
    return false;
  }
  if (st.options.cache != nullptr) st.options.cache->Insert(key, AutotuneEntry{plans[t->best].text, t->best_us});
  return choose(static_cast<size_t>(t->best),
                absl::StrFormat("autotune, %.1f us (%s; timed: %s)", t->best_us, g.summary(), t->table));
}

}  // namespace

absl::Status CudnnConvolution::Prepare(CUstream stream, const std::vector<CUdeviceptr>& args, CUdeviceptr workspace,
                                       int64_t workspace_bytes) {
  ConvPlanState& st = *state_;
  const CudnnLib& l = *st.lib;
  const std::string full_key = absl::StrCat(st.options.profile.empty() ? "any" : st.options.profile, "|",
                                            st.ctx->info.name, "|cudnn-", l.version, "|", st.key);
  std::vector<Candidate> fits;
  for (const Candidate& k : st.heuristic)
    if (static_cast<int64_t>(k.memory) <= workspace_bytes) fits.push_back(k);
  if (st.graph != nullptr) {
    // The legacy heuristic's choice stays the fallback (buffers that lose the graph plans'
    // declared alignment); the graph plan is chosen here.
    if (!fits.empty()) st.chosen = fits[0], st.have_algo = true;
    absl::StatusOr<bool> chose = PrepareGraph(st, stream, args, workspace, workspace_bytes);
    if (!chose.ok()) return chose.status();
    if (*chose) return absl::OkStatus();
    st.graph = nullptr;  // no plan can run: legacy from here on
  }
  if (fits.empty()) {
    return absl::ResourceExhaustedError(st.Where(absl::StrCat("every cuDNN algorithm needs more workspace than the ",
                                                              workspace_bytes, " bytes given")));
  }
  if (st.options.cache != nullptr) {
    if (std::optional<AutotuneEntry> e = st.options.cache->Lookup(full_key)) {
      for (const Candidate& k : fits) {
        if (absl::StrCat(k.algo, ":", static_cast<int>(k.math)) == e->algorithm) {
          st.chosen = k;
          st.have_algo = true;
          st.chosen_by = Legacy(st, "cache");
          return absl::OkStatus();
        }
      }
    }
  }
  st.chosen = fits[0];
  st.have_algo = true;
  st.chosen_by = Legacy(st, "heuristic");
  if (!st.options.autotune || fits.size() == 1 || st.spec.kind == "bias_activation_forward") return absl::OkStatus();
  // Time the algorithms that fit with cuDNN's own Find (on our buffers and workspace).
  constexpr int kMax = 16;
  int returned = 0;
  std::vector<Candidate> timed;
  auto ptr = [&](int i) { return reinterpret_cast<void*>(args[i]); };
  void* ws = reinterpret_cast<void*>(workspace);
  absl::Status s;
  {
    std::lock_guard<std::mutex> lock(st.handle->mu);
    cudnnHandle_t h = st.handle->handle;
    s = HLOC_DNN(l, cudnnSetStream, st.Where("setting the stream"), h, reinterpret_cast<cudaStream_t>(stream));
    auto collect = [&](const auto* perf) {
      for (int i = 0; i < returned; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && static_cast<int64_t>(perf[i].memory) <= workspace_bytes)
          timed.push_back({static_cast<int>(perf[i].algo), perf[i].mathType, perf[i].memory, perf[i].time});
    };
    if (s.ok() && st.spec.kind == "forward") {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      s = HLOC_DNN(l, cudnnFindConvolutionForwardAlgorithmEx, st.Where("autotuning"), h, st.x, ptr(st.in), st.w,
                   ptr(st.filt), st.conv, st.y, ptr(st.out), kMax, &returned, perf, ws, workspace_bytes);
      if (s.ok()) collect(perf);
    } else if (s.ok() && st.spec.kind == "backward_input") {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      s = HLOC_DNN(l, cudnnFindConvolutionBackwardDataAlgorithmEx, st.Where("autotuning"), h, st.w, ptr(st.filt), st.y,
                   ptr(st.out), st.conv, st.x, ptr(st.in), kMax, &returned, perf, ws, workspace_bytes);
      if (s.ok()) collect(perf);
    } else if (s.ok()) {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
      s = HLOC_DNN(l, cudnnFindConvolutionBackwardFilterAlgorithmEx, st.Where("autotuning"), h, st.x, ptr(st.in), st.y,
                   ptr(st.out), st.conv, st.w, ptr(st.filt), kMax, &returned, perf, ws, workspace_bytes);
      if (s.ok()) collect(perf);
    }
  }
  // Find failing is not fatal: the heuristic's choice stands (Run reports real errors).
  if (!s.ok() || timed.empty()) return absl::OkStatus();
  auto best = std::min_element(timed.begin(), timed.end(), [](const Candidate& a, const Candidate& b) { return a.time < b.time; });
  st.chosen = *best;
  st.chosen_by = Legacy(st, absl::StrCat("autotune (", timed.size(), " algorithms)"));
  if (st.options.cache != nullptr) {
    st.options.cache->Insert(full_key, AutotuneEntry{absl::StrCat(best->algo, ":", static_cast<int>(best->math)),
                                                     1000.0 * best->time});
  }
  return absl::OkStatus();
}

}  // namespace hloc::runtime::gpu
#endif  // HLOC_HAVE_CUDA
