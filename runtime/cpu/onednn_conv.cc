// oneDNN convolutions (onednn_conv.h).
#include "runtime/cpu/onednn_conv.h"

#include "absl/strings/str_cat.h"
#include "runtime/cpu/thread_pool.h"

#if defined(HLOC_HAVE_ONEDNN) && HLOC_HAVE_ONEDNN
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "nlohmann/json.hpp"
#include "oneapi/dnnl/dnnl.hpp"
#endif

namespace hloc::runtime {

#if defined(HLOC_HAVE_ONEDNN) && HLOC_HAVE_ONEDNN
namespace {

using dnnl::memory;

dnnl::engine& CpuEngine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// Element strides of each logical dimension of an array in its minor_to_major layout.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major) {
  std::vector<int64_t> st(dims.size(), 0);
  int64_t n = 1;
  for (int64_t d : minor_to_major) {
    st[d] = n;
    n *= dims[d];
  }
  return st;
}

struct ArrayDesc {
  std::vector<int64_t> dims, strides;
  int64_t Bytes() const {  // the extent the strided view reads, in bytes
    int64_t last = 0;
    for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * strides[i];
    return (last + 1) * 4;
  }
};

class OneDnnConvImpl : public CpuOneDnnConv {
 public:
  absl::Status Build(const std::string& config, const void* lhs, int64_t lhs_bytes, const void* rhs,
                     int64_t rhs_bytes, void* out, int64_t out_bytes, int threads) {
    threads_ = std::max(1, threads);
    nlohmann::json j = nlohmann::json::parse(config);
    auto shape = [&](const char* key, ArrayDesc& a) -> absl::Status {
      a.dims = j.at(key).at("dims").get<std::vector<int64_t>>();
      std::vector<int64_t> m2m = j.at(key).at("minor_to_major").get<std::vector<int64_t>>();
      if (m2m.size() != a.dims.size()) return absl::InvalidArgumentError(absl::StrCat(key, ": layout rank"));
      std::vector<bool> seen(a.dims.size(), false);
      for (int64_t d : m2m) {
        if (d < 0 || d >= static_cast<int64_t>(a.dims.size()) || seen[d])
          return absl::InvalidArgumentError(absl::StrCat(key, ": minor_to_major is not a permutation"));
        seen[d] = true;
      }
      for (int64_t d : a.dims)
        if (d <= 0) return absl::InvalidArgumentError(absl::StrCat(key, ": empty dimension"));
      a.strides = Strides(a.dims, m2m);
      return absl::OkStatus();
    };
    ArrayDesc l, r, o;
    if (absl::Status s = shape("lhs", l); !s.ok()) return s;
    if (absl::Status s = shape("rhs", r); !s.ok()) return s;
    if (absl::Status s = shape("out", o); !s.ok()) return s;
    if (l.Bytes() > lhs_bytes || r.Bytes() > rhs_bytes || o.Bytes() > out_bytes)
      return absl::InvalidArgumentError("the shapes do not fit the thunk's slices");
    const int64_t ib = j.at("input_batch"), ifeat = j.at("input_feature");
    const int64_t kif = j.at("kernel_input_feature"), kof = j.at("kernel_output_feature");
    const int64_t ob = j.at("output_batch"), of = j.at("output_feature");
    const auto is = j.at("input_spatial").get<std::vector<int64_t>>();
    const auto ks = j.at("kernel_spatial").get<std::vector<int64_t>>();
    const auto os = j.at("output_spatial").get<std::vector<int64_t>>();
    const auto strides = j.at("strides").get<std::vector<int64_t>>();
    const auto pad_lo = j.at("pad_lo").get<std::vector<int64_t>>();
    const auto pad_hi = j.at("pad_hi").get<std::vector<int64_t>>();
    const auto dilation = j.at("dilation").get<std::vector<int64_t>>();
    const int64_t groups = j.at("groups");
    const auto lhs_dilation =
        j.contains("lhs_dilation") ? j.at("lhs_dilation").get<std::vector<int64_t>>() : std::vector<int64_t>(is.size(), 1);
    bool deconv = false;
    for (int64_t d : lhs_dilation) deconv |= d != 1;
    const size_t ns = is.size();
    const size_t rank = ns + 2;
    if (ns < 1 || ns > 3 || ks.size() != ns || os.size() != ns || strides.size() != ns || pad_lo.size() != ns ||
        pad_hi.size() != ns || dilation.size() != ns || lhs_dilation.size() != ns || l.dims.size() != rank || r.dims.size() != rank ||
        o.dims.size() != rank || groups < 1)
      return absl::InvalidArgumentError("inconsistent convolution config");
    auto in_range = [&](int64_t d) { return d >= 0 && d < static_cast<int64_t>(rank); };
    for (int64_t d : {ib, ifeat, kif, kof, ob, of})
      if (!in_range(d)) return absl::InvalidArgumentError("dimension number out of range");
    for (size_t i = 0; i < ns; ++i)
      if (!in_range(is[i]) || !in_range(ks[i]) || !in_range(os[i]))
        return absl::InvalidArgumentError("dimension number out of range");

    // Logical oneDNN views: src {N, C, spatial}, weights {[G,] O/G, I/G, spatial}, dst {N, O, spatial}.
    memory::dims sd, ss, wd, ws, dd, ds;
    sd = {l.dims[ib], l.dims[ifeat]};
    ss = {l.strides[ib], l.strides[ifeat]};
    dd = {o.dims[ob], o.dims[of]};
    ds = {o.strides[ob], o.strides[of]};
    const int64_t out_features = r.dims[kof];
    if (out_features % groups != 0 || l.dims[ifeat] != r.dims[kif] * groups || o.dims[of] != out_features)
      return absl::InvalidArgumentError("feature counts do not match the groups");
    if (groups > 1) {
      wd = {groups, out_features / groups, r.dims[kif]};
      ws = {r.strides[kof] * (out_features / groups), r.strides[kof], r.strides[kif]};
    } else {
      wd = {out_features, r.dims[kif]};
      ws = {r.strides[kof], r.strides[kif]};
    }
    memory::dims st, dil, pl, pr;
    for (size_t i = 0; i < ns; ++i) {
      sd.push_back(l.dims[is[i]]);
      ss.push_back(l.strides[is[i]]);
      wd.push_back(r.dims[ks[i]]);
      ws.push_back(r.strides[ks[i]]);
      dd.push_back(o.dims[os[i]]);
      ds.push_back(o.strides[os[i]]);
      dil.push_back(dilation[i] - 1);  // oneDNN counts the holes: 0 is a dense window
      if (!deconv) {
        if (strides[i] < 1 || dilation[i] < 1 || pad_lo[i] < 0 || pad_hi[i] < 0)
          return absl::InvalidArgumentError("unsupported window");
        st.push_back(strides[i]);
        pl.push_back(pad_lo[i]);
        pr.push_back(pad_hi[i]);
        continue;
      }
      // A base-dilated convolution is oneDNN's deconvolution (the gradient of a convolution with
      // respect to its input) with the window flipped: output o gets input i through window
      // element k where o = i * lhs_dilation + pad_lo - k * dilation, and deconvolution's
      // o = i * stride - padding_l + k' * dilation with k' = size - 1 - k.
      const int64_t span = (r.dims[ks[i]] - 1) * dilation[i];
      if (strides[i] != 1 || dilation[i] < 1 || lhs_dilation[i] < 1 || span - pad_lo[i] < 0 || span - pad_hi[i] < 0)
        return absl::InvalidArgumentError("unsupported base-dilated window");
      st.push_back(lhs_dilation[i]);
      pl.push_back(span - pad_lo[i]);
      pr.push_back(span - pad_hi[i]);
    }
    // Threads: hloc's pool splits the batch into parts, each run by one primitive execution on
    // one OpenMP thread (omp_set_num_threads(1) on that pool thread). OpenMP's own team is used
    // only for a batch of one: its threads spin at barriers (OMP_WAIT_POLICY is read when libgomp
    // loads, before hloc runs), which on a loaded machine costs more than the convolution.
    const int64_t batch = sd[0];
    const int64_t parts = batch >= 2 ? std::min<int64_t>(threads_, batch) : 1;
    omp_threads_ = parts == 1 && batch == 1 ? threads_ : 1;
    const auto f32 = memory::data_type::f32;
    dnnl::engine& eng = CpuEngine();
    omp_set_num_threads(omp_threads_);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // one scratchpad per part: parts run at once
    const memory::desc wei_user(wd, f32, ws);
    memory::desc wei_fixed;  // the weights format of the first part's primitive, kept for the others
    auto make_pd = [&](const memory::desc& src, const memory::desc& wei, const memory::desc& dst)
        -> std::pair<dnnl::primitive, dnnl::primitive_desc_base> {
#if DNNL_VERSION_MAJOR >= 3
      if (!deconv) {
        dnnl::convolution_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_inference,
                                                     dnnl::algorithm::convolution_direct, src, wei, dst, st, dil, pl,
                                                     pr, attr);
        return {dnnl::convolution_forward(pd), pd};
      }
      dnnl::deconvolution_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_inference,
                                                     dnnl::algorithm::deconvolution_direct, src, wei, dst, st, dil,
                                                     pl, pr, attr);
      return {dnnl::deconvolution_forward(pd), pd};
#else
      if (!deconv) {
        dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             src, wei, dst, st, dil, pl, pr);
        dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
        return {dnnl::convolution_forward(pd), pd};
      }
      dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                             dnnl::algorithm::deconvolution_direct, src, wei, dst, st, dil, pl, pr);
      dnnl::deconvolution_forward::primitive_desc pd(desc, attr, eng);
      return {dnnl::deconvolution_forward(pd), pd};
#endif
    };
    // A user memory and the primitive's own format: a reorder between them where they differ.
    auto stage = [&](const memory::desc& want, const memory& user, Staged& st_out, bool to_user) {
      st_out.user = user;
      if (want == user.get_desc()) {
        st_out.mem = user;
        return;
      }
      st_out.mem = memory(want, eng);
      dnnl::reorder::primitive_desc rpd = to_user ? dnnl::reorder::primitive_desc(st_out.mem, user, attr)
                                                  : dnnl::reorder::primitive_desc(user, st_out.mem, attr);
      st_out.reorder = dnnl::reorder(rpd);
      st_out.scratch = memory(rpd.scratchpad_desc(), eng);
      st_out.staged = true;
    };
    if (deconv) {
      // The flipped window, in the kernel's own layout: flip_from_[e] is the element of rhs that
      // element e of the flipped copy holds.
      const int64_t n = r.Bytes() / 4;
      flipped_.assign(n, 0.0f);
      flip_from_.assign(n, 0);
      std::vector<int64_t> index(rank, 0);
      std::vector<bool> spatial(rank, false);
      for (int64_t d : ks) spatial[d] = true;
      for (int64_t e = 0; e < n; ++e) {
        int64_t from = 0, to = 0;
        for (size_t d = 0; d < rank; ++d) {
          from += index[d] * r.strides[d];
          to += (spatial[d] ? r.dims[d] - 1 - index[d] : index[d]) * r.strides[d];
        }
        flip_from_[to] = from;
        for (size_t d = rank; d-- > 0;) {
          if (++index[d] < r.dims[d]) break;
          index[d] = 0;
        }
      }
      rhs_ = static_cast<const float*>(rhs);
    }
    const memory wei_user_mem(wei_user, eng, deconv ? static_cast<void*>(flipped_.data()) : const_cast<void*>(rhs));
    parts_.resize(parts);
    int64_t b0 = 0;
    for (int64_t p = 0; p < parts; ++p) {
      const int64_t nb = batch / parts + (p < batch % parts ? 1 : 0);
      memory::dims psd = sd, pdd = dd;
      psd[0] = nb;
      pdd[0] = nb;
      const memory::desc src_user(psd, f32, ss), dst_user(pdd, f32, ds);
      const memory::desc src_any(psd, f32, memory::format_tag::any), dst_any(pdd, f32, memory::format_tag::any);
      const memory::desc wei_want = p == 0 ? memory::desc(wd, f32, memory::format_tag::any) : wei_fixed;
      auto [prim, pd] = make_pd(src_any, wei_want, dst_any);
      Part& part = parts_[p];
      part.conv = prim;
      part.stream = dnnl::stream(eng);
      part.scratch = memory(pd.scratchpad_desc(), eng);
      const char* src_ptr = static_cast<const char*>(lhs) + b0 * ss[0] * 4;
      char* dst_ptr = static_cast<char*>(out) + b0 * ds[0] * 4;
      stage(pd.src_desc(), memory(src_user, eng, const_cast<char*>(src_ptr)), part.src, false);
      stage(pd.dst_desc(), memory(dst_user, eng, dst_ptr), part.dst, true);
      if (p == 0) {
        wei_fixed = pd.weights_desc();
        stage(wei_fixed, wei_user_mem, wei_, false);
        impl_ = pd.impl_info_str();
      }
      b0 += nb;
    }
    return absl::OkStatus();
  }

  absl::Status Run(ThreadPool* pool) override {
    try {
      omp_set_num_threads(omp_threads_);
      if (rhs_ != nullptr) {
        const int64_t n = static_cast<int64_t>(flipped_.size());
        for (int64_t e = 0; e < n; ++e) flipped_[e] = rhs_[flip_from_[e]];
      }
      if (wei_.staged) {
        wei_.reorder.execute(parts_[0].stream,
                             {{DNNL_ARG_FROM, wei_.user}, {DNNL_ARG_TO, wei_.mem}, {DNNL_ARG_SCRATCHPAD, wei_.scratch}});
        parts_[0].stream.wait();
      }
    } catch (const dnnl::error& e) {
      return absl::InternalError(absl::StrCat("oneDNN convolution (", impl_, "): ", e.what()));
    }
    const int64_t n = static_cast<int64_t>(parts_.size());
    std::vector<std::string> errors(n);
    auto run_part = [&](int64_t p) {
      Part& part = parts_[p];
      try {
        omp_set_num_threads(omp_threads_);
        if (part.src.staged)
          part.src.reorder.execute(part.stream, {{DNNL_ARG_FROM, part.src.user},
                                                 {DNNL_ARG_TO, part.src.mem},
                                                 {DNNL_ARG_SCRATCHPAD, part.src.scratch}});
        part.conv.execute(part.stream, {{DNNL_ARG_SRC, part.src.mem},
                                        {DNNL_ARG_WEIGHTS, wei_.mem},
                                        {DNNL_ARG_DST, part.dst.mem},
                                        {DNNL_ARG_SCRATCHPAD, part.scratch}});
        if (part.dst.staged)
          part.dst.reorder.execute(part.stream, {{DNNL_ARG_FROM, part.dst.mem},
                                                 {DNNL_ARG_TO, part.dst.user},
                                                 {DNNL_ARG_SCRATCHPAD, part.dst.scratch}});
        part.stream.wait();
      } catch (const dnnl::error& e) {
        errors[p] = e.what();
      }
    };
    if (n == 1 || pool == nullptr) {
      for (int64_t p = 0; p < n; ++p) run_part(p);
    } else {
      pool->ParallelFor(n, run_part);
    }
    for (const std::string& e : errors)
      if (!e.empty()) return absl::InternalError(absl::StrCat("oneDNN convolution (", impl_, "): ", e));
    return absl::OkStatus();
  }

 private:
  struct Staged {  // a user memory, the primitive's copy of it and the reorder between them
    memory user, mem, scratch;
    dnnl::reorder reorder;
    bool staged = false;
  };
  struct Part {  // one slice of the batch
    dnnl::primitive conv;  // convolution_forward, or deconvolution_forward for base dilation
    dnnl::stream stream;
    memory scratch;
    Staged src, dst;
  };
  int threads_ = 1;
  int omp_threads_ = 1;
  std::string impl_;
  const float* rhs_ = nullptr;  // deconvolution: the kernel, flipped into flipped_ on each run
  std::vector<float> flipped_;
  std::vector<int64_t> flip_from_;
  Staged wei_;
  std::vector<Part> parts_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CpuOneDnnConv>> CpuOneDnnConv::Create(const std::string& config, const void* lhs,
                                                                     int64_t lhs_bytes, const void* rhs,
                                                                     int64_t rhs_bytes, void* out, int64_t out_bytes,
                                                                     int threads) {
  auto conv = std::make_unique<OneDnnConvImpl>();
  try {
    absl::Status s = conv->Build(config, lhs, lhs_bytes, rhs, rhs_bytes, out, out_bytes, threads);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("oneDNN convolution: ", s.message()));
  } catch (const dnnl::error& e) {
    return absl::InvalidArgumentError(absl::StrCat("oneDNN convolution: ", e.what()));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("oneDNN convolution config: ", e.what()));
  }
  return std::unique_ptr<CpuOneDnnConv>(std::move(conv));
}

bool OneDnnAvailable() { return true; }

std::string OneDnnVersion() {
  const dnnl_version_t* v = dnnl_version();
  return absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch);
}

#else  // no oneDNN in this build

absl::StatusOr<std::unique_ptr<CpuOneDnnConv>> CpuOneDnnConv::Create(const std::string&, const void*, int64_t,
                                                                     const void*, int64_t, void*, int64_t, int) {
  return absl::UnimplementedError(
      "this hloc was built without oneDNN (the static build): recompile the module with it, whose "
      "convolutions then stay elemental kernels");
}

bool OneDnnAvailable() { return false; }
std::string OneDnnVersion() { return "none"; }

#endif

}  // namespace hloc::runtime
