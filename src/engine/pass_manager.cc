#include "engine/pass_manager.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/compile_recorder.h"
#include "ir/verifier.h"
#include "support/file_io.h"

namespace hloc {
namespace {

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

namespace fs = std::filesystem;

// XLA's names for the ends of a pipeline in between-pass dump names.
constexpr char kPipelineStart[] = "pipeline-start";
constexpr char kPipelineEnd[] = "pipeline-end";

std::string SanitizeFileName(std::string name) {
  for (char& c : name) {
    if (c == '/' || c == '\\' || c == '[' || c == ']' || c == ' ') c = '_';
  }
  return name;
}

absl::Status WithContext(const absl::Status& s, const std::string& prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

class Runner {
 public:
  Runner(const Pipeline& pipeline, HloModule& module, PassContext& context, const PassManagerOptions& options,
         PassManagerReport* report)
      : pipeline_(pipeline), module_(module), context_(context), options_(options), report_(report) {
    verifier_.layout_sensitive = pipeline.verify.layout_sensitive;
    verifier_.allow_mixed_precision = pipeline.verify.allow_mixed_precision;
  }

  absl::StatusOr<bool> Run() {
    if (!options_.dump.pass_re.empty()) {
      try {
        pass_re_.emplace(options_.dump.pass_re, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid --dump-pass-re '", options_.dump.pass_re, "': ", e.what()));
      }
    }
    if (!options_.dump.dump_to.empty()) {
      if (absl::Status s = Write("before_optimizations"); !s.ok()) return s;
      context_.write_dump = [this](const std::string& suffix, const std::string& text) {
        return WriteText(suffix, text);
      };
    }
    if (pipeline_.verify.at_start) {
      if (absl::Status s = VerifyModule(module_, verifier_); !s.ok()) {
        return WithContext(s, "the input module does not verify (before any pass): ");
      }
    }
    if (CompileRecorder* r = context_.recorder; r != nullptr && r->snapshots.empty())
      r->snapshots.push_back(PrintModule(module_, options_.dump.print_options));
    absl::StatusOr<bool> changed = RunList(pipeline_.passes, pipeline_.name, pipeline_.name);
    if (!changed.ok()) return changed.status();
    if (!options_.dump.dump_to.empty()) {
      if (absl::Status s = Write("after_optimizations"); !s.ok()) return s;
    }
    return *changed;
  }

 private:
  const PassRegistry& registry() const {
    return options_.registry != nullptr ? *options_.registry : PassRegistry::Global();
  }
  std::ostream& notes() const { return options_.notes != nullptr ? *options_.notes : std::cerr; }

  // One pipeline (the top level or a group's body), as XLA's HloPassPipeline::RunPassesInternal.
  absl::StatusOr<bool> RunList(const std::vector<PipelineEntry>& all, const std::string& pipeline_name,
                               const std::string& path) {
    std::vector<const PipelineEntry*> entries;
    for (const PipelineEntry& e : all)
      if (e.enabled) entries.push_back(&e);
    if (absl::Status s =
            MaybeDumpBetween(pipeline_name, kPipelineStart, entries.empty() ? kPipelineEnd : entries.front()->name());
        !s.ok())
      return s;
    bool changed = false;
    for (size_t i = 0; i < entries.size(); ++i) {
      const PipelineEntry& e = *entries[i];
      const std::string entry_path = absl::StrCat(path, "/", e.name());
      absl::StatusOr<bool> c = e.is_group() ? RunGroup(e, entry_path) : RunPass(e, entry_path);
      if (!c.ok()) return c.status();
      // XLA dumps after a pass when it changed the module, or always when the regex is not ".*".
      if (pass_re_ && (*c || options_.dump.pass_re != ".*")) {
        const std::string next = i + 1 < entries.size() ? entries[i + 1]->name() : kPipelineEnd;
        if (absl::Status s = MaybeDumpBetween(pipeline_name, e.name(), next); !s.ok()) return s;
      }
      // The per-device program is worth a look on its own whenever dumps are on (a sharded
      // module's after_optimizations is already per device, but after many more passes).
      if (*c && !e.is_group() && e.pass == "spmd-partitioning" && !options_.dump.dump_to.empty())
        if (absl::Status s = Write("after_spmd-partitioning"); !s.ok()) return s;
      changed = changed || *c;
    }
    return changed;
  }

  // XLA's HloPassFix: re-run until an iteration changes nothing, at most max_iterations times.
  absl::StatusOr<bool> RunGroup(const PipelineEntry& group, const std::string& path) {
    if (!group.fixed_point) return RunList(group.passes, group.group, path);
    bool changed = false, changed_this_iteration = true;
    int64_t iterations = 0;
    while (changed_this_iteration && iterations < group.max_iterations) {
      absl::StatusOr<bool> c = RunList(group.passes, group.group, path);
      if (!c.ok()) return c.status();
      changed_this_iteration = *c;
      changed = changed || *c;
      ++iterations;
    }
    if (report_ != nullptr) report_->group_iterations[path] = iterations;
    if (changed_this_iteration) {
      notes() << "hloc: note: fixed-point group '" << group.group << "' (" << path
              << ") still changed the module after " << group.max_iterations << " iteration"
              << (group.max_iterations == 1 ? "" : "s") << " (its max_iterations); continuing with the next pass\n";
      if (report_ != nullptr) report_->fixed_point_limit_hit.push_back(path);
    }
    return changed;
  }

  absl::StatusOr<bool> RunPass(const PipelineEntry& entry, const std::string& path) {
    const std::string where = entry.location.file.empty() ? path : absl::StrCat(path, ", ", entry.location.ToString());
    auto it = instances_.find(&entry);
    if (it == instances_.end()) {
      const PassInfo* info = registry().Find(entry.pass);
      if (info == nullptr || !info->factory) {
        return absl::NotFoundError(absl::StrCat("pass '", entry.pass, "' (", where, ") is not registered"));
      }
      std::unique_ptr<HloPass> pass = info->factory(ResolvedOptions(*info, entry));
      if (pass == nullptr) {
        return absl::InternalError(absl::StrCat("pass '", entry.pass, "' (", where, ") could not be created"));
      }
      it = instances_.emplace(&entry, std::move(pass)).first;
    }

    // The entry's rule lists join the caller's for this pass only.
    const std::vector<std::string> saved_enabled = context_.enabled_rules;
    const std::vector<std::string> saved_disabled = context_.disabled_rules;
    context_.enabled_rules.insert(context_.enabled_rules.end(), entry.enabled_rules.begin(), entry.enabled_rules.end());
    context_.disabled_rules.insert(context_.disabled_rules.end(), entry.disabled_rules.begin(),
                                   entry.disabled_rules.end());
    CompileRecorder* recorder = context_.recorder;
    if (recorder != nullptr) {
      const int last = static_cast<int>(recorder->snapshots.size()) - 1;
      recorder->passes.push_back({path, entry.pass, false, 0, last, last});
    }
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = ThreadCpuSeconds();
    absl::StatusOr<bool> changed = it->second->Run(module_, context_);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu_seconds = ThreadCpuSeconds() - cpu_start;
    context_.enabled_rules = saved_enabled;
    context_.disabled_rules = saved_disabled;

    if (!changed.ok()) {
      return WithContext(changed.status(), absl::StrCat("pass '", entry.pass, "' (", where, ") failed: "));
    }
    if (report_ != nullptr) report_->runs.push_back({path, entry.pass, *changed, seconds});
    if (recorder != nullptr) {
      CompileRecorder::PassStep& step = recorder->passes.back();
      step.changed = *changed;
      step.seconds = seconds;
      if (*changed) {
        recorder->snapshots.push_back(PrintModule(module_, options_.dump.print_options));
        step.after = static_cast<int>(recorder->snapshots.size()) - 1;
      }
    }
    if (options_.log != nullptr) {
      // Wall time, then this thread's CPU time: on a shared machine only the latter measures
      // the pass (scripts/bench-compile reads both).
      *options_.log << absl::StrFormat("[pass] %s: %s (%.3fs, cpu %.3fs)\n", path, *changed ? "changed" : "no change",
                                       seconds, cpu_seconds);
    }
    if (*changed && pipeline_.verify.after_changed_pass) {
      if (absl::Status s = VerifyModule(module_, verifier_); !s.ok()) {
        return WithContext(s, absl::StrCat("verification failed after pass '", entry.pass, "' (", where, "): "));
      }
    }
    return *changed;
  }

  // xla/service/dump.cc's DumpHloModuleBetweenPassesIfEnabled: when either neighbour matches.
  absl::Status MaybeDumpBetween(const std::string& pipeline_name, const std::string& after, const std::string& before) {
    if (!pass_re_ || options_.dump.dump_to.empty()) return absl::OkStatus();
    if (!std::regex_search(after, *pass_re_) && !std::regex_search(before, *pass_re_)) return absl::OkStatus();
    const int64_t step = step_++;
    return Write(absl::StrFormat("%04d.%s.after_%s.before_%s", step, pipeline_name, after, before));
  }

  absl::Status Write(const std::string& suffix) {
    std::string text = PrintModule(module_, options_.dump.print_options);
    if (!text.empty() && text.back() != '\n') text.push_back('\n');
    return WriteText(suffix, text);
  }

  absl::Status WriteText(const std::string& suffix, const std::string& text) {
    const DumpOptions& d = options_.dump;
    std::error_code ec;
    fs::create_directories(d.dump_to, ec);
    if (std::error_code is_dir_ec; !fs::is_directory(d.dump_to, is_dir_ec)) {
      // Why: a file in the way ("File exists", "Not a directory"), no permission, a read-only
      // or full file system.
      const std::string why = ec ? ec.message() : is_dir_ec ? is_dir_ec.message() : "a file, not a folder, is there";
      return absl::InvalidArgumentError(absl::StrCat("cannot create dump folder '", d.dump_to, "': ", why));
    }
    const std::string path = (fs::path(d.dump_to) / DumpFileName(d.module_id, module_.name(), suffix)).string();
    if (absl::Status s = WriteFileAtomically(path, text); !s.ok())
      return absl::InvalidArgumentError(absl::StrCat("cannot write dump file: ", s.message()));
    if (report_ != nullptr) report_->dumped_files.push_back(path);
    return absl::OkStatus();
  }

  const Pipeline& pipeline_;
  HloModule& module_;
  PassContext& context_;
  const PassManagerOptions& options_;
  PassManagerReport* report_;
  VerifierOptions verifier_;
  std::optional<std::regex> pass_re_;
  int64_t step_ = 0;
  // One instance per entry, kept across fixed-point iterations (as XLA keeps its pass objects).
  std::map<const PipelineEntry*, std::unique_ptr<HloPass>> instances_;
};

}  // namespace

absl::Status CheckDumpRegex(const std::string& pass_re) {
  try {
    std::regex re(pass_re, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid regular expression '", pass_re, "': ", e.what()));
  }
  return absl::OkStatus();
}

std::string DumpFileName(int64_t module_id, const std::string& module_name, const std::string& suffix) {
  std::string name = absl::StrFormat("module_%04d", module_id);
  if (!module_name.empty()) absl::StrAppend(&name, ".", module_name);
  absl::StrAppend(&name, ".", suffix);
  // XLA drops the module name when the file name would pass the usual 255-byte limit.
  if (!module_name.empty() && name.size() > 255) return DumpFileName(module_id, "", suffix);
  return SanitizeFileName(absl::StrCat(name, ".txt"));
}

absl::StatusOr<bool> RunPipeline(const Pipeline& pipeline, HloModule& module, PassContext& context,
                                 const PassManagerOptions& options, PassManagerReport* report) {
  Runner runner(pipeline, module, context, options, report);
  absl::StatusOr<bool> changed = runner.Run();
  context.write_dump = nullptr;  // it refers to the runner
  return changed;
}

}  // namespace hloc
