// Plain tables generated from layout and fusion records (rules/layout/*.td, rules/fusion/*.td;
// the classes are in rules/base/Layout.td and rules/base/Fusion.td). The layout-assignment and
// fusion engines read these; hloc-tblgen --gen-layout / --gen-fusion writes them. Strings point
// into the generated code's static storage.
#pragma once
#include <vector>

#include "absl/status/status.h"
#include "engine/requirements.h"
#include "ir/instruction.h"

namespace hloc {

class RewriteContext;
namespace library::gemm {
struct Rewrite;  // cublas-gemm-rewriter's state (src/passes/library/gemm_rewriter_internal.h)
}

// One layout requirement or preference of an opcode's operand (or result).
struct LayoutConstraintInfo {
  static constexpr int kResult = -1;       // Operand = -1: the instruction's own layout
  static constexpr int kEveryOperand = -2; // Operand = -2: each operand
  const char* name;         // the def's name
  int opcode;               // static_cast<int>(HloOpcode)
  int operand;              // operand index, kResult or kEveryOperand
  const char* layout;       // the LayoutKind record: "DefaultLayout", "ContractingMinor", ...
  bool required;            // false: a preference (may lose to another constraint)
  int priority;             // higher wins between preferences
  const Requirement* requirements;  // its Requirement records (RequirementsHold, engine/requirements.h)
  int num_requires;
  const char* summary;
  const char* file;
  int line;
  int kind;                 // static_cast<int>(layout::LayoutKind) (src/passes/layout/layout_kinds.h)
};

// The fusion kinds (XLA's: kLoop, kInput, kOutput, kCustom) an opcode may take part in.
struct FusibleInfo {
  const char* name;
  int opcode;
  const char* const* kinds;  // "kLoop", "kInput", ...
  int num_kinds;
  bool as_producer;          // may be fused into its consumer
  bool as_consumer;          // may absorb its producers
  const Requirement* requirements;
  int num_requires;
  const char* summary;
  const char* file;
  int line;
};

// An opcode's cost class for the fusion cost model.
struct OpCostInfo {
  const char* name;
  int opcode;
  const char* cost_class;   // the CostClass record: "CheapOp", "ExpensiveOp", ...
  int relative_cost;        // the class's rough per-element cost in simple instructions
  const char* summary;
  const char* file;
  int line;
  bool slow_in_f64 = false;  // the class's SlowInF64 field
  bool expensive = false;    // the class's Expensive field
};

// Returns true when fusing `producer` into `consumer` is vetoed.
using FusionVetoFn = bool (*)(RewriteContext& ctx, HloInstruction* producer, HloInstruction* consumer);

// A producer/consumer pair that must not fuse, and why (--explain-fusion prints `reason`).
struct FusionVetoInfo {
  const char* name;
  const char* reason;
  const Requirement* requirements;
  int num_requires;
  const char* summary;
  const char* file;
  int line;
  FusionVetoFn fn;
  bool duplication = false;  // guards copies of the producer only (FusionVeto's Duplication bit)
  bool queue_only = false;   // not applied by the scalar-constant sweep (FusionVeto's QueueOnly bit)
};

// A strategy the SPMD partitioner may use (rules/spmd/*.td, class SpmdStrategy in
// rules/base/Spmd.td): a pipeline switches it off by name (`rules: {disable: [NAME]}`).
struct SpmdStrategyInfo {
  const char* name;
  const char* summary;
  const char* file;
  int line;
};

// Checks a library pattern's constraints, then calls its Fn (which changes the module through
// the pass's Replace, setting rw.changed, or leaves it alone).
using LibraryPatternFn = absl::Status (*)(library::gemm::Rewrite& rw, HloInstruction* root);

// A way a library pass folds HLO into a library call (rules/library/*.td, class LibraryPattern
// in rules/base/Library.td): a pipeline switches it by name or group (`rules: {disable: [NAME]}`).
struct LibraryPatternInfo {
  const char* name;
  const char* pass;          // the library pass that runs it ("cublas-gemm-rewriter")
  const char* group;         // "" when none
  int opcode;                // the Root op: static_cast<int>(HloOpcode)
  const char* matches;       // the HLO it matches, as text
  const char* const* epilogues;  // cuBLASLt epilogues it may produce ("BIAS", "RELU", ...)
  int num_epilogues;
  const char* sets;          // what else of the call it sets ("alpha", ...)
  const char* reference;     // XLA's code that does the same
  const char* summary;
  const char* file;
  int line;
  LibraryPatternFn fn;
};

// Every generated layout and fusion table of the build.
struct GeneratedTables {
  // The tables of all generated rule files (filled once, on first use).
  static GeneratedTables& Global();
  std::vector<const LayoutConstraintInfo*> layout;
  std::vector<const FusibleInfo*> fusible;
  std::vector<const OpCostInfo*> op_costs;
  std::vector<const FusionVetoInfo*> vetoes;
  std::vector<const SpmdStrategyInfo*> spmd_strategies;
  std::vector<const LibraryPatternInfo*> library_patterns;  // in file order
};

// Defined in generated code (build/gen/rules/all_rules.cc).
void RegisterAllGeneratedTables(GeneratedTables& tables);

}  // namespace hloc
