// The rewrite driver: applies generated rules (see rewrite.h) to a module, worklist-driven, to
// a fixed point; plus RewriteContext (how rules create and replace instructions) and the rule
// registry.
#include "engine/rewrite.h"

#include <algorithm>
#include <deque>
#include <iostream>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/compile_recorder.h"
#include "engine/profile.h"
#include "ir/hlo_printer.h"
#include "ir/shape_inference.h"

namespace hloc {

HloPrintOptions RuleTraceOptions() {
  HloPrintOptions o;
  o.print_metadata = false;
  o.print_backend_config = false;
  return o;
}

// --- RewriteContext -----------------------------------------------------------------------------

namespace {

bool HasAnyLayout(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes())
      if (HasAnyLayout(e)) return true;
    return false;
  }
  return s.has_layout();
}

// Two shapes equal ignoring layout that would still disagree about a layout somewhere.
bool LayoutsConflict(const Shape& a, const Shape& b) {
  if (a.IsTuple() && b.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return true;
    for (size_t i = 0; i < a.tuple_shapes().size(); ++i)
      if (LayoutsConflict(a.tuple_shapes(i), b.tuple_shapes(i))) return true;
    return false;
  }
  return a.has_layout() && b.has_layout() && !(a.layout() == b.layout());
}

}  // namespace

std::string RewriteContext::UniqueName(const std::string& hint) {
  if (!used_names_) {
    used_names_ = std::make_shared<std::unordered_set<std::string>>();
    const HloModule* module = computation_->parent();
    if (module != nullptr) {
      for (const auto& c : module->computations())
        for (const auto& i : c->instructions()) used_names_->insert(i->name());
    } else {
      for (const auto& i : computation_->instructions()) used_names_->insert(i->name());
    }
  }
  // XLA's style: "add.7". Start past the names in use rather than scanning from 1 each time.
  std::string base = hint;
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot + 1 < base.size() &&
      std::all_of(base.begin() + dot + 1, base.end(), [](char c) { return c >= '0' && c <= '9'; }))
    base.resize(dot);
  for (int64_t n = static_cast<int64_t>(used_names_->size());; ++n) {
    std::string name = absl::StrCat(base, ".", n);
    if (used_names_->insert(name).second) return name;
  }
}

HloInstruction* RewriteContext::Create(HloOpcode opcode, std::vector<HloInstruction*> operands, NewInstruction spec,
                                       const std::string& name_hint) {
  for (HloInstruction* op : operands)
    if (op == nullptr || op->parent() != computation_) return nullptr;
  auto inst = std::make_unique<HloInstruction>(opcode, spec.shape ? *spec.shape : Shape());
  inst->mutable_attrs() = std::move(spec.attrs);
  inst->mutable_called_computations() = std::move(spec.called_computations);
  for (HloInstruction* op : operands) inst->AppendOperand(op);

  absl::StatusOr<Shape> inferred = InferShape(*inst);
  bool ok = inferred.ok();
  // An explicit shape must be what inference accepts (for broadcast, reshape, convert, ...
  // inference checks the instruction's own choice).
  if (ok && spec.shape && !inferred->EqualIgnoringLayout(*spec.shape)) ok = false;
  if (!ok) {
    inst->DetachFromOperandsAndUsers();
    return nullptr;
  }
  if (!spec.shape) {
    Shape shape = *inferred;
    // Keep the module's convention: where the rewritten code carries layouts, so do new ones.
    bool want_layout = root_ != nullptr ? HasAnyLayout(root_->shape())
                                        : (!operands.empty() && HasAnyLayout(operands[0]->shape()));
    if (want_layout) shape.SetDefaultLayout();
    inst->mutable_shape() = std::move(shape);
  }
  // What a rule makes stands for the root it rewrites: the root's metadata, and its place in
  // the text for errors.
  if (root_ != nullptr) {
    inst->mutable_attrs().metadata = root_->attrs().metadata;
    inst->set_text_location(root_->text_location());
  }
  inst->set_name(UniqueName(name_hint.empty() ? std::string(HloOpcodeString(opcode)) : name_hint));
  // Just before the root being rewritten: operands (existing, or created earlier) stay ahead of
  // their uses, and so does the root's replacement ahead of the root's users.
  HloInstruction* raw = computation_->AddInstructionBefore(std::move(inst), root_);
  created_.push_back(raw);
  return raw;
}

HloInstruction* RewriteContext::ScalarLike(const HloInstruction* like, double value) {
  const Shape& shape = like->shape();
  if (!shape.IsArray()) return nullptr;
  PrimitiveType type = shape.element_type();
  Literal literal = IsIntegral(type) ? Literal::ScalarInt(type, static_cast<int64_t>(value))
                                     : Literal::ScalarDouble(type, value);
  NewInstruction c;
  c.attrs.literal = std::move(literal);
  HloInstruction* constant = Create(HloOpcode::kConstant, {}, std::move(c));
  if (constant == nullptr || shape.rank() == 0) return constant;
  NewInstruction b;
  Shape out(type, shape.dimensions());
  out.mutable_dynamic_dimensions() = shape.dynamic_dimensions();
  if (shape.has_layout()) out.set_layout(shape.layout());
  b.shape = std::move(out);
  return Create(HloOpcode::kBroadcast, {constant}, std::move(b));
}

bool RewriteContext::Replace(HloInstruction* old, HloInstruction* replacement) {
  if (old == nullptr || replacement == nullptr || old == replacement) return false;
  if (old->parent() != computation_ || replacement->parent() != computation_) return false;
  if (!old->shape().EqualIgnoringLayout(replacement->shape())) return false;
  // Control edges would have to move too; XLA's simplifier leaves such instructions alone.
  if (!old->control_predecessors().empty() || !old->control_successors().empty()) return false;
  bool is_new = std::find(created_.begin(), created_.end(), replacement) != created_.end();
  if (is_new) {
    // A new instruction that uses `old` would end up using itself.
    for (HloInstruction* c : created_)
      for (HloInstruction* op : c->operands())
        if (op == old) return false;
    replacement->mutable_shape() = old->shape();  // the old layout, exactly
  } else if (LayoutsConflict(old->shape(), replacement->shape())) {
    return false;  // users would see a different layout
  }
  old->ReplaceAllUsesWith(replacement);
  replaced_.push_back({old, replacement});
  return true;
}

void RewriteContext::DiscardCreatedSince(size_t mark) {
  while (created_.size() > mark) {
    HloInstruction* inst = created_.back();
    created_.pop_back();
    if (inst->user_count() != 0 || inst->IsRoot()) continue;  // in use: the dead-code sweep decides
    std::string name = inst->name();
    if (computation_->RemoveInstruction(inst).ok() && used_names_) used_names_->erase(name);
  }
}

// --- RuleRegistry -------------------------------------------------------------------------------

RuleRegistry& RuleRegistry::Global() {
  static RuleRegistry* registry = [] {
    auto* r = new RuleRegistry();
    RegisterAllGeneratedRules(*r);
    return r;
  }();
  return *registry;
}

void RuleRegistry::Register(const RuleInfo* rule) {
  if (std::find(rules_.begin(), rules_.end(), rule) == rules_.end()) rules_.push_back(rule);
}

void RuleRegistry::RegisterTag(const TagInfo* tag) {
  if (FindTag(tag->name) == nullptr) tags_.push_back(tag);
}

const TagInfo* RuleRegistry::FindTag(std::string_view name) const {
  for (const TagInfo* t : tags_)
    if (name == t->name) return t;
  return nullptr;
}

bool RuleHasTag(const RuleInfo& rule, std::string_view tag) {
  for (int i = 0; i < rule.num_tags; ++i)
    if (tag == rule.tags[i]) return true;
  return false;
}

bool RuleNamedBy(const std::string& entry, const RuleInfo& rule) {
  if (entry == rule.name || (rule.group[0] != '\0' && entry == rule.group)) return true;
  return entry.starts_with(kRuleTagPrefix) &&
         RuleHasTag(rule, std::string_view(entry).substr(kRuleTagPrefix.size()));
}

std::vector<const RuleInfo*> RuleRegistry::RulesForPass(const std::string& pass) const {
  std::vector<const RuleInfo*> out;
  for (const RuleInfo* r : rules_)
    if (pass == r->pass) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const RuleInfo* a, const RuleInfo* b) { return a->priority > b->priority; });
  return out;
}

// --- the driver ---------------------------------------------------------------------------------

namespace {

bool Named(const std::vector<std::string>& names, const RuleInfo* rule) {
  for (const std::string& n : names)
    if (RuleNamedBy(n, *rule)) return true;
  return false;
}

// Every name in an enable/disable list must be some rule's name or group (any pass), or
// "tag:" a declared tag, or a typo would silently change nothing.
absl::Status CheckRuleNames(const RuleRegistry& registry, const std::vector<std::string>& names, const char* what) {
  std::set<std::string> known;
  for (const RuleInfo* r : registry.all()) {
    known.insert(r->name);
    if (r->group[0] != '\0') known.insert(r->group);
  }
  for (const std::string& n : names) {
    if (n.starts_with(kRuleTagPrefix)) {
      if (registry.FindTag(std::string_view(n).substr(kRuleTagPrefix.size())) == nullptr)
        return absl::InvalidArgumentError(absl::StrCat("unknown tag '", n.substr(kRuleTagPrefix.size()), "' in the ",
                                                       what, " rules: no Tag record (rules/base/Dsl.td) has that name"));
      continue;
    }
    if (known.count(n) == 0)
      return absl::InvalidArgumentError(absl::StrCat("unknown rule or rule group '", n, "' in the ", what,
                                                     " rules: no generated rule has that name or group"));
  }
  return absl::OkStatus();
}

// Whether removing an unused instruction could change what the program does.
bool HasSideEffect(const HloInstruction* inst) {
  switch (inst->opcode()) {
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kRecv: case HloOpcode::kRecvDone:
    case HloOpcode::kInfeed: case HloOpcode::kOutfeed: case HloOpcode::kRng: case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart: case HloOpcode::kCopyDone:
    // Calls could reach any of the above; rewrites do not orphan them in practice.
    case HloOpcode::kWhile: case HloOpcode::kCall: case HloOpcode::kConditional:
      return true;
    case HloOpcode::kCustomCall:
      return inst->attrs().custom_call_has_side_effect;
    default:
      return IsCollective(inst->opcode());
  }
}

bool Removable(const HloInstruction* inst) {
  return inst->user_count() == 0 && !inst->IsRoot() && inst->opcode() != HloOpcode::kParameter &&
         inst->control_predecessors().empty() && inst->control_successors().empty() && !HasSideEffect(inst);
}

// Removes the given instructions when nothing uses them, then their operands that become unused.
void RemoveDeadLeftovers(HloComputation* computation, const std::vector<HloInstruction*>& candidates) {
  absl::flat_hash_set<HloInstruction*> live;  // still in the computation
  for (const auto& i : computation->instructions()) live.insert(i.get());
  std::vector<HloInstruction*> stack(candidates.begin(), candidates.end());
  while (!stack.empty()) {
    HloInstruction* inst = stack.back();
    stack.pop_back();
    if (!live.contains(inst) || !Removable(inst)) continue;
    std::vector<HloInstruction*> operands = inst->operands();
    if (!computation->RemoveInstruction(inst).ok()) continue;
    live.erase(inst);
    for (HloInstruction* op : operands) stack.push_back(op);
  }
}

HloPrintOptions TraceOptions() { return RuleTraceOptions(); }

// " [tags: a, b]" after a traced rule's file:line, or "" for a rule without tags.
std::string TagsText(const RuleInfo& rule) {
  if (rule.num_tags == 0) return "";
  std::string out = " [tags: ";
  for (int i = 0; i < rule.num_tags; ++i) absl::StrAppend(&out, i ? ", " : "", rule.tags[i]);
  return out + "]";
}

// --trace-rules=all: a candidate rule that did not fire, with the first condition that failed.
void TraceRefusal(std::ostream& trace, const std::string& pass, const RuleInfo& rule, const std::string& why,
                  const std::string& inst) {
  trace << "[" << pass << "] refused " << rule.name << " (" << rule.file << ":" << rule.line << ")" << TagsText(rule)
        << ": " << (why.empty() ? "its C++ function declined or the result could not be built" : why) << "\n";
  trace << "  on: " << inst << "\n";
}

struct ComputationRun {
  bool changed = false;
  int64_t sweeps = 0;
};

ComputationRun RewriteComputation(HloComputation* computation, const std::string& pass,
                                  const std::vector<std::vector<const RuleInfo*>>& by_opcode, PassContext& context,
                                  int64_t max_iterations, std::shared_ptr<std::unordered_set<std::string>> names,
                                  RewriteStats* stats) {
  ComputationRun run;
  RewriteContext ctx(computation, &context);
  ctx.set_used_names(std::move(names));
  ctx.set_explain_refusals(context.trace_refusals);
  std::ostream& trace = context.trace_out != nullptr ? *context.trace_out : std::cerr;
  std::vector<HloInstruction*> leftovers;  // replaced or created: dead-code candidates
  // A set of rules that undo each other would never reach a fixed point: cap the firings of
  // one sweep (relative to the computation's size when the pass started); max_iterations then
  // bounds the whole run.
  const int64_t firing_budget = 16 * computation->instruction_count() + 1024;

  for (int64_t sweep = 0; sweep < max_iterations; ++sweep) {
    ++run.sweeps;
    std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
    std::deque<HloInstruction*> queue(order.begin(), order.end());
    absl::flat_hash_set<HloInstruction*> queued(order.begin(), order.end());
    auto push = [&](HloInstruction* inst) {
      if (queued.insert(inst).second) queue.push_back(inst);
    };
    int64_t firings = 0;
    while (!queue.empty() && firings < firing_budget) {
      HloInstruction* inst = queue.front();
      queue.pop_front();
      queued.erase(inst);
      if (inst->user_count() == 0 && !inst->IsRoot()) continue;  // dead: not worth rewriting
      const std::vector<const RuleInfo*>& candidates = by_opcode[static_cast<int>(inst->opcode())];
      if (candidates.empty()) continue;
      const bool record = context.trace_rules || context.trace_refusals || context.recorder != nullptr;
      std::string before = record ? PrintInstruction(*inst, TraceOptions()) : std::string();
      for (const RuleInfo* rule : candidates) {
        ctx.set_root(inst);
        ctx.created().clear();
        ctx.replaced().clear();
        ctx.clear_refusal();
        if (!rule->fn(ctx, inst)) {
          ctx.DiscardCreatedSince(0);  // a rule that refused leaves nothing behind
          if (context.trace_refusals) TraceRefusal(trace, pass, *rule, ctx.refusal(), before);
          continue;
        }
        ++firings;
        run.changed = true;
        if (stats != nullptr) ++stats->firings[rule->name];
        if (context.trace_rules) {
          trace << "[" << pass << "] " << rule->name << " (" << rule->file << ":" << rule->line << ")" << TagsText(*rule)
                << "\n";
          trace << "  before: " << before << "\n";
          if (ctx.replaced().empty()) {
            trace << "  after:  " << PrintInstruction(*inst, TraceOptions()) << "\n";
          }
          for (const auto& [old, replacement] : ctx.replaced())
            trace << "  after:  " << PrintInstruction(*replacement, TraceOptions()) << "\n";
        }
        if (context.recorder != nullptr) {
          std::string after;
          if (ctx.replaced().empty()) after = PrintInstruction(*inst, TraceOptions());
          for (const auto& [old, replacement] : ctx.replaced())
            after += (after.empty() ? "" : "\n") + PrintInstruction(*replacement, TraceOptions());
          context.recorder->firings.push_back(
              {context.recorder->current_pass(), rule->name, rule->file, rule->line, before, after});
        }
        for (HloInstruction* c : ctx.created()) {
          push(c);
          leftovers.push_back(c);
        }
        for (const auto& [old, replacement] : ctx.replaced()) {
          leftovers.push_back(old);
          push(replacement);
          for (HloInstruction* user : replacement->users()) push(user);
        }
        if (ctx.replaced().empty()) push(inst);  // changed in place (a NativeRule): look again
        break;  // the first rule that fires wins
      }
    }
    ctx.set_root(nullptr);
    // Dead code left by this sweep goes now, so the next sweep walks only live instructions.
    RemoveDeadLeftovers(computation, leftovers);
    leftovers.clear();
    if (firings == 0) break;
    if (sweep + 1 == max_iterations)
      std::cerr << "hloc: note: " << pass << " still rewrote " << computation->name() << " in its sweep "
                << max_iterations << " (its max_iterations); continuing with the module as it is\n";
  }
  return run;
}

}  // namespace

absl::StatusOr<bool> RunRewriteRules(HloModule& module, const std::string& pass, PassContext& context,
                                     int64_t max_iterations, RewriteStats* stats) {
  if (max_iterations < 1) return absl::InvalidArgumentError(absl::StrCat(pass, ": max_iterations must be at least 1"));
  const RuleRegistry& registry = RuleRegistry::Global();
  absl::Status s = CheckRuleNames(registry, context.disabled_rules, "disabled");
  if (s.ok()) s = CheckRuleNames(registry, context.enabled_rules, "enabled");
  if (!s.ok()) return s;

  std::vector<const RuleInfo*> all = registry.RulesForPass(pass);
  // The enabled list restricts a pass only when it names some of that pass's rules or groups,
  // so one list can serve a pipeline with several rewrite passes.
  bool restrict = false;
  for (const RuleInfo* r : all) restrict = restrict || Named(context.enabled_rules, r);
  std::vector<const RuleInfo*> rules;
  for (const RuleInfo* r : all) {
    if (restrict && !Named(context.enabled_rules, r)) continue;
    if (Named(context.disabled_rules, r)) continue;
    if (!RequirementsHold(r->requirements, r->num_requires, context.profile)) continue;
    rules.push_back(r);
  }
  if (rules.empty()) return false;

  // Dispatch by root opcode; any-root rules join every list in priority order.
  std::vector<std::vector<const RuleInfo*>> by_opcode(kNumOpcodes);
  for (const RuleInfo* r : rules) {
    if (r->root_opcode < 0) {
      for (auto& list : by_opcode) list.push_back(r);
    } else if (r->root_opcode < kNumOpcodes) {
      by_opcode[r->root_opcode].push_back(r);
    }
  }

  auto names = std::make_shared<std::unordered_set<std::string>>();
  for (const auto& c : module.computations())
    for (const auto& i : c->instructions()) names->insert(i->name());

  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;  // fused code is the fusion pass's business
    ComputationRun run = RewriteComputation(computation, pass, by_opcode, context, max_iterations, names, stats);
    changed = changed || run.changed;
    if (stats != nullptr) stats->iterations = std::max(stats->iterations, run.sweeps);
  }
  return changed;
}

}  // namespace hloc
