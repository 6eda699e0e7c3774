// cublas-gemm-rewriter (XLA's GemmRewriter, xla/service/gpu/transforms/gemm_rewriter.cc, the
// non-FP8 path): a dot that is a matrix-matrix or matrix-vector product becomes a custom-call
// to cuBLASLt ("__cublas$lt$matmul") or, where cuBLASLt lacks the type combination, legacy
// cuBLAS ("__cublas$gemm"), with XLA's GemmBackendConfig. Then, bottom-up as XLA's visitor goes:
//   multiply(gemm, broadcast(c))            -> alpha *= c
//   add(gemm, broadcast(vector))            -> epilogue BIAS (cuBLASLt)
//   add(gemm, matrix) / add(convert(gemm),m) -> beta = 1, C operand (output type = C's)
//   maximum(gemm, broadcast(0))             -> epilogue RELU / BIAS_RELU (cuBLASLt)
//   x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
//                                           -> epilogue GELU / BIAS_GELU (*_AUX when x has
//                                              other users: a second output)
//   convert(gemm) to a narrower float       -> the GEMM writes that type (hloc; option)
// (the patterns also see through a slice, e.g. of cublas-pad-for-gemms, and a bitcast; each is a
// LibraryPattern record in rules/library/GemmEpilogues.td that a pipeline switches by name), and
// finally every GEMM gets XLA's workspace: the result becomes (D[, aux], s8[workspace]) with
// 32 MiB on Hopper and later, 4 MiB before (legacy cuBLAS: at most the operands' bytes).
// Operands whose batch/row/column dimensions cuBLAS cannot address with its two strides are
// transposed to [batch..., rows, cols] first (XLA leaves this to layout assignment).
//
// A no-op under a CPU profile. Dots below `size_threshold` that the GPU's classical emitters
// handle (f16/bf16/f32 results) stay dots, as XLA's xla_gpu_gemm_rewrite_size_threshold does.
#pragma once
#include "engine/pass.h"

namespace hloc {

class GemmRewriter : public HloPass {
 public:
  static constexpr const char* kName = "cublas-gemm-rewriter";
  struct Options {
    int64_t size_threshold = 100;     // xla_gpu_gemm_rewrite_size_threshold
    bool enable_cublaslt = true;      // xla_gpu_enable_cublaslt (XLA's default on NVIDIA: true)
    bool fuse_bias = true;            // GemmRewriterOptions::BiasMode (kBias / kNoBias)
    bool fuse_output_convert = true;  // convert(gemm) to a narrower float type
  };
  explicit GemmRewriter(Options options) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  Options options_;
};

}  // namespace hloc
