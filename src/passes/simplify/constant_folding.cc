// constant_folding, after XLA's HloConstantFolding
// (xla/hlo/transforms/simplifiers/hlo_constant_folding.cc).
//
// Which instructions fold follows XLA: at least one operand is a constant (default level) and
// every operand is a constant, a broadcast of a constant, an iota or a tuple of those; not a
// parameter, constant or tuple itself; and IsFoldable (below). The value comes from the
// reference evaluator: the instruction and its small operand tree are copied into a scratch
// computation whose parameters are bound to the constants' literals (so nothing large is
// copied), and that computation is evaluated. An instruction the evaluator cannot evaluate is
// left as it is, as XLA's TryEvaluate does.
#include "passes/simplify/constant_folding.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "eval/evaluator.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

// Called computations nest only a few levels in real modules; deeper is treated as unfoldable.
constexpr int kMaxNesting = 64;

// Constants, broadcasts of constants and iotas, looking through (nested) tuples.
// `any_constant`: some leaf is a constant; `all_foldable`: every leaf is one of the three.
void ScanOperands(const HloInstruction& inst, bool* any_constant, bool* all_foldable) {
  *any_constant = false;
  *all_foldable = true;
  std::vector<const HloInstruction*> stack(inst.operands().begin(), inst.operands().end());
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* op = stack.back();
    stack.pop_back();
    if (!seen.insert(op).second) continue;
    switch (op->opcode()) {
      case O::kTuple:
        for (const HloInstruction* e : op->operands()) stack.push_back(e);
        break;
      case O::kConstant:
        *any_constant = true;
        break;
      case O::kBroadcast:
        if (op->operand_count() != 1 || op->operand(0)->opcode() != O::kConstant) *all_foldable = false;
        break;
      case O::kIota:
        break;
      default:
        *all_foldable = false;
    }
  }
}

// XLA's IsOrContainsIllegalInstr, for one instruction (called computations are checked by
// IsFoldable on their instructions): after-all makes tokens, rng is not reproducible.
bool IsIllegal(const HloInstruction& inst) { return inst.opcode() == O::kAfterAll || inst.opcode() == O::kRng; }

// Opcodes XLA's evaluator cannot fold (so XLA never does) or whose value depends on where the
// program runs: hloc's evaluator runs them as one device of a group, which a constant
// cannot stand for.
bool DependsOnRuntime(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case O::kCustomCall: case O::kRngBitGenerator: case O::kRngGetAndUpdateState: case O::kReplicaId:
    case O::kPartitionId: case O::kAllGatherDone: case O::kAllReduceDone: case O::kCollectivePermuteDone:
    case O::kInfeed: case O::kOutfeed: case O::kSend: case O::kSendDone: case O::kRecv: case O::kRecvDone:
      return true;
    default:
      return IsCollective(inst.opcode());
  }
}

class Folder {
 public:
  Folder(HloModule& module, const ConstantFoldingOptions& options) : module_(module), options_(options) {}

  absl::StatusOr<bool> Run();

 private:
  bool IsFoldable(const HloInstruction& inst, int depth);
  absl::StatusOr<Literal> Evaluate(const HloInstruction& inst);

  HloModule& module_;
  const ConstantFoldingOptions& options_;
  absl::flat_hash_map<const HloComputation*, bool> foldable_computation_;
  std::unique_ptr<NameUniquer> names_;
};

bool Folder::IsFoldable(const HloInstruction& inst, int depth) {
  // Broadcasts and iotas only grow constants; XLA keeps them symbolic.
  if (inst.opcode() == O::kBroadcast || inst.opcode() == O::kIota) return false;
  // FFTs and (by default) whiles may take long to evaluate.
  if (inst.opcode() == O::kFft) return false;
  if (!options_.aggressive && inst.opcode() == O::kWhile) return false;
  if (inst.opcode() == O::kAsyncStart || inst.opcode() == O::kAsyncUpdate || inst.opcode() == O::kAsyncDone) {
    const HloInstruction* start = &inst;
    while (start->opcode() != O::kAsyncStart && start->operand_count() > 0) start = start->operand(0);
    std::string thread = start->attrs().async_execution_thread.empty() ? "main" : start->attrs().async_execution_thread;
    std::string here = inst.parent() == nullptr || inst.parent()->execution_thread().empty()
                           ? "main" : inst.parent()->execution_thread();
    if (thread != here) return false;
  }
  if (DependsOnRuntime(inst)) return false;
  for (const HloComputation* sub : inst.called_computations()) {
    if (sub == nullptr) return false;
    auto it = foldable_computation_.find(sub);
    if (it != foldable_computation_.end()) {
      if (!it->second) return false;
      continue;
    }
    if (depth >= kMaxNesting) return false;
    bool ok = true;
    for (const HloInstruction* s : sub->MakeInstructionPostOrder()) {
      if (!IsFoldable(*s, depth + 1)) {
        ok = false;
        break;
      }
    }
    foldable_computation_[sub] = ok;
    if (!ok) return false;
  }
  if (IsIllegal(inst)) return false;
  if (HasSideEffect(inst)) return false;
  if (HasControlDependencies(inst)) return false;
  // XLA: padding a broadcast with a constant is slow to fold and no faster to run.
  if (inst.opcode() == O::kPad && inst.operand_count() == 2 && inst.operand(0)->opcode() == O::kBroadcast &&
      inst.operand(1)->opcode() == O::kConstant)
    return false;
  if (!options_.aggressive && inst.shape().IsArray()) {
    int64_t in_operands = 0;
    for (const HloInstruction* op : inst.operands()) {
      if (!op->shape().IsArray()) continue;
      auto n = op->shape().ElementCount();
      if (!n.ok()) return false;
      in_operands = std::min<int64_t>(in_operands + *n, int64_t{1} << 62);
    }
    auto n = inst.shape().ElementCount();
    if (!n.ok()) return false;
    if (std::max(*n, in_operands) > options_.max_constant_size_elements) return false;
  }
  return true;
}

absl::StatusOr<Literal> Folder::Evaluate(const HloInstruction& inst) {
  // The operand tree (constants, broadcasts of constants, iotas, tuples) copied into a scratch
  // computation; each constant becomes a parameter bound to its literal.
  HloComputation scratch("constant_folding.scratch");
  std::vector<const Literal*> args;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> copied;
  std::vector<std::pair<const HloInstruction*, bool>> stack;
  for (const HloInstruction* op : inst.operands()) stack.push_back({op, false});
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (copied.contains(node)) continue;
    if (node->opcode() == O::kConstant) {
      if (!node->attrs().literal) return absl::InvalidArgumentError(absl::StrCat(node->name(), " has no value"));
      auto p = std::make_unique<HloInstruction>(O::kParameter, node->shape(), node->name());
      p->mutable_attrs().parameter_number = static_cast<int64_t>(args.size());
      args.push_back(&*node->attrs().literal);
      copied[node] = scratch.AddInstruction(std::move(p));
      continue;
    }
    if (!expanded) {
      stack.push_back({node, true});
      for (const HloInstruction* op : node->operands()) stack.push_back({op, false});
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : node->operands()) operands.push_back(copied.at(op));
    copied[node] = scratch.AddInstruction(CloneInstruction(*node, operands));
  }
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* op : inst.operands()) operands.push_back(copied.at(op));
  HloInstruction* root = scratch.AddInstruction(CloneInstruction(inst, operands));
  scratch.set_root_instruction(root);

  EvaluatorOptions eval_options;
  eval_options.max_loop_iterations = std::max<int64_t>(options_.max_loop_iterations, 0);
  // A folded constant that large would not be wanted anyway; fail instead of allocating it.
  eval_options.max_value_bytes = int64_t{1} << 30;
  return EvaluateComputation(scratch, args, eval_options);
}

absl::StatusOr<bool> Folder::Run() {
  // XLA folds in non-fusion, non-composite computations only.
  absl::flat_hash_set<const HloComputation*> composite;
  for (const auto& c : module_.computations())
    for (const auto& inst : c->instructions())
      if (inst->opcode() == O::kCall && !inst->called_computations().empty())
        for (const auto& [k, v] : inst->attrs().raw_attributes)
          if (k == "is_composite" && v == "true") composite.insert(inst->called_computations()[0]);

  bool changed = false;
  for (HloComputation* computation : module_.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation() || composite.contains(computation)) continue;
    absl::flat_hash_set<const HloInstruction*> removed;
    std::vector<const HloInstruction*> just_removed;
    for (HloInstruction* inst : computation->MakeInstructionPostOrder()) {
      if (removed.contains(inst) || IsDead(*inst)) continue;
      bool any_constant, all_foldable;
      ScanOperands(*inst, &any_constant, &all_foldable);
      if (!options_.aggressive && !any_constant) continue;
      if (!all_foldable) continue;
      if (inst->opcode() == O::kParameter || inst->opcode() == O::kConstant || inst->opcode() == O::kTuple) continue;
      if (!IsFoldable(*inst, 0)) continue;
      absl::StatusOr<Literal> value = Evaluate(*inst);
      if (!value.ok()) continue;  // as XLA: what cannot be evaluated stays

      auto constant = std::make_unique<HloInstruction>(O::kConstant, inst->shape(), "constant");
      value->mutable_shape() = inst->shape();
      InstructionAttributes& a = constant->mutable_attrs();
      a.literal = std::move(*value);
      // XLA's SetupDerivedInstruction: the folded value keeps its origin's annotations.
      a.metadata = inst->attrs().metadata;
      a.sharding = inst->attrs().sharding;
      a.frontend_attributes = inst->attrs().frontend_attributes;
      a.statistics_viz = inst->attrs().statistics_viz;
      if (!names_) names_ = std::make_unique<NameUniquer>(InstructionNameUniquer(module_));
      HloInstruction* folded = AddInstructionWithUniqueName(*computation, std::move(constant), *names_, inst);
      inst->ReplaceAllUsesWith(folded);
      just_removed.clear();
      absl::Status st = RemoveInstructionAndUnusedOperands(inst, false, &just_removed);
      if (!st.ok()) return st;
      removed.insert(just_removed.begin(), just_removed.end());
      changed = true;
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> ConstantFoldingPass::Run(HloModule& module, PassContext&) {
  if (!options_.invalid_level.empty())
    return absl::InvalidArgumentError(absl::StrCat("constant_folding: option level must be 'default' or 'aggressive', got '",
                                                   options_.invalid_level, "'"));
  Folder folder(module, options_);
  return folder.Run();
}

void RegisterConstantFoldingPass(PassRegistry& registry) {
  PassInfo info;
  info.name = "constant_folding";
  info.description = "evaluates instructions of constant operands with the reference evaluator";
  info.options = {
      {"level", OptionType::kString, OptionValue(std::string("default")),
       "default (XLA's kDefault) or aggressive (also whiles, any size, no constant operand needed)"},
      {"max_constant_size_elements", OptionType::kInt, OptionValue(int64_t{45} * 1000 * 1000),
       "default level: largest result or operand total, in elements, that is folded"},
      {"max_loop_iterations", OptionType::kInt, OptionValue(int64_t{1} << 20),
       "aggressive level: a while loop running longer is not folded"},
  };
  info.factory = [](const PassOptions& o) -> std::unique_ptr<HloPass> {
    ConstantFoldingOptions options;
    if (o.Has("level")) {
      const std::string& level = o.GetString("level");
      options.aggressive = level == "aggressive";
      if (level != "default" && level != "aggressive") options.invalid_level = level.empty() ? "(empty)" : level;
    }
    if (o.Has("max_constant_size_elements")) options.max_constant_size_elements = o.GetInt("max_constant_size_elements");
    if (o.Has("max_loop_iterations")) options.max_loop_iterations = o.GetInt("max_loop_iterations");
    return std::make_unique<ConstantFoldingPass>(options);
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
