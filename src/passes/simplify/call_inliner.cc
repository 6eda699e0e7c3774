// call-inliner, after XLA's CallInliner (xla/service/call_inliner.cc).
//
// Computations are visited callees first, so by the time a call is inlined its callee has no
// inlineable calls left. Inlining copies every callee instruction (dead ones too, as XLA's
// visitor does), keeps their names where unused in the module (else "name.N"), carries control
// edges over (and makes every copy follow the call's control predecessors), and replaces the
// call by the copy of the callee's root. A fused or async-wrapped computation is copied with its
// caller, since it may have only one.
#include "passes/simplify/call_inliner.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "passes/pass_util.h"
#include "passes/simplify/hlo_dce.h"

namespace hloc {
namespace {

using O = HloOpcode;

// XLA's frontend inline policy ("inlineable" frontend attribute).
enum class FrontendPolicy { kAuto, kEarly, kLate };
FrontendPolicy GetFrontendPolicy(const HloInstruction& inst) {
  auto it = inst.attrs().frontend_attributes.find("inlineable");
  if (it == inst.attrs().frontend_attributes.end()) return FrontendPolicy::kAuto;
  if (it->second == "false" || it->second == "xla_late") return FrontendPolicy::kLate;
  if (it->second == "true" || it->second == "xla_early") return FrontendPolicy::kEarly;
  return FrontendPolicy::kAuto;
}

bool IsComposite(const HloInstruction& inst) {
  for (const auto& [k, v] : inst.attrs().raw_attributes)
    if (k == "is_composite") return v == "true";
  return false;
}

// XLA's HloInstruction::IsFusible.
bool IsFusible(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case O::kDomain: case O::kParameter: case O::kWhile: case O::kConditional: case O::kCall:
      return false;
    case O::kFusion: case O::kMap: case O::kReduce: case O::kReduceWindow:
      return true;
    case O::kRng:
      return inst.user_count() <= 1;
    default:
      return !HasSideEffect(inst);
  }
}

struct InlineState {
  CloneNames names;
  bool uniquify_channel_ids = false;
  int64_t next_channel_id = 1;
};

int64_t NextChannelId(const HloModule& module) {
  int64_t next = 1;
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions())
      if (inst->attrs().channel_id && *inst->attrs().channel_id >= next) next = *inst->attrs().channel_id + 1;
  return next;
}

absl::StatusOr<absl::flat_hash_map<const HloInstruction*, HloInstruction*>> InlineCall(HloInstruction* call,
                                                                                        InlineState& state) {
  if (call->opcode() != O::kCall || call->called_computations().size() != 1 || call->to_apply() == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(call->name(), " is not a call of one computation"));
  HloComputation* caller = call->parent();
  HloComputation* callee = call->to_apply();
  if (caller == nullptr || caller->parent() == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(call->name(), " is not in a module"));
  if (callee->root_instruction() == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("computation ", callee->name(), " has no root"));
  HloModule& module = *caller->parent();

  // Composite attributes describe the call, not what it computes; they must not reach the
  // inlined root through ReplaceInstruction.
  if (IsComposite(*call)) {
    FrontendAttributes& fa = call->mutable_attrs().frontend_attributes;
    fa.erase("composite.name");
    fa.erase("composite.attributes");
    fa.erase("composite.version");
  }
  // Fusion grouping requests on the call apply to everything fusible inside it.
  std::vector<std::pair<std::string, std::string>> fusion_attrs;
  const FrontendAttributes& call_fa = call->attrs().frontend_attributes;
  for (const char* key : {"MUST_FUSE", "MAXIMAL_FUSE"}) {
    auto it = call_fa.find(key);
    if (it != call_fa.end()) {
      fusion_attrs.push_back(*it);
      break;
    }
  }
  if (auto it = call_fa.find("mosaic_fusion_group"); it != call_fa.end()) fusion_attrs.push_back(*it);

  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  absl::flat_hash_map<const HloComputation*, HloComputation*> owned;
  const std::vector<HloInstruction*> call_preds = call->control_predecessors();
  for (HloInstruction* inst : callee->MakeInstructionPostOrder()) {
    if (inst->opcode() == O::kParameter) {
      int64_t n = inst->attrs().parameter_number;
      if (n < 0 || n >= call->operand_count())
        return absl::InvalidArgumentError(absl::StrCat(call->name(), " has no operand for parameter ", n, " of ",
                                                       callee->name()));
      map[inst] = call->operand(n);
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) {
      auto it = map.find(op);
      if (it == map.end())
        return absl::InvalidArgumentError(absl::StrCat("cannot inline ", callee->name(), ": ", op->name(),
                                                       " is not defined before ", inst->name()));
      operands.push_back(it->second);
    }
    std::unique_ptr<HloInstruction> clone = CloneInstruction(*inst, operands);
    absl::Status st = CloneOwnedCallees(*inst, *clone, module, state.names, owned);
    if (!st.ok()) return st;
    if (state.uniquify_channel_ids && clone->attrs().channel_id) clone->mutable_attrs().channel_id = state.next_channel_id++;
    if (IsFusible(*inst))
      for (const auto& [k, v] : fusion_attrs) clone->mutable_attrs().frontend_attributes[k] = v;
    HloInstruction* copy = AddInstructionWithUniqueName(*caller, std::move(clone), state.names.instructions, call);
    map[inst] = copy;
    for (HloInstruction* p : inst->control_predecessors()) {
      auto it = map.find(p);
      if (it != map.end() && it->second != copy) it->second->AddControlDependencyTo(copy);
    }
    // The inlined code still runs after what the call had to wait for.
    for (HloInstruction* p : call_preds)
      if (p != copy) p->AddControlDependencyTo(copy);
  }
  HloInstruction* new_root = map.at(callee->root_instruction());
  ReplaceOptions options;
  options.relay_control_dependency = true;
  options.remove_unused_operands = false;
  auto replaced = ReplaceInstruction(call, new_root, options);
  if (!replaced.ok()) return replaced.status();
  if (!*replaced) return absl::InternalError(absl::StrCat("could not replace ", call->name()));
  return map;
}

}  // namespace

bool CallInlinerPass::IsInlineable(const HloInstruction& call, const CallInlinerOptions& options,
                                   bool in_async_computation) {
  if (call.opcode() != O::kCall || call.called_computations().size() != 1 || call.to_apply() == nullptr) return false;
  if (!call.attrs().backend_config.empty() || in_async_computation) return false;
  if (IsComposite(call)) {
    auto it = call.attrs().frontend_attributes.find("composite.name");
    if (it != call.attrs().frontend_attributes.end() &&
        std::find(options.composites_to_preserve.begin(), options.composites_to_preserve.end(), it->second) !=
            options.composites_to_preserve.end())
      return false;
  }
  return GetFrontendPolicy(call) != FrontendPolicy::kLate;
}

absl::StatusOr<absl::flat_hash_map<const HloInstruction*, HloInstruction*>> CallInlinerPass::Inline(
    HloInstruction* call) {
  if (call->parent() == nullptr || call->parent()->parent() == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(call->name(), " is not in a module"));
  InlineState state{CloneNames::ForModule(*call->parent()->parent())};
  return InlineCall(call, state);
}

absl::StatusOr<bool> CallInlinerPass::Run(HloModule& module, PassContext&) {
  // Caller counts and async computations as XLA's call graph sees them before any inlining.
  auto callers = ComputeCallers(module);
  absl::flat_hash_set<const HloComputation*> async = AsyncComputations(module);
  InlineState state{CloneNames::ForModule(module)};
  state.uniquify_channel_ids = options_.uniquify_channel_ids;
  if (state.uniquify_channel_ids) state.next_channel_id = NextChannelId(module);

  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    const bool in_async = async.contains(computation);
    for (HloInstruction* inst : computation->MakeInstructionPostOrder()) {
      if (!IsInlineable(*inst, options_, in_async)) continue;
      if (GetFrontendPolicy(*inst) != FrontendPolicy::kEarly && options_.single_call_site) {
        auto it = callers.find(inst->to_apply());
        if (it == callers.end() || it->second.size() != 1) continue;
      }
      auto r = InlineCall(inst, state);
      if (!r.ok()) return r.status();
      changed = true;
    }
  }
  if (changed) {
    // The callees are now (mostly) uncalled; XLA runs DCE here too.
    auto dce = HloDcePass::RunOnModule(module);
    if (!dce.ok()) return dce.status();
  }
  return changed;
}

void RegisterCallInlinerPass(PassRegistry& registry) {
  PassInfo info;
  info.name = "call-inliner";
  info.description = "inlines call instructions (callees first), then removes uncalled computations";
  info.options = {
      {"single_call_site", OptionType::kBool, OptionValue(false),
       "only inline computations that have one call site (inlineable=\"true\" calls always)"},
      {"composites_to_preserve", OptionType::kStringList, OptionValue(std::vector<std::string>{}),
       "composite.name values of composite calls that stay calls"},
      {"uniquify_channel_ids", OptionType::kBool, OptionValue(false),
       "give inlined instructions with a channel id a fresh one"},
  };
  info.factory = [](const PassOptions& o) -> std::unique_ptr<HloPass> {
    CallInlinerOptions options;
    if (o.Has("single_call_site")) options.single_call_site = o.GetBool("single_call_site");
    if (o.Has("composites_to_preserve")) options.composites_to_preserve = o.GetStringList("composites_to_preserve");
    if (o.Has("uniquify_channel_ids")) options.uniquify_channel_ids = o.GetBool("uniquify_channel_ids");
    return std::make_unique<CallInlinerPass>(options);
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
