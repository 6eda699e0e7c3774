// kConvolution thunks with target "__onednn$convolution" (issue 16 part 4; made by the CPU
// pipeline's onednn-convolution-rewriter, src/passes/library/onednn_convolution_rewriter.h): an
// f32 convolution run by oneDNN (Debian's libdnnl, OpenMP runtime). One CpuOneDnnConv per thunk
// and device, made once when the executable loads, bound to the executable's own buffers (they
// never move): the convolution primitive (oneDNN picks its blocked formats, format_tag::any) and
// the reorders from HLO's layouts (strided memory descriptors for any dim_labels and
// minor_to_major) into them and back; the batch is split into one part per thread of hloc's pool
// (--threads), each part its own primitive execution with its own scratchpad on one OpenMP thread
// (OpenMP's team, whose threads spin at barriers, only for a batch of one). Grouped convolutions
// (depthwise included) read the kernel as oneDNN's {G, O/G, I/G, spatial...} view of HLO's
// kernel. A base-dilated (transposed) convolution runs as oneDNN's deconvolution: strides = lhs
// dilation, the window flipped into a private copy of the kernel on each run.
// Builds without oneDNN (HLOC_HAVE_ONEDNN unset: the static build) refuse such thunks at load.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace hloc::runtime {

class ThreadPool;

inline constexpr const char* kOneDnnConvolutionTarget = "__onednn$convolution";

class CpuOneDnnConv {
 public:
  // `config`: the thunk's backend_config (codegen/cpu/cpu_onednn_conv.cc); lhs, rhs and out the
  // thunk's slices with their sizes in bytes (checked against the shapes here).
  static absl::StatusOr<std::unique_ptr<CpuOneDnnConv>> Create(const std::string& config, const void* lhs,
                                                               int64_t lhs_bytes, const void* rhs, int64_t rhs_bytes,
                                                               void* out, int64_t out_bytes, int threads);
  virtual ~CpuOneDnnConv() = default;
  // Runs the convolution on the bound buffers, its batch split into parts over `pool`. One
  // caller at a time.
  virtual absl::Status Run(ThreadPool* pool) = 0;
};

// Whether this build runs oneDNN convolutions; its version ("oneDNN 2.6.3") or "none".
bool OneDnnAvailable();
std::string OneDnnVersion();

}  // namespace hloc::runtime
