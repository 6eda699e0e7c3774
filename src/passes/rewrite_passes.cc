// The rule-driven passes: one pass per distinct `Pass` name among the generated rules
// (rules/**/*.td), each running RunRewriteRules to a fixed point. algsimp always exists, so a
// pipeline can name it before any of its rules are written.
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/rewrite.h"
#include "passes/passes.h"

namespace hloc {
namespace {

class RewritePass : public HloPass {
 public:
  RewritePass(std::string name, int64_t max_iterations) : name_(std::move(name)), max_iterations_(max_iterations) {}

  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override {
    return RunRewriteRules(module, name_, context, max_iterations_);
  }

 private:
  std::string name_;
  int64_t max_iterations_;
};

std::string Description(const std::string& pass, const std::vector<const RuleInfo*>& rules) {
  std::set<std::string> files;
  for (const RuleInfo* r : rules) files.insert(r->file);
  std::string where;
  for (const std::string& f : files) absl::StrAppend(&where, where.empty() ? "" : ", ", f);
  std::string what = pass == "algsimp" ? "algebraic simplifier: " : "rewrite rules: ";
  return absl::StrCat(what, rules.size(), " rule(s)", where.empty() ? "" : absl::StrCat(" from ", where));
}

}  // namespace

void RegisterRewritePasses(PassRegistry& registry) {
  std::set<std::string> passes = {"algsimp"};
  for (const RuleInfo* r : RuleRegistry::Global().all()) passes.insert(r->pass);
  for (const std::string& pass : passes) {
    if (registry.Find(pass) != nullptr) continue;  // a hand-written pass of that name wins
    PassInfo info;
    info.name = pass;
    info.description = Description(pass, RuleRegistry::Global().RulesForPass(pass));
    info.options.push_back({"max_iterations", OptionType::kInt, OptionValue(int64_t{100}),
                            "sweeps over each computation before giving up on a fixed point"});
    info.factory = [pass](const PassOptions& options) -> std::unique_ptr<HloPass> {
      int64_t max_iterations = options.Has("max_iterations") ? options.GetInt("max_iterations") : 100;
      return std::make_unique<RewritePass>(pass, max_iterations);
    };
    registry.Register(std::move(info));
  }
}

}  // namespace hloc
