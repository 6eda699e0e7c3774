// The stages every backend's compiler runs before it emits code: the HLO pipeline (or, without
// one, the copy-insertion the in-place kernels need), a schedule when the pipeline made none, and
// buffer assignment; plus the per-stage timer and error prefix `hloc compile -v` shows.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "buffers/buffer_assignment.h"
#include "engine/compile_recorder.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "ir/module.h"
#include "runtime/executable/executable.h"

namespace hloc::codegen {

// Prints "compile: STAGE  SECONDS  DETAIL" to `log` (when not null) for each finished stage.
class StageTimer {
 public:
  explicit StageTimer(std::ostream* log) : log_(log), start_(std::chrono::steady_clock::now()) {}
  void Done(const std::string& stage, const std::string& detail = "");

 private:
  std::ostream* log_;
  std::chrono::steady_clock::time_point start_;
};

// `s` with "STAGE: " before its message (OK stays OK).
absl::Status WithStage(const absl::Status& s, const std::string& stage);

// Creates `dump_to` when set, runs `pipeline` (or copy-insertion alone when there is none),
// schedules an unscheduled module and assigns buffers with `alignment`.
absl::StatusOr<std::unique_ptr<BufferAssignment>> RunHloStagesAndAssignBuffers(
    HloModule& module, const std::optional<Pipeline>& pipeline, const std::optional<Profile>& profile,
    const std::string& dump_to, std::ostream* log, int64_t alignment, StageTimer& timer,
    CompileRecorder* recorder = nullptr);

// Finds the profile `name_or_path` in `config_dirs`, checks it is for `kind` hardware ("cpu",
// "gpu"; `compiler` names the caller in the error), finds the pipeline it names (first beside
// it, ../pipelines, then `pipeline_dirs`) and applies its patches. `preloaded`: the profile
// the caller has already read (so a compile reads its profile once); then `name_or_path` and
// `config_dirs` are not used.
absl::Status LoadProfileAndPipeline(const std::string& name_or_path, const std::string& kind,
                                    const std::string& compiler, const std::vector<std::string>& config_dirs,
                                    const std::vector<std::string>& pipeline_dirs, std::optional<Profile>& profile,
                                    std::optional<Pipeline>& pipeline, const Profile* preloaded = nullptr);

// Writes the dumps every backend makes into `dump_to` (XLA's names, module_0000.NAME.SUFFIX):
// after_optimizations, ...-buffer-assignment and thunk_sequence from `exe`, then `extra`
// (suffix with its extension, text), e.g. {"ll", ir}. Nothing when `dump_to` is empty. With
// `recorder` (--dump-html), also the browser view, module_0000.NAME.html (html_report.h).
absl::Status WriteCompileDumps(const std::string& dump_to, const HloModule& module, const runtime::Executable& exe,
                               const std::string& thunk_text,
                               const std::vector<std::pair<std::string, const std::string*>>& extra,
                               const CompileRecorder* recorder = nullptr,
                               const BufferAssignment* assignment = nullptr);

}  // namespace hloc::codegen
