//===- rules/base/Library.td - library patterns: what a library call absorbs -----===//
//
// A library pattern is one way a library pass (src/passes/library/) folds the HLO around a
// library call into the call itself: a cuBLASLt epilogue, alpha, a C operand, an output type.
// Each LibraryPattern record in a rules/library/*.td file becomes a row of the LibraryPatternInfo
// table (src/engine/rule_tables.h) through hloc-tblgen --gen-library:
//
//   // maximum(gemm, broadcast(0)) -> epilogue RELU (BIAS_RELU after a bias)
//   def GemmReluEpilogue : LibraryPattern<"cublas-gemm-rewriter", Maximum,
//       "library::gemm::FuseRelu", [(ReadsLtMatmul $root), (HasZeroBroadcastOperand $root)]> {
//     let Matches = "maximum(OptionalSliceOrBitcast(lt_matmul), broadcast(0))";
//     let Epilogues = [EpilogueRelu, EpilogueBiasRelu];
//     let Reference = "GemmRewriterVisitor::HandleMaximum";
//   }
//
// The pass visits its instructions as before; for an instruction whose opcode is a pattern's
// Root it tries the switched-on patterns of that opcode in file order, and the first that
// changes the module wins. A pattern's Constraints are LibraryConstraint records called on
// `$root` and literals (as a fusion veto's conditions are), all of which must hold; then the C++
// function `Fn` matches the rest and builds the call. hloc-tblgen emits a call to `Fn` (a
// function pointer in the table), so renaming a record changes no behaviour, and a misspelt
// Fn is a compile error of the generated file.
//
// A pipeline entry switches patterns by name or Group like rewrite rules and fusion vetoes:
//   - pass: cublas-gemm-rewriter
//     rules: {disable: [GemmReluEpilogue]}
// and an unknown name is an error at its FILE:LINE:COL. --trace-rules prints each firing as
// rewrite rules do: `[cublas-gemm-rewriter] GemmReluEpilogue (rules/library/GemmEpilogues.td:N)`.
//
// Signatures (namespace as written in the Fn; `Rewrite` is library::gemm::Rewrite, the GEMM
// rewriter's state, gemm_rewriter_internal.h):
//   LibraryPattern's Fn:  absl::Status Fn(Rewrite& rw, HloInstruction* root)
//                         (changes the module through Replace, which sets rw.changed)
//   LibraryConstraint:    bool Fn(const Rewrite& rw, <args: const HloInstruction* or int64_t /
//                         const char*>); (Unless (C ...)) negates one.
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_LIBRARY_TD
#define HLOC_BASE_LIBRARY_TD

include "base/Dsl.td"
include "base/Ops.td"

// A cuBLASLt epilogue (GemmBackendConfig's `epilogue`, XLA's names).
class CublasLtEpilogue<string name> {
  string Name = name;
}
def EpilogueDefault : CublasLtEpilogue<"DEFAULT">;
def EpilogueBias : CublasLtEpilogue<"BIAS">;
def EpilogueRelu : CublasLtEpilogue<"RELU">;
def EpilogueBiasRelu : CublasLtEpilogue<"BIAS_RELU">;
def EpilogueGelu : CublasLtEpilogue<"GELU">;
def EpilogueGeluAux : CublasLtEpilogue<"GELU_AUX">;
def EpilogueBiasGelu : CublasLtEpilogue<"BIAS_GELU">;
def EpilogueBiasGeluAux : CublasLtEpilogue<"BIAS_GELU_AUX">;

// A named precondition of a library pattern (C++ in the pass's own files).
class LibraryConstraint<string summary, string fn> {
  string Summary = summary;
  string Fn = fn;
}

class LibraryPattern<string pass, Op root, string fn, list<dag> constraints = []> {
  string Pass = pass;              // the library pass that runs it
  Op Root = root;                  // the opcode of the instruction it is tried on
  string Fn = fn;                  // the C++ matcher/builder
  list<dag> Constraints = constraints;
  string Matches = "";             // the HLO it matches, as text (shown in the table)
  list<CublasLtEpilogue> Epilogues = [];  // the epilogues it may produce ([] : none)
  string Sets = "";                // what else of the call it sets ("alpha", "beta = 1 and C")
  string Reference = "";           // XLA's code that does the same
  string Group = "";               // YAML enables/disables patterns by name or by group
  string Summary = "";             // defaults to the comment above the def
}

#endif  // HLOC_BASE_LIBRARY_TD
