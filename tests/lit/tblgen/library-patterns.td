// RUN: hloc-tblgen --gen-library -I %rules %s | FileCheck %s --check-prefix=GEN
// RUN: not hloc-tblgen --gen-library -I %rules -DBAD %s 2>&1 | FileCheck %s --check-prefix=ERR
// A LibraryPattern becomes a table row pointing at a generated function that checks its
// constraints in order, then calls its Fn (by pointer: the record's name is only a label).
include "base/Library.td"
def : CppHeader<"passes/library/gemm_rewriter_internal.h">;
def ReadsLt : LibraryConstraint<"reads a cuBLASLt call", "library::gemm::ReadsLtMatmul">;
def BiasOn : LibraryConstraint<"fuse_bias", "library::gemm::FuseBiasOn">;

// maximum(gemm, broadcast(0)) => RELU
def Relu : LibraryPattern<"cublas-gemm-rewriter", Maximum, "library::gemm::AbsorbRelu",
    [(ReadsLt $root), (Unless (BiasOn))]> {
  let Epilogues = [EpilogueRelu, EpilogueBiasRelu];
  let Group = "Acts";
}
// GEN: #include "passes/library/gemm_rewriter_internal.h"
// GEN: absl::Status Library_Relu(library::gemm::Rewrite& rw, HloInstruction* root) {
// GEN-NEXT: if (!library::gemm::ReadsLtMatmul(rw, root)) return absl::OkStatus();
// GEN-NEXT: if (library::gemm::FuseBiasOn(rw)) return absl::OkStatus();  // Unless BiasOn
// GEN-NEXT: return library::gemm::AbsorbRelu(rw, root);
// GEN: {"Relu", "cublas-gemm-rewriter", "Acts", static_cast<int>(HloOpcode::kMaximum),
// GEN: kEpilogues_Relu, 2,
// GEN: "maximum(gemm, broadcast(0)) => RELU", "{{.*}}library-patterns.td", 11, Library_Relu},
// GEN: void RegisterLibrary_library_patterns(GeneratedTables& tables) {

#ifdef BAD
// ERR: library-patterns.td:[[@LINE+1]]:5: error: in library pattern 'Unbound': $x is unbound: a library pattern's constraints may use $root only
def Unbound : LibraryPattern<"cublas-gemm-rewriter", Add, "F", [(ReadsLt $x)]>;
def NotOne;
// ERR: library-patterns.td:[[@LINE+1]]:5: error: in library pattern 'NotAConstraint': unknown constraint 'NotOne': expected a LibraryConstraint record
def NotAConstraint : LibraryPattern<"cublas-gemm-rewriter", Add, "F", [(NotOne $root)]>;
// ERR: library-patterns.td:[[@LINE+1]]:5: error: library pattern 'NoFn' needs a Pass and an Fn
def NoFn : LibraryPattern<"cublas-gemm-rewriter", Add, "">;
#endif
