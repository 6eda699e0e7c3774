// The runtime of declarative rewrite rules. hloc-tblgen turns each `def X : Rule<...>` in
// rules/**/*.td into one straight-line C++ function (RuleFn) that matches at a root
// instruction and, when it fires, builds the replacement through a RewriteContext. The
// rewrite driver (RunRewriteRules) applies a pass's rules to a fixed point.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_set>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/pass.h"
#include "engine/requirements.h"
#include "ir/hlo_printer.h"
#include "ir/module.h"

namespace hloc {

// What a result-DAG node asks for beyond its opcode and operands: an explicit shape (for ops
// whose shape is not inferable: broadcast, reshape, convert, iota, ...), attributes, called
// computations. Attribute functions (rules' AttrFn records) fill it.
struct NewInstruction {
  std::optional<Shape> shape;
  InstructionAttributes attrs;
  std::vector<HloComputation*> called_computations;
};

// How --trace-rules prints an instruction (no metadata, no backend_config); library passes that
// trace their pattern records print the same way.
HloPrintOptions RuleTraceOptions();

class RewriteContext {
 public:
  RewriteContext(HloComputation* computation, PassContext* pass_context)
      : computation_(computation), pass_context_(pass_context) {}

  HloComputation* computation() const { return computation_; }
  PassContext* pass_context() const { return pass_context_; }

  // Creates an instruction in the current computation, named after `name_hint` with a unique
  // suffix. The shape is spec.shape if set, else inferred (InferShape); when inference fails the
  // instruction is not created and nullptr is returned (the rule then refuses to fire).
  // Metadata is copied from the instruction being rewritten (set by the driver).
  HloInstruction* Create(HloOpcode opcode, std::vector<HloInstruction*> operands,
                         NewInstruction spec = {}, const std::string& name_hint = "");
  // A constant of `type`, scalar `value`, broadcast to `like`'s dimensions (no broadcast for scalars).
  HloInstruction* ScalarLike(const HloInstruction* like, double value);
  // Replaces every use of `old` (and the root, if it is) with `replacement`. Refuses (false)
  // if the shapes differ ignoring layout; keeps `old`'s layout on a new instruction.
  bool Replace(HloInstruction* old, HloInstruction* replacement);

  // Set by the driver for each attempt: the root being rewritten.
  void set_root(HloInstruction* root) { root_ = root; }
  HloInstruction* root() const { return root_; }
  // Instructions created by the current attempt (the driver deletes them if the rule refuses).
  std::vector<HloInstruction*>& created() { return created_; }
  // Removes the instructions created since created().size() was `mark` (newest first). They
  // must have no users outside themselves: generated code calls this when a rule refuses
  // part-way through building its result.
  void DiscardCreatedSince(size_t mark);
  // (old, replacement) for every successful Replace since the driver last cleared it.
  std::vector<std::pair<HloInstruction*, HloInstruction*>>& replaced() { return replaced_; }
  // Names already used in the module (Create keeps new names unique). The driver shares one
  // table between the computations of a module; when unset, Create builds it on first use.
  void set_used_names(std::shared_ptr<std::unordered_set<std::string>> names) {
    used_names_ = std::move(names);
  }

  // --trace-rules=all: the generated matchers say why a candidate rule refused (the first
  // condition that failed, as MLIR DRR's notifyMatchFailure) through Refuse, which always
  // returns false; the reason is kept only while the driver explains refusals.
  bool Refuse(const char* why) {
    if (explain_refusals_) refusal_ = why;
    return false;
  }
  void set_explain_refusals(bool on) { explain_refusals_ = on; }
  const std::string& refusal() const { return refusal_; }
  void clear_refusal() { refusal_.clear(); }

 private:
  std::string UniqueName(const std::string& hint);

  HloComputation* computation_;
  PassContext* pass_context_;
  HloInstruction* root_ = nullptr;
  std::vector<HloInstruction*> created_;
  std::vector<std::pair<HloInstruction*, HloInstruction*>> replaced_;
  std::shared_ptr<std::unordered_set<std::string>> used_names_;
  bool explain_refusals_ = false;
  std::string refusal_;
};

using RuleFn = bool (*)(RewriteContext& ctx, HloInstruction* root);

// One generated rule. Strings point into the generated code's static storage.
struct RuleInfo {
  const char* name;        // the def's name: "AddZero"
  const char* pass;        // the rewrite pass that runs it: "algsimp"
  const char* group;       // for enabling/disabling in YAML: "identities"
  int priority;            // higher first; declaration order breaks ties
  const char* file;        // "rules/simplify/AlgebraicSimplifier.td"
  int line;
  int root_opcode;         // static_cast<int>(HloOpcode) of the pattern root, or -1 for any
  const Requirement* requirements;  // its Requirement records (HasTensorCores, ...); C++20 reserves "requires"
  int num_requires;
  const char* summary;     // the rule's summary: its comment or its pattern text
  RuleFn fn;
  const char* const* tags = nullptr;  // the YAML names of its Tag records ("inexact_like_xla")
  int num_tags = 0;
};

// A Tag record (rules/base/Dsl.td): a property rules carry that YAML selects them by.
struct TagInfo {
  const char* name;     // "inexact_like_xla"
  const char* summary;  // what it means
};

// In a `rules:` enable/disable list, "tag:NAME" selects the rules carrying tag NAME.
inline constexpr std::string_view kRuleTagPrefix = "tag:";
bool RuleHasTag(const RuleInfo& rule, std::string_view tag);
// Whether a `rules:` list entry names the rule: its name, its group, or "tag:" one of its tags.
bool RuleNamedBy(const std::string& entry, const RuleInfo& rule);

// All generated rules of the build, registered once (generated code calls RegisterRule).
class RuleRegistry {
 public:
  static RuleRegistry& Global();
  void Register(const RuleInfo* rule);
  // Rules of one rewrite pass, sorted by priority (desc) then declaration order.
  std::vector<const RuleInfo*> RulesForPass(const std::string& pass) const;
  const std::vector<const RuleInfo*>& all() const { return rules_; }
  // Declared tags (every rule file registers the Tag records it sees; one entry per name).
  void RegisterTag(const TagInfo* tag);
  const TagInfo* FindTag(std::string_view name) const;
  const std::vector<const TagInfo*>& tags() const { return tags_; }

 private:
  std::vector<const RuleInfo*> rules_;
  std::vector<const TagInfo*> tags_;
};

// Defined in generated code (build/gen/rules/all_rules.cc): registers every rule file's rules.
void RegisterAllGeneratedRules(RuleRegistry& registry);

struct RewriteStats {
  std::map<std::string, int64_t> firings;  // rule name -> times fired
  int64_t iterations = 0;
};

// Applies `pass`'s enabled rules (PassContext's enable/disable lists; Requires checked against
// the profile) to every instruction of every computation, worklist-driven, until nothing
// fires or `max_iterations` sweeps. With context.trace_rules, each firing prints the rule,
// its file:line, and the instruction before and after.
absl::StatusOr<bool> RunRewriteRules(HloModule& module, const std::string& pass, PassContext& context,
                                     int64_t max_iterations, RewriteStats* stats = nullptr);

}  // namespace hloc
