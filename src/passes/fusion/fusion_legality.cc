#include "passes/fusion/fusion_legality.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/profile.h"
#include "engine/rewrite.h"
#include "ir/computation.h"
#include "passes/fusion/fusion_analysis.h"

namespace hloc::fusion {
namespace {

using O = HloOpcode;

const char* KindName(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
    case FusionKind::kCustom: return "kCustom";
  }
  return "kLoop";
}

std::string OpName(const HloInstruction* i) { return std::string(HloOpcodeString(i->opcode())); }

}  // namespace

std::string FusionDecision::ToString() const {
  if (ok) return "fusible";
  if (rule.empty()) return reason;
  return absl::StrCat(reason, " (", rule, " at ", file, ":", line, ")");
}

FusionLegality::FusionLegality(PassContext* context, const std::string& target)
    : context_(context), target_(target), fusible_(kNumOpcodes, nullptr) {
  const GeneratedTables& tables = GeneratedTables::Global();
  for (const FusibleInfo* row : tables.fusible) {
    if (row->opcode < 0 || row->opcode >= kNumOpcodes) continue;
    if (!RequirementsHold(row->requirements, row->num_requires)) continue;
    if (fusible_[row->opcode] == nullptr) fusible_[row->opcode] = row;
  }
  const std::vector<std::string> none;
  std::vector<const char*> family;
  for (const FusionVetoInfo* row : tables.vetoes) family.push_back(row->name);
  const RecordSwitch on(context_ != nullptr ? context_->enabled_rules : none,
                        context_ != nullptr ? context_->disabled_rules : none, family);
  for (const FusionVetoInfo* row : tables.vetoes)
    if (on.On(row->name) && RequirementsHold(row->requirements, row->num_requires)) vetoes_.push_back(row);
}

std::vector<std::string> FusionVetoNames() {
  std::vector<std::string> names;
  for (const FusionVetoInfo* row : GeneratedTables::Global().vetoes) names.push_back(row->name);
  return names;
}

// As for rewrite rules and layout rows, except that IsCpu and IsGpu follow the compilation target
// when there is one.
bool FusionLegality::RequirementsHold(const Requirement* requirements, int n) const {
  return hloc::RequirementsHold(requirements, n, context_ ? context_->profile : nullptr, target_);
}

const FusibleInfo* FusionLegality::FusibleRecord(HloOpcode opcode) const {
  return fusible_[static_cast<int>(opcode)];
}

FusionDecision FusionLegality::IsFusibleNode(const HloInstruction* node, bool as_producer) const {
  // Library calls are refused by the IntoLibraryCall / LibraryCallProducer vetoes, which say why.
  if (IsLibraryCallInstruction(node)) return FusionDecision::Allow();
  if (node->opcode() == O::kFusion) {
    const FusionKind k = node->attrs().fusion_kind;
    if (k != FusionKind::kLoop && k != FusionKind::kInput)
      return FusionDecision::Refuse(absl::StrCat("'", node->name(), "' is a ", KindName(k),
                                                 " fusion; only kLoop and kInput fusions grow"));
    if (as_producer) {
      for (const HloInstruction* out : FusionOutputs(node)) {
        const FusibleInfo* row = FusibleRecord(out->opcode());
        if (row != nullptr && !row->as_producer)
          return FusionDecision::Refuse(absl::StrCat("its root '", OpName(out), "' stays the root of its fusion"),
                                        row->name, row->file, row->line);
      }
    }
    return FusionDecision::Allow();
  }
  if (!node->control_predecessors().empty() || !node->control_successors().empty())
    return FusionDecision::Refuse(absl::StrCat("'", node->name(), "' has control dependencies"));
  const FusibleInfo* row = FusibleRecord(node->opcode());
  if (row == nullptr)
    return FusionDecision::Refuse(absl::StrCat("'", OpName(node),
                                               "' has no Fusible record in rules/fusion/FusionKinds.td (a library "
                                               "call or an op with its own thunk)"));
  if (as_producer && !row->as_producer)
    return FusionDecision::Refuse(absl::StrCat("'", OpName(node), "' stays the root of its fusion (AsProducer = 0)"),
                                  row->name, row->file, row->line);
  if (!as_producer && !row->as_consumer)
    return FusionDecision::Refuse(absl::StrCat("'", OpName(node), "' absorbs no producers (AsConsumer = 0)"), row->name,
                                  row->file, row->line);
  return FusionDecision::Allow();
}

FusionDecision FusionLegality::CanFuse(HloInstruction* producer, HloInstruction* consumer, FusionUse use) {
  if (producer->parent() != consumer->parent() || producer->parent() == nullptr)
    return FusionDecision::Refuse("the two instructions are in different computations");
  if (std::find(consumer->operands().begin(), consumer->operands().end(), producer) == consumer->operands().end())
    return FusionDecision::Refuse(absl::StrCat("'", consumer->name(), "' does not use '", producer->name(), "'"));
  if (producer->IsRoot()) return FusionDecision::Refuse("the producer is its computation's root (its value is an output)");
  if (!producer->shape().IsArray())
    return FusionDecision::Refuse("the producer's value is not an array (tuples are read through get-tuple-element)");
  FusionDecision d = IsFusibleNode(producer, /*as_producer=*/true);
  if (!d.ok) return d;
  d = IsFusibleNode(consumer, /*as_producer=*/false);
  if (!d.ok) return d;

  RewriteContext ctx(producer->parent(), context_);
  for (const FusionVetoInfo* veto : vetoes_) {
    if ((use == FusionUse::kOutput && veto->duplication) || (use == FusionUse::kConstantSweep && veto->queue_only))
      continue;
    if (veto->fn(ctx, producer, consumer)) return FusionDecision::Refuse(veto->reason, veto->name, veto->file, veto->line);
  }

  // Every fused op must allow the kind the fusion would get. Whether one does depends only on
  // its opcode, so each distinct opcode is asked once (in order of first appearance, which
  // names the same first offender as a walk over every instruction).
  const FusionKind kind = NodeFusionKind(producer) == FusionKind::kInput || NodeFusionKind(consumer) == FusionKind::kInput
                              ? FusionKind::kInput
                              : FusionKind::kLoop;
  const char* kind_name = KindName(kind);
  std::vector<HloOpcode> opcodes = FusedOpcodes(producer);
  for (HloOpcode op : FusedOpcodes(consumer)) opcodes.push_back(op);
  for (HloOpcode op : opcodes) {
    if (op == O::kParameter || op == O::kTuple || op == O::kGetTupleElement) continue;
    const FusibleInfo* row = FusibleRecord(op);
    if (row == nullptr)
      return FusionDecision::Refuse(absl::StrCat("'", std::string(HloOpcodeString(op)), "' has no Fusible record in rules/fusion"));
    bool allowed = false;
    for (int k = 0; k < row->num_kinds; ++k) allowed |= std::strcmp(row->kinds[k], kind_name) == 0;
    if (!allowed)
      return FusionDecision::Refuse(absl::StrCat("'", std::string(HloOpcodeString(op)), "' may not take part in a ", kind_name, " fusion"),
                                    row->name, row->file, row->line);
  }
  return FusionDecision::Allow();
}

}  // namespace hloc::fusion
