// A pass: a name, typed options, and Run(module) -> changed. Passes are registered by name
// (XLA's names: "algsimp", "dce", "cse", ...) so YAML manifests can list, order, configure and
// disable them without a rebuild.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

struct HardwareProfile;
struct CompileRecorder;

enum class OptionType { kBool, kInt, kFloat, kString, kStringList };
using OptionValue = std::variant<bool, int64_t, double, std::string, std::vector<std::string>>;

struct PassOptionSpec {
  std::string name;
  OptionType type = OptionType::kBool;
  OptionValue default_value;
  std::string description;
};

// Option values of one pass instance, already checked against its specs by the manifest loader.
class PassOptions {
 public:
  void Set(const std::string& name, OptionValue v) { values_[name] = std::move(v); }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  bool GetBool(const std::string& name) const { return std::get<bool>(values_.at(name)); }
  int64_t GetInt(const std::string& name) const { return std::get<int64_t>(values_.at(name)); }
  double GetFloat(const std::string& name) const { return std::get<double>(values_.at(name)); }
  const std::string& GetString(const std::string& name) const { return std::get<std::string>(values_.at(name)); }
  const std::vector<std::string>& GetStringList(const std::string& name) const {
    return std::get<std::vector<std::string>>(values_.at(name));
  }
  const std::map<std::string, OptionValue>& values() const { return values_; }

 private:
  std::map<std::string, OptionValue> values_;
};

// What every pass may consult while it runs.
struct PassContext {
  const HardwareProfile* profile = nullptr;  // null: no profile chosen
  bool trace_rules = false;                  // --trace-rules: rewrite passes log each firing
  bool trace_refusals = false;               // --trace-rules=all: and each candidate rule's refusal
  std::ostream* trace_out = nullptr;         // where traces go (stderr by default)
  // Rule, group and record names disabled/enabled from YAML (rewrite passes honour these, and
  // passes with PassInfo::records their records).
  std::vector<std::string> disabled_rules;
  std::vector<std::string> enabled_rules;    // non-empty: only these rules/groups run
  // Writes a pass's own dump file (module_NNNN.<module>.<suffix>.txt, in --dump-to's folder);
  // null when dumps are off. The latency-hiding scheduler writes its schedule with it.
  std::function<absl::Status(const std::string& suffix, const std::string& text)> write_dump;
  // --dump-html: the structured record of this compilation (compile_recorder.h); null: off.
  // The pass manager adds a row per pass; rewrite passes add rule firings, fusion passes their
  // decisions.
  CompileRecorder* recorder = nullptr;
};

// Which records of one family (a pass's fusion vetoes, its layout rows) a pass's rule lists
// leave on: a disabled name switches its record off; an enabled list keeps only the records it
// names, when it names any of the family (one list then serves a pipeline whose passes have
// other families), as RunRewriteRules treats rewrite rules.
class RecordSwitch {
 public:
  RecordSwitch(const std::vector<std::string>& enabled, const std::vector<std::string>& disabled,
               const std::vector<const char*>& family)
      : enabled_(enabled), disabled_(disabled) {
    for (const char* name : family) restrict_ = restrict_ || Named(enabled_, name);
  }
  bool On(const char* name) const { return (!restrict_ || Named(enabled_, name)) && !Named(disabled_, name); }
  // A record of a group (library patterns, as rewrite rules): on unless its name or its group
  // is disabled, and, when the enabled list restricts the family (whose names then include the
  // groups), when it names the record or its group. An empty group is none.
  bool On(const char* name, const char* group) const {
    const bool grouped = group != nullptr && group[0] != '\0';
    if (Named(disabled_, name) || (grouped && Named(disabled_, group))) return false;
    return !restrict_ || Named(enabled_, name) || (grouped && Named(enabled_, group));
  }

 private:
  static bool Named(const std::vector<std::string>& names, const char* name) {
    for (const std::string& n : names)
      if (n == name) return true;
    return false;
  }
  const std::vector<std::string>& enabled_;
  const std::vector<std::string>& disabled_;
  bool restrict_ = false;
};

class HloPass {
 public:
  virtual ~HloPass() = default;
  // Returns whether the module changed. Errors abort the pipeline with the pass's name.
  virtual absl::StatusOr<bool> Run(HloModule& module, PassContext& context) = 0;
};

struct PassInfo {
  std::string name;         // XLA's pass name
  std::string description;  // one line, shown by --list-passes
  std::vector<PassOptionSpec> options;
  std::function<std::unique_ptr<HloPass>(const PassOptions&)> factory;
  // Decision records other than rewrite rules that the pass consults (fusion vetoes...): a
  // pipeline entry's `rules: {enable, disable}` switch them by name like the pass's rewrite
  // rules (the pass reads PassContext::enabled_rules/disabled_rules), and the manifest loader
  // checks the names against this list. Null: none.
  std::function<std::vector<std::string>()> records;
};

class PassRegistry {
 public:
  // The registry with every pass of hloc registered (RegisterAllPasses is called once).
  static PassRegistry& Global();
  void Register(PassInfo info);
  const PassInfo* Find(const std::string& name) const;
  std::vector<const PassInfo*> All() const;  // sorted by name

 private:
  std::map<std::string, PassInfo> passes_;
};

// Defined in src/passes/registry.cc: calls each area's Register*Passes(PassRegistry&).
void RegisterAllPasses(PassRegistry& registry);

}  // namespace hloc
