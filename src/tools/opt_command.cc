// hloc opt FILE: run a pass pipeline (a YAML manifest, a hardware profile's patched pipeline,
// or a --passes list) on an HLO module and print the optimized module.
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/html_report.h"
#include "engine/pass_manager.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "passes/fusion/kernel_report.h"
#include "passes/fusion/priority_fusion.h"
#include "ir/hlo_printer.h"
#include "support/file_io.h"
#include "tools/cli.h"

namespace hloc::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kHelp[] = R"HELP(Usage: hloc opt [options] FILE

Runs a pass pipeline on the HLO module in FILE ('-' for standard input) and prints the
optimized module in XLA's text format.

Choosing what runs:
  --pipeline P        a pipeline manifest: a path, or a name looked up as P.yaml in the
                      pipelines folder (pipelines/gpu.yaml, pipelines/cpu.yaml)
  --profile C         a hardware profile: a path, or a name looked up as C.yaml in the
                      configs folder (h200, h100, a100, cpu). The profile names its pipeline
                      and patches it, so --profile alone is enough; with --pipeline its
                      patches apply to that pipeline instead. Its hardware facts are what
                      rules with requirements (HasTensorCores, ...) check.
  --passes a,b        run just these registered passes, in this order, with default options
                      (no manifest; a --profile then only contributes its hardware facts)
  --disable-passes a,b
                      disable these passes, groups or labels of the pipeline
  --tuning K=V,...    with --profile: set tuning numbers of the profile (the keys of its
                      tuning: section, same units and ranges; --print-profile shows them)
  Without --pipeline, --profile or --passes, the GPU pipeline (pipelines/gpu.yaml) runs with
  no hardware profile: hloc follows XLA:GPU's pipeline, and rules that need a capability
  stay off until a profile supplies it.

Looking at the pipeline (FILE not needed):
  --print-pipeline    print the merged pipeline (manifest + profile patches + disables) as
                      YAML that --pipeline reads back to the same pipeline, and exit
  --print-profile     with --profile: print the profile's facts, launch-check limits and every
                      tuning number (engine/tuning.h: its value, default, what it decides and
                      the measurement behind it), and exit
  --list-passes       list every registered pass with its options and exit

While running:
  --dump-to DIR       write the module before and after the pipeline to DIR, named as XLA's
                      --xla_dump_to names them (module_0000.NAME.before_optimizations.txt,
                      module_0000.NAME.after_optimizations.txt)
  --dump-pass-re RE   also dump between passes whose name matches the regular expression
                      RE, as XLA's --xla_dump_hlo_pass_re does
                      (module_0000.NAME.0001.PIPELINE.after_PASS.before_NEXT.txt)
  --dump-html         with --dump-to: also module_0000.NAME.html, a self-contained page of the
                      passes (diffs, times), rule firings, fusion decisions and the fusion graph
  --trace-rules       print every rewrite-rule firing (rule, file:line, before/after) to stderr,
                      and every fusion priority-fusion makes or refuses (the veto with its
                      file:line, or the cost model's numbers)
  --trace-rules=all   also every candidate rewrite rule that did not fire on an instruction,
                      with the first condition of its pattern that failed
  --explain-fusion A,B
                      after the pipeline, print (instead of the module) whether producer A was
                      or would be fused into consumer B: the Fusible record or veto of
                      rules/fusion/*.td that refuses it, with its file:line, or the cost
                      model's numbers, and what multi-output fusion would do; for two kernels
                      that are no producer and consumer, sibling multi-output and horizontal
                      fusion. A and B are the input module's names (followed through the
                      passes' renames by their place in the text) or the optimized module's.
                      Exit 1 when a name is in neither or its instruction is gone. (The
                      module still goes to -o OUT when given.)
  --kernel-report F   also write, as JSON to F, the kernels and library calls the optimized
                      module would launch and the bytes the fusion cost model expects
                      (scripts/bench-kernels tabulates it against XLA)
  -v, --verbose       print one line per pass run (changed or not, time) to stderr
  -o, --output OUT    write the optimized module to OUT instead of standard output
  --pipeline-dir DIR  where pipeline names are looked up first (then $HLOC_PIPELINE_DIR, the
                      profile's ../pipelines, ../pipelines and ../share/hloc/pipelines beside
                      the hloc binary, ./pipelines, and the copies built into hloc)
  --config-dir DIR    where profile names are looked up first (then $HLOC_CONFIG_DIR,
                      ../configs and ../share/hloc/configs beside the hloc binary, ./configs,
                      and the copies built into hloc: <built-in>/configs)
  -h, --help          show this help

Errors in manifests and profiles are reported as FILE:LINE:COL: message. Exit status: 0 on
success, 1 when the module, a manifest or profile is bad or a pass or the verifier fails
(the message names the pass), 2 on a command-line error.
)HELP";

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(s, ',')) {
    std::string item(absl::StripAsciiWhitespace(part));
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The folder holding the hloc binary (its build folder), for finding configs/ and pipelines/
// beside the source tree it was built from.
void ListPasses(std::ostream& out) {
  const std::vector<const PassInfo*> passes = PassRegistry::Global().All();
  out << passes.size() << " registered passes:\n";
  for (const PassInfo* p : passes) {
    out << "  " << p->name << "\n      " << (p->description.empty() ? "(no description)" : p->description) << "\n";
    for (const PassOptionSpec& o : p->options) {
      out << "      option " << o.name << ": " << OptionTypeName(o.type) << " = " << OptionValueToYaml(o.default_value);
      if (!o.description.empty()) out << "  -- " << o.description;
      out << "\n";
    }
  }
}

int Fail(const std::string& message) {
  std::cerr << "hloc: error: " << message << "\n";
  return kExitFailure;
}

}  // namespace

int RunOpt(const std::vector<std::string>& args) {
  auto parsed = ParseArgs("opt", args,
                          {{"--pipeline", "", true},
                           {"--profile", "", true},
                           {"--passes", "", true},
                           {"--disable-passes", "", true},
                           {"--tuning", "", true},
                           {"--print-pipeline", "", false},
                           {"--print-profile", "", false},
                           {"--list-passes", "", false},
                           {"--dump-to", "", true},
                           {"--dump-pass-re", "", true},
                           {"--dump-html", "", false},
                           {"--trace-rules", "", false, /*value_optional=*/true},
                           {"--explain-fusion", "", true},
                           {"--kernel-report", "", true},
                           {"--verbose", "-v", false},
                           {"--output", "-o", true},
                           {"--pipeline-dir", "", true},
                           {"--config-dir", "", true}});
  if (!parsed.ok()) return UsageError("opt", std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (parsed->Has("--list-passes")) {
    if (!parsed->positional.empty() || parsed->values.size() > 1) {
      return UsageError("opt", "--list-passes takes no FILE or other options");
    }
    ListPasses(std::cout);
    return kExitOk;
  }
  const bool print_only = parsed->Has("--print-pipeline") || parsed->Has("--print-profile");
  if (parsed->Has("--print-profile") && !parsed->Has("--profile")) return UsageError("opt", "--print-profile needs --profile");
  if (!print_only && parsed->positional.size() != 1) {
    return UsageError("opt", parsed->positional.empty() ? "missing FILE" : "expected exactly one FILE");
  }
  if (print_only && parsed->positional.size() > 1) return UsageError("opt", "expected at most one FILE");
  if (parsed->Has("--passes") && parsed->Has("--pipeline")) {
    return UsageError("opt", "--passes and --pipeline cannot be combined (--passes replaces the manifest)");
  }
  if (parsed->Has("--dump-html") && !parsed->Has("--dump-to")) return UsageError("opt", "--dump-html needs --dump-to DIR");
  if (parsed->Has("--dump-pass-re") && !parsed->Has("--dump-to")) {
    return UsageError("opt", "--dump-pass-re needs --dump-to DIR");
  }
  if (auto re = parsed->Get("--dump-pass-re")) {
    if (absl::Status s = CheckDumpRegex(*re); !s.ok()) return UsageError("opt", std::string(s.message()));
  }

  // The profile first: it names the pipeline.
  std::optional<Profile> profile;
  if (auto name = parsed->Get("--profile")) {
    absl::StatusOr<std::string> path =
        FindProfileFile(*name, DataSearchDirs(parsed->Get("--config-dir"), "HLOC_CONFIG_DIR", "configs"));
    if (!path.ok()) return Fail(std::string(path.status().message()));
    absl::StatusOr<Profile> loaded = LoadProfileFile(*path);
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
    profile = std::move(*loaded);
  }
  if (auto list = parsed->Get("--tuning")) {
    if (!profile) return UsageError("opt", "--tuning sets a profile's tuning numbers; it needs a --profile");
    std::vector<std::string> items = SplitList(*list);
    if (items.empty()) return UsageError("opt", "--tuning needs at least one KEY=VALUE");
    if (absl::Status s = SetTuningValues(items, profile->hardware); !s.ok()) return UsageError("opt", std::string(s.message()));
  }

  Pipeline pipeline;
  std::string pipeline_file;
  if (auto list = parsed->Get("--passes")) {
    std::vector<std::string> names = SplitList(*list);
    if (names.empty()) return UsageError("opt", "--passes needs at least one pass name");
    absl::StatusOr<Pipeline> p = PipelineFromPassList(names);
    if (!p.ok()) return UsageError("opt", absl::StrCat(p.status().message(), " in --passes"));
    pipeline = std::move(*p);
  } else {
    std::string profile_relative;
    if (profile) profile_relative = (fs::path(profile->source).parent_path() / ".." / "pipelines").lexically_normal();
    std::vector<std::string> dirs =
        DataSearchDirs(parsed->Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines", profile_relative);
    absl::StatusOr<std::string> path;
    if (auto p = parsed->Get("--pipeline")) {
      path = FindPipelineFile(*p, dirs);
    } else if (profile) {
      // A path in the profile is relative to the profile file.
      path = FindProfilePipelineFile(*profile, dirs);
    } else {
      path = FindPipelineFile("gpu", dirs);
    }
    if (!path.ok()) return Fail(std::string(path.status().message()));
    absl::StatusOr<Pipeline> p = LoadPipelineFile(*path);
    if (!p.ok()) return Fail(std::string(p.status().message()));
    pipeline = std::move(*p);
    pipeline_file = *path;
    if (profile) {
      if (absl::Status s = ApplyPatches(*profile, pipeline); !s.ok()) return Fail(std::string(s.message()));
    }
  }
  if (auto list = parsed->Get("--disable-passes")) {
    std::vector<std::string> names = SplitList(*list);
    if (names.empty()) return UsageError("opt", "--disable-passes needs at least one name");
    if (absl::Status s = DisableTargets(pipeline, names); !s.ok()) {
      return UsageError("opt", absl::StrCat(s.message(), " (in --disable-passes)"));
    }
  }

  if (parsed->Has("--print-profile")) {
    std::cout << PrintProfile(*profile);
    std::cout.flush();
    return std::cout ? kExitOk : kExitFailure;
  }
  if (print_only) {
    std::cout << "# hloc opt --print-pipeline: " << (pipeline_file.empty() ? std::string("--passes") : pipeline_file);
    if (profile) std::cout << " patched by profile " << profile->source;
    if (parsed->Has("--disable-passes")) std::cout << ", --disable-passes " << *parsed->Get("--disable-passes");
    std::cout << "\n";
    if (profile) std::cout << "# " << DescribeHardware(profile->hardware) << "\n";
    std::cout << PrintPipeline(pipeline);
    std::cout.flush();
    return std::cout ? kExitOk : kExitFailure;
  }

  std::unique_ptr<HloModule> module = LoadModule(parsed->positional[0]);
  if (!module) return kExitFailure;
  // --explain-fusion names the input's instructions: find them now, before passes rename them.
  std::vector<InputInstruction> explain;
  if (auto pair = parsed->Get("--explain-fusion")) {
    std::vector<std::string> names = SplitList(*pair);
    if (names.size() != 2) return UsageError("opt", "--explain-fusion takes PRODUCER,CONSUMER");
    for (const std::string& n : names) explain.push_back(FindInputInstruction(*module, n));
  }

  PassContext context;
  if (profile) context.profile = &profile->hardware;
  context.trace_rules = parsed->Has("--trace-rules");
  const std::string trace_value = parsed->Get("--trace-rules").value_or("");
  if (!trace_value.empty() && trace_value != "all")
    return UsageError("opt", "--trace-rules takes no value, or =all (every candidate rule's refusal too), not '" +
                                 trace_value + "'");
  context.trace_refusals = trace_value == "all";
  context.trace_out = &std::cerr;
  CompileRecorder recorder;
  if (parsed->Has("--dump-html")) context.recorder = &recorder;
  PassManagerOptions options;
  options.notes = &std::cerr;
  if (parsed->Has("--verbose")) options.log = &std::cerr;
  if (auto dir = parsed->Get("--dump-to")) options.dump.dump_to = *dir;
  if (auto re = parsed->Get("--dump-pass-re")) options.dump.pass_re = *re;
  absl::StatusOr<bool> changed = RunPipeline(pipeline, *module, context, options);
  if (!changed.ok()) return Fail(absl::StrCat(DisplayName(parsed->positional[0]), ": ", changed.status().message()));
  if (context.recorder != nullptr) {
    if (absl::Status s = WriteHtmlReport(options.dump.dump_to, 0, *module, recorder); !s.ok())
      return Fail(std::string(s.message()));
  }

  std::string text = PrintModule(*module);
  if (!text.empty() && text.back() != '\n') text.push_back('\n');
  if (auto report_path = parsed->Get("--kernel-report")) {
    // Checked like every output (the stream was tested before it was flushed, so a failed write
    // went unnoticed).
    if (absl::Status s = WriteFileAtomically(*report_path, KernelReportJson(CountKernels(*module, context.profile)));
        !s.ok())
      return Fail(std::string(s.message()));
  }
  if (explain.size() == 2) {
    FusionExplanation e = ExplainFusion(*module, explain[0], explain[1], context);
    if (!e.found) {
      std::cerr << "hloc: error: " << e.text;
      return kExitFailure;
    }
    std::cout << e.text;
    if (auto out_path = parsed->Get("--output"); out_path && *out_path != "-") {
      if (absl::Status s = WriteFileAtomically(*out_path, text); !s.ok()) return Fail(std::string(s.message()));
    }
    std::cout.flush();
    return std::cout ? kExitOk : kExitFailure;
  }
  if (auto out_path = parsed->Get("--output"); out_path && *out_path != "-") {
    if (absl::Status s = WriteFileAtomically(*out_path, text); !s.ok()) return Fail(std::string(s.message()));
    return kExitOk;
  }
  std::cout << text;
  std::cout.flush();
  return std::cout ? kExitOk : kExitFailure;
}

}  // namespace hloc::cli
