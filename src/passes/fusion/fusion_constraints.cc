#include "passes/fusion/fusion_constraints.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "engine/profile.h"
#include "ir/computation.h"
#include "passes/fusion/fusion_analysis.h"

namespace hloc::fusion {
namespace {

using O = HloOpcode;

std::vector<int64_t> Squeezed(const Shape& s) {
  std::vector<int64_t> out;
  if (!s.IsArray()) return out;
  for (int64_t d : s.dimensions())
    if (d != 1) out.push_back(d);
  return out;
}

// An op whose cost class is fast only below f64 (FastMathOp's SlowInF64), computing f64.
bool FastMathOnF64(const HloInstruction* i) {
  bool slow_in_f64 = false;
  RelativeCost(i->opcode(), &slow_in_f64);
  return slow_in_f64 && i->shape().IsArray() && i->shape().element_type() == PrimitiveType::F64;
}

}  // namespace

bool IsExpensive(RewriteContext&, const HloInstruction* node) {
  // Depends only on each instruction's opcode and element type.
  for (const HloInstruction* i : FusedOpcodeTypeRepresentatives(node)) {
    if (i->opcode() == O::kReduce || i->opcode() == O::kReduceWindow) continue;  // judged by their own vetoes
    if (IsExpensiveOpcode(i->opcode()) || FastMathOnF64(i)) return true;
  }
  return false;
}

bool ReusesElementsOf(RewriteContext&, const HloInstruction* consumer, const HloInstruction* producer) {
  std::vector<double> util = OperandUtilization(consumer);
  double total = 0;
  for (int64_t j = 0; j < consumer->operand_count(); ++j)
    if (consumer->operand(j) == producer) total += util[j];
  return total > 1.0 + 1e-9;
}

bool IsReductionNode(RewriteContext&, const HloInstruction* node) { return HasReduction(node); }

bool HasOneUser(RewriteContext&, const HloInstruction* node) {
  if (node->IsRoot() || node->users().empty()) return false;
  for (const HloInstruction* u : node->users())
    if (u != node->users().front()) return false;
  return true;
}

bool IsReductionEpilogue(RewriteContext&, const HloInstruction* producer, const HloInstruction* consumer) {
  if (HasReduction(consumer)) return false;
  for (const HloInstruction* i : FusedInstructions(consumer)) {
    switch (i->opcode()) {
      case O::kConstant: case O::kBitcast: case O::kReshape: case O::kCopy:
        continue;
      case O::kBroadcast:
        // Only scalars may be broadcast against the reduced values.
        if (ElementCount(i->operand(0)->shape()) == 1) continue;
        return false;
      default:
        if (!i->IsElementwise()) return false;
    }
  }
  // The consumer's outputs have the reduced values' element count: it maps them one to one.
  for (const HloInstruction* o : FusionOutputs(consumer))
    if (ElementCount(o->shape()) != ElementCount(FusionOutputs(producer).front()->shape())) return false;
  return true;
}

namespace {

// Marks which of a node's instructions depend on a reduction inside the kernel being formed
// ("post-reduce" values). `input_flagged` says whether the value of each operand of the node
// is such a value.
void MarkPostReduce(const HloInstruction* node, const std::vector<bool>& input_flagged,
                    absl::flat_hash_map<const HloInstruction*, bool>& flagged) {
  auto operand_flag = [&](const HloInstruction* op) {
    auto it = flagged.find(op);
    return it != flagged.end() && it->second;
  };
  if (node->opcode() != O::kFusion) {
    bool f = false;
    for (int64_t j = 0; j < node->operand_count(); ++j) f |= input_flagged[j];
    flagged[node] = f || IsInputFusibleReduction(node);
    return;
  }
  for (const HloInstruction* i : node->fused_instructions_computation()->MakeInstructionPostOrder()) {
    if (i->opcode() == O::kParameter) {
      const int64_t n = i->attrs().parameter_number;
      flagged[i] = n >= 0 && n < static_cast<int64_t>(input_flagged.size()) && input_flagged[n];
      continue;
    }
    bool f = IsInputFusibleReduction(i);
    for (const HloInstruction* op : i->operands()) f |= operand_flag(op);
    flagged[i] = f;
  }
}

// The dimension k where the trailing dimensions k.. hold exactly `cols` elements (a row of the
// default layout), or -1.
int64_t RowSplit(const Shape& shape, int64_t cols) {
  int64_t product = 1;
  for (int64_t k = shape.rank(); k >= 0; --k) {
    if (product == cols) return k;
    if (k == 0 || product > cols) break;
    product *= shape.dimensions(k - 1);
  }
  return -1;
}

}  // namespace

bool FormsRowNormalization(RewriteContext&, const HloInstruction* producer, const HloInstruction* consumer) {
  std::vector<const HloInstruction*> all = FusedInstructions(producer);
  for (const HloInstruction* i : FusedInstructions(consumer)) all.push_back(i);
  const HloInstruction* first = nullptr;
  for (const HloInstruction* i : all)
    if (IsInputFusibleReduction(i)) { first = i; break; }
  if (first == nullptr) return false;
  const Shape& in = first->operand(0)->shape();
  absl::flat_hash_set<int64_t> reduced(first->attrs().dimensions.begin(), first->attrs().dimensions.end());
  const std::vector<int64_t> sq_in = Squeezed(in);
  const int64_t full = ElementCount(in), rows = ElementCount(first->shape());
  const int64_t cols = full / std::max<int64_t>(1, rows);

  // Which values depend on a reduction of the kernel: those must stay in the row.
  absl::flat_hash_map<const HloInstruction*, bool> flagged;
  MarkPostReduce(producer, std::vector<bool>(producer->operand_count(), false), flagged);
  const HloInstruction* producer_out = FusionOutputs(producer).front();
  const bool producer_flag = flagged[producer_out];
  // A plain consumer reads the producer instruction itself (a fused consumer reads parameters,
  // which MarkPostReduce flags): the producer's value is post-reduce when its root is.
  flagged[producer] = producer_flag;
  std::vector<bool> consumer_inputs;
  for (const HloInstruction* op : consumer->operands()) consumer_inputs.push_back(op == producer && producer_flag);
  MarkPostReduce(consumer, consumer_inputs, flagged);
  auto is_flagged = [&](const HloInstruction* i) {
    auto it = flagged.find(i);
    return it != flagged.end() && it->second;
  };

  int reductions = 0;
  for (const HloInstruction* i : all) {
    if (i->opcode() == O::kReduce) {
      if (!IsRowReduction(i) || Squeezed(i->operand(0)->shape()) != sq_in ||
          ElementCount(i->shape()) != ElementCount(first->shape()))
        return false;
      ++reductions;
      continue;
    }
    // Values that do not depend on a reduction are computed per element like any loop
    // fusion; only the reduced values must be brought back along their own rows.
    bool uses_reduced = false;
    for (const HloInstruction* op : i->operands()) uses_reduced |= is_flagged(op);
    if (!uses_reduced) continue;
    switch (i->opcode()) {
      case O::kTuple: case O::kGetTupleElement: case O::kConvert: case O::kCopy:
        break;
      case O::kBitcast: case O::kReshape: {
        if (Squeezed(i->shape()) == Squeezed(i->operand(0)->shape())) break;
        // Re-indexing the rows is fine ([2,16,64] -> [32,64]; [2,16] -> [32]) as long as each
        // row stays one contiguous block of the row length.
        const int64_t n = ElementCount(i->shape());
        if (n == rows) break;
        if (n != full || RowSplit(i->shape(), cols) < 0 || RowSplit(i->operand(0)->shape(), cols) < 0) return false;
        break;
      }
      case O::kBroadcast: {
        const HloInstruction* op = i->operand(0);
        if (Squeezed(i->shape()) == Squeezed(op->shape())) break;
        // A [rows] value back over its rows: the broadcast fills only the row-length block.
        const int64_t split = RowSplit(i->shape(), cols);
        if (ElementCount(i->shape()) != full || split < 0) return false;
        for (size_t k = 0; k < i->attrs().dimensions.size() && k < static_cast<size_t>(op->shape().rank()); ++k)
          if (op->shape().dimensions(k) != 1 && i->attrs().dimensions[k] >= split) return false;
        break;
      }
      default:
        if (!i->IsElementwise()) return false;
    }
  }
  return reductions >= 1;
}

bool RowFitsInSharedMemory(RewriteContext& ctx, const HloInstruction* producer, const HloInstruction* consumer) {
  const HardwareProfile* hw = ctx.pass_context() ? ctx.pass_context()->profile : nullptr;
  if (hw != nullptr && hw->kind == "cpu") return true;  // no shared memory: rows live in caches
  int64_t limit = 48 * 1024;
  if (hw != nullptr && hw->shared_memory_per_block > 0) limit = hw->shared_memory_per_block;
  int64_t row_bytes = 0;
  for (const HloInstruction* node : {producer, consumer}) {
    for (const HloInstruction* r : Reductions(node)) {
      const int64_t cols = ElementCount(r->operand(0)->shape()) / std::max<int64_t>(1, ElementCount(r->shape()));
      row_bytes = std::max(row_bytes, cols * std::max(4, ByteWidth(r->operand(0)->shape().element_type())));
    }
  }
  return row_bytes <= limit;
}

bool HasScatter(RewriteContext&, const HloInstruction* node) { return HasFusedOpcode(node, O::kScatter); }

bool IsConstantOp(RewriteContext&, const HloInstruction* node) { return node->opcode() == O::kConstant; }

bool IsFusionOp(RewriteContext&, const HloInstruction* node) { return node->opcode() == O::kFusion; }

bool IsLibraryCall(RewriteContext&, const HloInstruction* node) { return IsLibraryCallInstruction(node); }

bool IsInPlaceOperandOf(RewriteContext&, const HloInstruction* producer, const HloInstruction* consumer) {
  if (consumer->opcode() == O::kScatter) {
    const int64_t n = consumer->operand_count() / 2;  // scatter(operands..., indices, updates...)
    for (int64_t j = 0; j < n && j < consumer->operand_count(); ++j)
      if (consumer->operand(j) == producer) return true;
    return false;
  }
  if (consumer->opcode() != O::kFusion || !HasFusedOpcode(consumer, O::kScatter)) return false;
  for (const HloInstruction* i : FusedInstructions(consumer)) {
    if (i->opcode() != O::kScatter) continue;
    const int64_t n = i->operand_count() / 2;
    for (int64_t j = 0; j < n; ++j) {
      const HloInstruction* op = i->operand(j);
      if (op->opcode() != O::kParameter) continue;
      const int64_t p = op->attrs().parameter_number;
      if (p < consumer->operand_count() && consumer->operand(p) == producer) return true;
    }
  }
  return false;
}

bool HeroesIncompatible(RewriteContext&, const HloInstruction* producer, const HloInstruction* consumer) {
  const bool pt = HasTiledTransposeHero(producer), ct = HasTiledTransposeHero(consumer);
  const bool pr = HasReduction(producer), cr = HasReduction(consumer);
  if ((pt && cr) || (pr && ct)) return true;
  if (pt && ct) {
    // Two tiled transposes share a kernel only with the same permutation.
    const HloInstruction* a = nullptr;
    const HloInstruction* b = nullptr;
    for (const HloInstruction* o : FusionOutputs(producer))
      if (IsTiledTranspose(FindHero(o))) a = FindHero(o);
    for (const HloInstruction* o : FusionOutputs(consumer))
      if (IsTiledTranspose(FindHero(o))) b = FindHero(o);
    return a && b && a->attrs().dimensions != b->attrs().dimensions;
  }
  return false;
}

bool FusionOperandsExceed(RewriteContext&, const HloInstruction* producer, const HloInstruction* consumer,
                          int64_t limit) {
  const int64_t outputs = static_cast<int64_t>(FusionOutputs(consumer).size());
  // Judged for every pair PriorityFusion ranks: count in a list when there are few operands.
  constexpr size_t kMaxListed = 16;
  if (consumer->operands().size() + producer->operands().size() <= kMaxListed) {
    std::vector<const HloInstruction*> operands;
    auto add = [&](const HloInstruction* op) {
      if (std::find(operands.begin(), operands.end(), op) == operands.end()) operands.push_back(op);
    };
    for (const HloInstruction* op : consumer->operands())
      if (op != producer) add(op);
    for (const HloInstruction* op : producer->operands()) add(op);
    return static_cast<int64_t>(operands.size()) + outputs > limit;
  }
  absl::flat_hash_set<const HloInstruction*> operands;
  for (const HloInstruction* op : consumer->operands())
    if (op != producer) operands.insert(op);
  for (const HloInstruction* op : producer->operands()) operands.insert(op);
  return static_cast<int64_t>(operands.size()) + outputs > limit;
}

bool ProducerPathsExceed(RewriteContext&, const HloInstruction* producer, const HloInstruction* consumer,
                         int64_t limit) {
  std::vector<const HloInstruction*> insts = FusedInstructions(producer);
  if (insts.size() <= 1 && RelativeCost(insts.front()->opcode()) <= 1) return false;
  return PathsFromProducer(producer, consumer) > limit;
}

bool ComputedValueUsersExceed(RewriteContext&, const HloInstruction* producer, int64_t limit) {
  // Users first: most producers have a few (no set needed: distinct users are at most the
  // uses), and the walk below is over the whole fusion.
  if (static_cast<int64_t>(producer->users().size()) <= limit) return false;
  absl::flat_hash_set<const HloInstruction*> users(producer->users().begin(), producer->users().end());
  if (static_cast<int64_t>(users.size()) <= limit) return false;
  for (const HloInstruction* i : FusedInstructions(producer)) {
    switch (i->opcode()) {
      // Values are only moved or indexed: a copy costs loads, not arithmetic. Not the
      // MovesValuesOnly trait of rules/base/Ops.td: that has dynamic-slice, dynamic-update-slice
      // and gather too (they compute on indices), and not parameter, constant, iota.
      case O::kParameter: case O::kConstant: case O::kIota: case O::kBroadcast: case O::kBitcast: case O::kReshape:
      case O::kCopy: case O::kTranspose: case O::kSlice: case O::kConcatenate: case O::kPad: case O::kReverse:
        continue;
      default:
        return true;
    }
  }
  return false;
}

}  // namespace hloc::fusion
