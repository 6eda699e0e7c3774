// Read-only facts about fusions and fusion candidates, after XLA's gpu_fusible.cc,
// ir_emission_utils.cc and hlo_fusion_analysis.cc: which instructions a fusion stands for, its
// outputs, its "heroes" (the reduce / transpose / scatter that decides how the kernel is
// tiled), the emitter it will get, and how often each element of an operand is read (XLA's
// operand utilization, which the cost model and the reuse veto need).
//
// A "node" below is an instruction of a non-fusion computation: either a fusion or a plain
// instruction that could become one. Every function treats a plain instruction as a fusion of
// one instruction, so the fusion engine never needs to build a fusion to ask about it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/instruction.h"

namespace hloc::fusion {

// The instructions `node` stands for: a fusion's fused instructions (not its parameters, in
// post order), or {node}.
std::vector<const HloInstruction*> FusedInstructions(const HloInstruction* node);
// The values the node produces: a multi-output fusion's tuple elements, else its root (or the
// node itself).
std::vector<const HloInstruction*> FusionOutputs(const HloInstruction* node);
// A fusion whose root is a tuple (XLA's IsMultiOutputFusion).
bool IsMultiOutputFusion(const HloInstruction* node);

// A reduce XLA emits with its reduction emitter (kInput): it reduces at least one dimension of
// size > 1. Other reduces are plain loops (XLA's "loop_reduce_fusion").
bool IsInputFusibleReduction(const HloInstruction* inst);
// A reduce whose reduced dimensions are the minor-most ones of its input in the input's layout
// (default layout when none): each output element reduces one contiguous row.
bool IsRowReduction(const HloInstruction* inst);
// When a transpose is worth a shared-memory tile (XLA's kMinDimensionToTransposeTiled and
// kMinTotalDimensionsToTransposeTiled): both swapped dimensions this long and this many
// elements. The fusion analysis (IsTiledTranspose) and the transpose emitter ask the same
// question, so they read the same numbers.
inline constexpr int64_t kMinTiledTransposeDimension = 16;
inline constexpr int64_t kMinTiledTransposeElements = 64 * 128;
inline bool WorthTransposeTiling(int64_t minor_in, int64_t minor_out, int64_t elements) {
  return minor_in >= kMinTiledTransposeDimension && minor_out >= kMinTiledTransposeDimension &&
         elements >= kMinTiledTransposeElements;
}
// A transpose that moves the minor-most dimension (XLA's tiled transpose emitter; needs a tile
// in shared memory) and is WorthTransposeTiling. Transposes that only permute major dimensions
// are plain loops.
bool IsTiledTranspose(const HloInstruction* inst);

// The hero of one output: the instruction that decides the emitter (XLA's FindNonTrivialHero):
// walks up from `root` through elementwise ops whose other operands are constants or
// broadcasts of scalars (the "epilogue") to a reduce, tiled transpose or scatter; else `root`.
const HloInstruction* FindHero(const HloInstruction* root);
// True when any of the node's instructions is an input-fusible reduce.
bool HasReduction(const HloInstruction* node);
bool HasTiledTransposeHero(const HloInstruction* node);
// Every input-fusible reduce among the node's instructions.
std::vector<const HloInstruction*> Reductions(const HloInstruction* node);

// (XLA's HloFusionAnalysis::EmitterFusionKind, the emitter a fusion gets, is decided in one
// place: codegen/gpu/fusion_emitter_kind.h; fusion-emitter-assignment records it.)
// The HLO fusion kind (kLoop / kInput / kCustom) a fusion of these instructions gets.
FusionKind FusionKindFor(const std::vector<const HloInstruction*>& instructions);

// The distinct opcodes of FusedInstructions(node), in order of first appearance, and the
// fusion kind those instructions get (FusionKindFor); cached like the rest (FusionFactsCache).
std::vector<HloOpcode> FusedOpcodes(const HloInstruction* node);
FusionKind NodeFusionKind(const HloInstruction* node);
// One instruction of FusedInstructions(node) per distinct (opcode, element type), the first of
// each: enough for any question that depends only on those (cached).
std::vector<const HloInstruction*> FusedOpcodeTypeRepresentatives(const HloInstruction* node);
bool HasFusedOpcode(const HloInstruction* node, HloOpcode opcode);

// Element counts (1 for scalars and tuples' first leaf when asked about a tuple).
int64_t ElementCount(const Shape& shape);
// Bytes of every array leaf of the shape.
int64_t ByteSize(const Shape& shape);

// How many times, on average, the node reads each element of each of its operands when it
// computes each of its outputs once (XLA's operand utilization): 1 for elementwise use,
// more where the node recomputes (broadcast of a fused expensive value, reduce-window, dot),
// less where it reads part of the operand (slice). Indexed like node->operands().
std::vector<double> OperandUtilization(const HloInstruction* node);
// The node's arithmetic in the cost model's units: per element evaluated, the op cost table's
// relative cost (rules/fusion/FusionCosts.td), plus 2*K per dot output element.
double Flops(const HloInstruction* node);
// The node's instructions with the number of element evaluations each gets (recomputation
// included). Used by Flops and by the explain output.
std::vector<std::pair<const HloInstruction*, double>> ElementEvaluations(const HloInstruction* node);

// The relative per-element cost of an opcode from the generated op-cost table (rules/fusion/
// FusionCosts.td); 1 for opcodes without a record. `slow_in_f64` receives its class's
// SlowInF64 field (false without a record).
int RelativeCost(HloOpcode opcode, bool* slow_in_f64 = nullptr);
// Its class's Expensive field (false without a record).
bool IsExpensiveOpcode(HloOpcode opcode);
// A library call: a custom-call (cuBLAS, cuDNN, ... targets) or a kCustom fusion.
bool IsLibraryCallInstruction(const HloInstruction* node);

// How many distinct indexings the consumer's emitter would generate the producer's code for
// (XLA's FusionNodeIndexingEvaluation / IsFusedIrEmitterInefficient): users reading at the
// same index share one copy; broadcasts, slices, concatenates, ... each need their own.
// Capped at 1 << 20.
int64_t PathsFromProducer(const HloInstruction* producer, const HloInstruction* consumer);

// Memoizes what the functions above compute from a fusion's body (its instructions in post
// order, element evaluations, operand utilization, flops, index counts), keyed by the fusion's
// unique id, for as long as it lives on this thread. PriorityFusion asks about each fusion once
// per candidate pair it touches; without this every question re-walks the body, and a fusion
// that grows to most of the module made the pass quadratic in the module (numpyro's logprob
// gradient: one kernel of ~1000 instructions). Valid while no fusion's body is edited
// without a new id (FusionBuilder::Merge gives the fusion it builds or grows in place a new one); Forget drops a
// fusion that is going away. Results are the same as without the cache, bit for bit.
// How many times this thread has analysed a fusion body (its indexing walk), for tests that
// guard against re-analysis (a count, not a time).
int64_t FusionBodyAnalyses();

class FusionFactsCache {
 public:
  FusionFactsCache();
  ~FusionFactsCache();
  FusionFactsCache(const FusionFactsCache&) = delete;
  FusionFactsCache& operator=(const FusionFactsCache&) = delete;
  void Forget(const HloInstruction* fusion);
  void Forget(int64_t unique_id);
  struct Facts;
  // FusionBuilder::FuseInPlace grew the fusion cached as `old_id` into `node` (its new id): its
  // body is now its parameters, then `clones` (the producer's, in body order), then its old
  // instructions. Their facts are kept and only the new
  // part is analysed, instead of the whole body again: a fusion that absorbs its producers one
  // at a time made that quadratic in its size. No-op without an active cache or an entry.
  static void GrewInPlace(int64_t old_id, const HloInstruction* node,
                          const std::vector<const HloInstruction*>& clones);
  // The facts of a fusion node (computed on first use); null when no cache is active or the
  // node is not a fusion.
  static const Facts* Lookup(const HloInstruction* node);
  // The same with the body's indexing (element evaluations, utilization, flops) filled in.
  static const Facts* LookupIndexed(const HloInstruction* node);

 private:
  struct Impl;
  static void FillFromIndexing(const HloInstruction* node, Facts& facts);
  Impl* impl_;
  FusionFactsCache* previous_;
};

}  // namespace hloc::fusion
