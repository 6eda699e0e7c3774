//===- rules/base/Fusion.td - fusion admissibility, cost classes and vetoes ----===//
//
// The fusion engine (PriorityFusion and its cost model) reads these as data. Every record of
// class FusionRule in a rules/fusion/*.td file becomes a table row (src/engine/rule_tables.h)
// through hloc-tblgen --gen-fusion:
//
//   // Elementwise ops fuse anywhere.
//   def AddFusible : Fusible<Add, [LoopFusion, InputFusion, OutputFusion]>;
//   def ExpCost : OpCost<Exponential, ExpensiveOp>;
//   // An op set (rules/base/Dsl.td) stands for one row per op: here every elementwise op.
//   def ElementwiseIsFusible : Fusible<OpSet<[], [Elementwise]>, [LoopFusion, InputFusion]>;
//   // Duplicating an expensive producer into many consumers costs more than it saves.
//   def ExpensiveProducerManyUsers : FusionVeto<
//       "the producer is expensive and the consumer reuses its elements",
//       [(IsExpensiveOp $producer), (Unless (HasOneUse $producer))]>;
//
// A veto's conditions are constraint DAGs (rules/base/Common.td and the rule file's own
// Constraint records) over the two names $producer and $consumer; the veto holds when all do.
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_FUSION_TD
#define HLOC_BASE_FUSION_TD

include "base/Dsl.td"
include "base/Ops.td"

// XLA's fusion kinds, by their text names.
class FusionKindDef<string name> {
  string Name = name;
}
def LoopFusion : FusionKindDef<"kLoop">;      // elementwise and data movement, one loop
def InputFusion : FusionKindDef<"kInput">;    // a reduction (or scatter) at the root
def OutputFusion : FusionKindDef<"kOutput">;  // a dot or convolution with its epilogue
def CustomFusion : FusionKindDef<"kCustom">;  // library-backed fusions (cuBLASLt, cuDNN, ...)

// Cost classes for the cost model: a rough per-element cost in simple instructions.
class CostClass<string summary, int cost> {
  string Summary = summary;
  int RelativeCost = cost;
  // The class's ops have a fast path in f32/f16 only: on f64 they are expensive (the
  // IsExpensive constraint of rules/fusion/FusionVetoes.td reads this field).
  bit SlowInF64 = 0;
  // Producers of the class are expensive to duplicate into several consumers (the IsExpensive
  // constraint of rules/fusion/FusionVetoes.td reads this field, not the cost number).
  bit Expensive = 0;
}
def CheapOp : CostClass<"about one instruction per element (add, compare, select, ...)", 1>;
def ExpensiveOp : CostClass<"many instructions per element (exp, log, tanh, divide, power, ...)", 20> {
  let Expensive = 1;
}
def MovementOp : CostClass<"moves data without arithmetic (reshape, transpose, slice, ...)", 0>;
def ReductionOp : CostClass<"reads many elements per output (reduce, reduce-window)", 4>;
def ContractionOp : CostClass<"a library call (dot, convolution)", 100> {
  let Expensive = 1;
}
def OpaqueOp : CostClass<"never fused (custom calls, collectives, control flow)", 1000> {
  let Expensive = 1;
}

class FusionRule {
  list<Requirement> Requires = [];
  string Summary = "";            // defaults to the comment above the def
}

// `op` (an Op, or an OpSet: one row per member op) may take part in fusions of `kinds`.
class Fusible<OpOrSet op, list<FusionKindDef> kinds> : FusionRule {
  OpOrSet Opcode = op;
  list<FusionKindDef> Kinds = kinds;
  bit AsProducer = 1;             // may be fused into its consumer
  bit AsConsumer = 1;             // may absorb its producers
}

// `op` (an Op, or an OpSet: one row per member op) costs as its class says.
class OpCost<OpOrSet op, CostClass cls> : FusionRule {
  OpOrSet Opcode = op;
  CostClass Class = cls;
}

class FusionVeto<string reason, list<dag> conditions> : FusionRule {
  string Reason = reason;
  list<dag> Conditions = conditions;
  // The veto guards against computing the producer more than once (fusion copies it into
  // every consumer). Multi-output fusion, which makes the producer an output of the
  // consumer's kernel instead of a copy, does not apply it.
  bit Duplication = 0;
  // The veto guides PriorityFusion's queue only: the sweep after it, which fuses every scalar
  // constant into each kernel that reads it (XLA's), does not apply it.
  bit QueueOnly = 0;
}

#endif  // HLOC_BASE_FUSION_TD
