// Pipeline manifests (pipelines/*.yaml): the ordered passes hloc runs, written in YAML so they
// can be reordered, configured and disabled without a rebuild. The format is documented at the
// top of pipelines/gpu.yaml; in short:
//
//   name: gpu
//   verify: {at_start: true, after_changed_pass: true}
//   passes:
//     - pass: call-inliner
//     - group: simplification              # a nested pipeline ...
//       fixed_point: {max_iterations: 25}  # ... run until no pass in it changes the module
//       passes:
//         - pass: algsimp
//           options: {max_iterations: 50}
//           rules: {disable: [AddZero]}     # rewrite passes only: rule or group names
//         - pass: dce
//           name: late-dce                  # a label that profile patches can target
//           enabled: false
//
// Pass names, option names and option types are checked against the PassRegistry when the file
// is loaded; every mistake is an error at FILE:LINE:COL.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/pass.h"
#include "engine/rewrite.h"
#include "engine/yaml_util.h"

namespace hloc {

// Where an entry was written: a manifest, a profile's patch, or the command line.
struct SourceLocation {
  std::string file;  // "" when it came from the command line
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;
  std::string ToString() const;  // "FILE:LINE:COL", "FILE", or "<command line>"
};

struct PipelineEntry {
  enum class Kind { kPass, kGroup };
  Kind kind = Kind::kPass;
  bool enabled = true;
  SourceLocation location;

  // kPass
  std::string pass;                            // the registered pass name ("algsimp")
  std::string label;                           // optional `name:`; unique in the pipeline
  std::map<std::string, OptionValue> options;  // the options set explicitly (defaults come from the registry)
  std::vector<std::string> enabled_rules;      // rewrite passes: only these rules/groups run
  std::vector<std::string> disabled_rules;

  // kGroup
  std::string group;  // the group's name (the nested pipeline's name, as in XLA's dumps)
  bool fixed_point = false;
  int64_t max_iterations = kDefaultMaxIterations;
  std::vector<PipelineEntry> passes;

  // XLA's HloPassFix iteration limit.
  static constexpr int64_t kDefaultMaxIterations = 25;

  bool is_group() const { return kind == Kind::kGroup; }
  // The name the entry runs under in dumps and messages: the pass name or the group name.
  const std::string& name() const { return is_group() ? group : pass; }
};

// What the pass manager verifies (VerifyModule) while running.
struct VerifySettings {
  bool at_start = true;            // the input, before any pass (XLA's pipeline-start check)
  bool after_changed_pass = true;  // after every pass that reports a change
  bool layout_sensitive = false;   // VerifierOptions of the same names
  bool allow_mixed_precision = false;
};

struct Pipeline {
  std::string name;  // the top-level pipeline's name (used in per-pass dump file names)
  std::string description;
  std::string source;  // the manifest file, or "" for --passes
  VerifySettings verify;
  std::vector<PipelineEntry> passes;
};

// The registries a manifest is checked against (null: the global ones).
struct Registries {
  const PassRegistry* passes = nullptr;
  const RuleRegistry* rules = nullptr;
  const PassRegistry& pass_registry() const { return passes ? *passes : PassRegistry::Global(); }
  const RuleRegistry& rule_registry() const { return rules ? *rules : RuleRegistry::Global(); }
};

// Loads and checks a manifest.
absl::StatusOr<Pipeline> LoadPipelineFile(const std::string& path, const Registries& registries = {});
absl::StatusOr<Pipeline> LoadPipelineString(const std::string& text, const std::string& name,
                                            const Registries& registries = {});
// A pipeline running just these passes, in order, with default options (`hloc opt --passes`).
absl::StatusOr<Pipeline> PipelineFromPassList(const std::vector<std::string>& passes,
                                              const Registries& registries = {});

// One `passes:` element (a pass or a group), checked; profile patches use it for insertions.
// `depth` is the nesting depth of groups so far (bounded).
// `extra_keys` are keys of the node that belong to the caller (a patch's `insert_after:`) and
// are skipped.
absl::StatusOr<PipelineEntry> ParsePipelineEntry(const yaml::Reader& reader, const YAML::Node& node,
                                                 const Registries& registries, int depth = 0,
                                                 const std::vector<std::string>& extra_keys = {});
// Reads `options:` of one pass against its specs, into `out`.
absl::Status ParsePassOptions(const yaml::Reader& reader, const YAML::Node& node, const PassInfo& info,
                              std::map<std::string, OptionValue>* out);
// Reads `fixed_point:` of a group: `true`/`false` or {max_iterations: N}.
absl::Status ParseFixedPoint(const yaml::Reader& reader, const YAML::Node& node, const std::string& group,
                             bool* fixed_point, int64_t* max_iterations);
// Checks the `rules:` names of a rewrite pass against the rule registry.
absl::Status CheckRuleNamesForPass(const yaml::Reader& reader, const YAML::Node& node, const std::string& pass,
                                   const std::vector<std::string>& names, const Registries& registries);

// Labels and group names must be unique, and must not shadow a registered pass name, so that a
// patch or --disable-passes target names one thing.
absl::Status CheckPipelineNames(const Pipeline& pipeline, const Registries& registries = {});

// The entries a patch target names: the entry with that label, the group of that name, or
// every entry running the pass of that name (in that order of preference). Empty when none.
std::vector<PipelineEntry*> FindTargets(Pipeline& pipeline, const std::string& target);
// Every label, group name and pass name in the pipeline (for suggestions).
std::vector<std::string> TargetNames(const Pipeline& pipeline);
// Disables the entries named by each target (--disable-passes); an unknown name is an error
// with the closest name suggested.
absl::Status DisableTargets(Pipeline& pipeline, const std::vector<std::string>& targets);

// The pipeline as YAML that LoadPipelineString reads back to the same pipeline.
std::string PrintPipeline(const Pipeline& pipeline);
// One option value as YAML text ("true", "25", "0.5", "foo", "[a, b]").
std::string OptionValueToYaml(const OptionValue& value);
std::string OptionTypeName(OptionType type);
// The pass's options: its registry defaults with the entry's explicit values on top.
PassOptions ResolvedOptions(const PassInfo& info, const PipelineEntry& entry);

// Structural equality (locations ignored): what a --print-pipeline round trip must keep.
bool SamePipeline(const Pipeline& a, const Pipeline& b);

}  // namespace hloc
