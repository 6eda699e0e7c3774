//===- rules/library/GemmEpilogues.td - what a cuBLAS GEMM call absorbs --------===//
//
// The epilogue patterns of cublas-gemm-rewriter (XLA's GemmRewriterVisitor, the non-FP8 path:
// xla/service/gpu/transforms/gemm_rewriter.cc). The pass first turns dots into GEMM calls
// (C++, HandleDot); then, visiting operands before users, it tries these patterns on each
// instruction whose opcode is a pattern's Root, in this file's order (the first that fires
// wins). `gemm` is a __cublas$lt$matmul or __cublas$gemm call, `lt_matmul` a cuBLASLt one.
// Each pattern keeps the value the HLO computed; its C++ (src/passes/library/gemm_epilogues.cc,
// whose header lists the refusals) refuses where XLA's fusion would change it.
//===----------------------------------------------------------------------===//

include "base/Library.td"

def : CppHeader<"passes/library/gemm_rewriter_internal.h">;

def ReadsGemmCall : LibraryConstraint<
    "an operand of $x is a GEMM call, or a convert, bitcast, slice or bitcast(slice) of one",
    "library::gemm::ReadsGemmCall">;
def ReadsLtMatmul : LibraryConstraint<
    "an operand of $x is a cuBLASLt call, or a bitcast, slice or bitcast(slice) of one",
    "library::gemm::ReadsLtMatmul">;
def HasBroadcastOperand : LibraryConstraint<"an operand of $x is a broadcast",
                                            "library::gemm::HasBroadcastOperand">;
def HasScalarConstantBroadcastOperand : LibraryConstraint<
    "an operand of $x is a broadcast of a rank-0 constant", "library::gemm::HasScalarConstantBroadcastOperand">;
def HasZeroBroadcastOperand : LibraryConstraint<"an operand of $x is a broadcast of the scalar 0",
                                                "library::gemm::HasZeroBroadcastOperand">;
def NarrowsFloat : LibraryConstraint<"$x converts a float to a narrower float", "library::gemm::NarrowsFloat">;
def FuseBiasOn : LibraryConstraint<"the pass's fuse_bias option is on (XLA's GemmRewriterOptions::BiasMode)",
                                   "library::gemm::FuseBiasOn">;
def FuseOutputConvertOn : LibraryConstraint<"the pass's fuse_output_convert option is on",
                                            "library::gemm::FuseOutputConvertOn">;

// multiply(gemm, broadcast(c)) => the GEMM with alpha *= c
def GemmAlphaScale : LibraryPattern<"cublas-gemm-rewriter", Multiply, "library::gemm::AbsorbAlpha",
    [(ReadsGemmCall $root), (HasScalarConstantBroadcastOperand $root)]> {
  let Matches = "multiply(gemm, broadcast(constant scalar)), operands in either order; the GEMM has no other user, "
                "beta = 0 and no epilogue";
  let Sets = "alpha";
  let Reference = "GemmRewriterVisitor::HandleMultiply";
  let Group = "GemmScaling";
}

// x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))) with x = gemm => epilogue GELU
def GemmGeluEpilogue : LibraryPattern<"cublas-gemm-rewriter", Multiply, "library::gemm::AbsorbGelu",
    [(ReadsLtMatmul $root)]> {
  let Matches = "multiply(x, multiply(0.5, add(1, tanh(multiply(sqrt(2/pi), add(x, multiply(0.044715, "
                "multiply(x, multiply(x, x))))))))), any operand order, x = OptionalSliceOrBitcast(lt_matmul)";
  let Epilogues = [EpilogueGelu, EpilogueBiasGelu, EpilogueGeluAux, EpilogueBiasGeluAux];
  let Reference = "GemmRewriterVisitor::HandleMultiply (GeluApproximate)";
  let Group = "GemmActivations";
}

// add(gemm, broadcast(vector)) => epilogue BIAS
def GemmVectorBiasEpilogue : LibraryPattern<"cublas-gemm-rewriter", Add, "library::gemm::AbsorbVectorBias",
    [(FuseBiasOn), (ReadsLtMatmul $root), (HasBroadcastOperand $root)]> {
  let Matches = "add(OptionalBitcast(OptionalSlice(lt_matmul)), broadcast(vector)) with the vector along the "
                "output's minor (column) dimensions";
  let Epilogues = [EpilogueBias];
  let Reference = "GemmRewriterVisitor::HandleAdd (FuseVectorBiasAdd)";
  let Group = "GemmBias";
}

// add(gemm, c) => the GEMM with beta = 1 and C = c
def GemmMatrixAddend : LibraryPattern<"cublas-gemm-rewriter", Add, "library::gemm::AbsorbMatrixAddend",
    [(FuseBiasOn), (ReadsGemmCall $root)]> {
  let Matches = "add(OptionalConvert(gemm), c), add(bitcast(gemm), c) (the add moved below the bitcast first) or "
                "add(OptionalBitcast(OptionalSlice(gemm)), c); c not a broadcast";
  let Epilogues = [EpilogueDefault];
  let Sets = "beta = 1 and the C operand (the output type becomes C's)";
  let Reference = "GemmRewriterVisitor::HandleAdd (FuseMatrixBiasAdd)";
  let Group = "GemmBias";
}

// maximum(gemm, broadcast(0)) => epilogue RELU
def GemmReluEpilogue : LibraryPattern<"cublas-gemm-rewriter", Maximum, "library::gemm::AbsorbRelu",
    [(ReadsLtMatmul $root), (HasZeroBroadcastOperand $root)]> {
  let Matches = "maximum(OptionalSliceOrBitcast(lt_matmul), broadcast(0)), operands in either order";
  let Epilogues = [EpilogueRelu, EpilogueBiasRelu];
  let Reference = "GemmRewriterVisitor::HandleMaximum";
  let Group = "GemmActivations";
}

// convert(gemm) to a narrower float => the GEMM writes that type (hloc; XLA has no such fusion)
def GemmNarrowingConvert : LibraryPattern<"cublas-gemm-rewriter", Convert, "library::gemm::AbsorbOutputConvert",
    [(FuseOutputConvertOn), (ReadsGemmCall $root), (NarrowsFloat $root)]> {
  let Matches = "convert(gemm) to a narrower float type that cuBLAS(Lt) writes for the GEMM's operand types; "
                "beta = 0 and no bias or aux epilogue";
  let Sets = "the output element type";
  let Reference = "none (hloc): the GEMM rounds once, straight to the narrower type";
  let Group = "GemmOutputType";
}
