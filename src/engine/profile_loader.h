// Hardware profiles (configs/*.yaml): the facts of one target (HardwareProfile) and the patches
// it makes to the pipeline it names. The format is documented at the top of configs/h200.yaml;
// in short:
//
//   name: h200
//   kind: gpu                       # gpu | cpu
//   pipeline: gpu                   # pipelines/gpu.yaml (or a path relative to this file)
//   hardware:
//     sm_count: 132
//     memory_bandwidth: 4.8 TB/s    # numbers take units: B, KB, MiB, GB/s, TFLOP/s, ...
//     compute_capability: "9.0"
//     ...
//   patches:                        # applied in order to the named pipeline
//     - set: algsimp                # a label, group name or pass name
//       options: {max_iterations: 50}
//     - disable: cse
//     - insert_after: simplification
//       pass: dce
//
// Errors are located (FILE:LINE:COL), in the profile when a patch does not fit the pipeline.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/pipeline.h"
#include "engine/profile.h"
#include "engine/yaml_util.h"

namespace hloc {

struct PipelinePatch {
  enum class Kind { kDisable, kEnable, kSet, kInsertBefore, kInsertAfter };
  Kind kind = Kind::kDisable;
  std::string target;       // a label, group name or pass name
  YAML::Node target_node;   // for located errors
  SourceLocation location;  // the patch itself

  // kSet: what to change on every targeted entry.
  bool has_options = false;
  YAML::Node options;            // pass targets: checked against each pass's options when applied
  bool has_fixed_point = false;  // group targets
  bool fixed_point = false;
  int64_t max_iterations = PipelineEntry::kDefaultMaxIterations;
  YAML::Node fixed_point_node;
  bool has_rules = false;
  std::vector<std::string> enable_rules, disable_rules;  // appended to the pass's lists
  YAML::Node rules_node;

  // kInsertBefore / kInsertAfter: the new entry (a pass or a group), already checked.
  PipelineEntry entry;
};

struct Profile {
  HardwareProfile hardware;  // name, kind, pipeline and the facts
  std::string description;
  std::string source;        // the profile file
  YAML::Node pipeline_node;  // where `pipeline:` was written
  std::vector<PipelinePatch> patches;
};

// The profile as YAML (name, kind, pipeline, hardware facts, launch_check, every tuning number
// with its default and what it decides as comments), for `hloc opt --print-profile`.
std::string PrintProfile(const Profile& profile);

absl::StatusOr<Profile> LoadProfileFile(const std::string& path, const Registries& registries = {});
absl::StatusOr<Profile> LoadProfileString(const std::string& text, const std::string& name,
                                          const Registries& registries = {});

// `--tuning KEY=VALUE,...` on the command line: sets these tuning numbers (engine/tuning.h) as the
// profile's `tuning:` section would (same names, units and ranges; errors name "--tuning").
absl::Status SetTuningValues(const std::vector<std::string>& assignments, HardwareProfile& hardware);

// Applies the profile's patches, in order, to `pipeline` (the merged pipeline).
absl::Status ApplyPatches(const Profile& profile, Pipeline& pipeline, const Registries& registries = {});

// Capabilities derived from the facts (HasTensorCores, HasBf16, HasFp8, HasTma, ...); entries
// already in `capabilities` (the profile's explicit map) are kept as written.
void DeriveCapabilities(HardwareProfile& hardware);

// Every capability name a profile may set: the Requirement records' names (hloc::Requirement,
// rules/base/Requirements.td), each with the first generated record requiring it (a rule's,
// layout row's, Fusible record's or veto's Requires: "rules/layout/GpuLayoutAssignment.td:40
// (GpuConvHopperNhwc)"; empty for names no record requires). A profile's `capabilities:` key
// outside this set is an error at its FILE:LINE:COL.
std::map<std::string, std::string> KnownCapabilities();

// A GPU as the driver describes it, for choosing its profile.
struct GpuDeviceFacts {
  int compute_capability_major = 0, compute_capability_minor = 0;
  int64_t sm_count = 0;
  int64_t memory_size = 0;  // bytes
};

// The GPU profile of `config_dirs` that describes `device`, as XLA compiles for the device it
// runs on: among the GPU profiles of its compute capability, the one nearest in memory size, then
// in SM count (an H100 80 GB picks h100, an H200 h200). nullopt when none has its compute
// capability; profiles that fail to load are skipped.
std::optional<std::string> GpuProfileForDevice(const GpuDeviceFacts& device, const std::vector<std::string>& config_dirs);

// `--profile h200`: a path to a file, or a name looked up as NAME.yaml in `config_dirs` (in
// order). Errors list where it looked and the profiles that exist there.
absl::StatusOr<std::string> FindProfileFile(const std::string& name_or_path,
                                            const std::vector<std::string>& config_dirs);
// A pipeline by path or by name (NAME.yaml in `pipeline_dirs`, in order). A relative path is
// taken relative to `relative_to`'s folder when given (a profile's `pipeline:`), else to the
// working directory.
absl::StatusOr<std::string> FindPipelineFile(const std::string& name_or_path,
                                             const std::vector<std::string>& pipeline_dirs,
                                             const std::string& relative_to = "");

// The pipeline a profile's `pipeline:` names (FindPipelineFile relative to the profile file);
// an error is located at the profile's `pipeline:` (FILE:LINE:COL). What hloc opt, compile and
// run all use, so they report the same place.
absl::StatusOr<std::string> FindProfilePipelineFile(const Profile& profile,
                                                    const std::vector<std::string>& pipeline_dirs);

// One line per fact, for --print-pipeline's header and messages.
std::string DescribeHardware(const HardwareProfile& hardware);

}  // namespace hloc
