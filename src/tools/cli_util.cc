#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <sstream>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/builtin_data.h"
#include "engine/yaml_util.h"
#include "eval/compare.h"
#include "io/npy.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "support/file_io.h"
#include "support/host_memory.h"
#include "tools/cli.h"

namespace hloc::cli {

absl::StatusOr<ParsedArgs> ParseArgs(const std::string& command, const std::vector<std::string>& args,
                                     const std::vector<OptionSpec>& specs) {
  ParsedArgs parsed;
  auto find = [&](const std::string& name) -> const OptionSpec* {
    for (const OptionSpec& s : specs) {
      if (s.name == name || (!s.short_name.empty() && s.short_name == name)) return &s;
    }
    return nullptr;
  };
  // --help wins over everything else on the line, even over a bad option.
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      return parsed;
    }
  }
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_positional || arg == "-" || arg.empty() || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    const OptionSpec* spec = find(name);
    if (spec == nullptr) {
      std::vector<std::string> names;
      for (const OptionSpec& s : specs) names.push_back(s.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", name, "' for 'hloc ", command, "'", yaml::DidYouMean(name, names)));
    }
    if (parsed.values.contains(spec->name)) {
      return absl::InvalidArgumentError(absl::StrCat("option '", spec->name, "' given more than once"));
    }
    if (!spec->takes_value) {
      if (inline_value && spec->value_optional && !inline_value->empty()) {
        parsed.values[spec->name] = *inline_value;
        continue;
      }
      if (inline_value) {
        return absl::InvalidArgumentError(absl::StrCat("option '", spec->name, "' takes no value"));
      }
      parsed.values[spec->name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("option '", spec->name, "' needs a value"));
      }
      inline_value = args[++i];
    }
    if (inline_value->empty()) {
      return absl::InvalidArgumentError(absl::StrCat("option '", spec->name, "' needs a non-empty value"));
    }
    parsed.values[spec->name] = *inline_value;
  }
  return parsed;
}

int UsageError(const std::string& command, const std::string& message) {
  std::cerr << "hloc: error: " << message << "\n"
            << "Run 'hloc " << (command.empty() ? "" : command + " ") << "--help' for usage.\n";
  return kExitUsage;
}

std::unique_ptr<HloModule> LoadModule(const std::string& path) {
  absl::StatusOr<std::unique_ptr<HloModule>> module;
  if (path == "-") {
    absl::StatusOr<std::string> text = ReadWholeFile(path);
    if (!text.ok()) {
      std::cerr << "hloc: error: " << text.status().message() << "\n";
      return nullptr;
    }
    module = ParseHloModule(*text, "<stdin>");
  } else {
    // Say plainly when the file is missing, before the parser sees it.
    std::ifstream probe(path, std::ios::binary);
    if (!probe) {
      std::cerr << "hloc: error: cannot open '" << path << "': " << std::strerror(errno) << "\n";
      return nullptr;
    }
    probe.close();
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::cerr << "hloc: error: '" << path << "' is a directory, not an HLO file\n";
      return nullptr;
    }
    module = ParseHloModuleFile(path);
  }
  if (!module.ok()) {
    // The parser's message already reads FILE:LINE:COL: message.
    std::cerr << module.status().message() << "\n";
    return nullptr;
  }
  WarnElidedConstants(**module, DisplayName(path));
  return std::move(*module);
}

void WarnElidedConstants(const HloModule& module, const std::string& display_path) {
  if (module.elided_constants() == 0) return;
  std::cerr << "hloc: warning: " << display_path << ": " << module.elided_constants()
            << " constant(s) are elided as {...} and read as zeros, so what this module computes is not the "
               "program's; dump it with XLA_FLAGS=--xla_dump_large_constants\n";
}

// ---- arrays in and out, shared by eval and run ----------------------------------------------

namespace {

// "arg0", "out12": the prefix followed by a decimal index.
bool IsIndexedName(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  return true;
}

// Picks the arrays for `count` slots: by name PREFIX0..PREFIX{count-1} when any array is
// named that way, else in file order. Errors say which array is missing or extra.
}  // namespace

absl::StatusOr<std::vector<const NpyArray*>> MatchArrays(const std::vector<NpyArray>& arrays, size_t count,
                                                         const std::string& prefix, const std::string& file,
                                                         const std::string& what) {
  std::vector<std::string> names;
  for (const NpyArray& a : arrays) names.push_back(a.name);
  if (arrays.size() != count) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": has ", arrays.size(), " arrays (",
                                                   absl::StrJoin(names, ", "), ") but the module has ", count,
                                                   " ", what));
  }
  bool by_name = false;
  for (const NpyArray& a : arrays) by_name |= IsIndexedName(a.name, prefix);
  std::vector<const NpyArray*> out;
  for (size_t i = 0; i < count; ++i) {
    if (!by_name) {
      out.push_back(&arrays[i]);
      continue;
    }
    std::string want = absl::StrCat(prefix, i);
    const NpyArray* found = nullptr;
    for (const NpyArray& a : arrays) {
      if (a.name == want) found = &a;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": no array named '", want, "' (it has ", absl::StrJoin(names, ", "), ")"));
    }
    out.push_back(found);
  }
  return out;
}

absl::StatusOr<std::vector<NpyArray>> ReadArrays(const std::string& path) {
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    auto one = ReadNpy(path);
    if (!one.ok()) return one.status();
    std::vector<NpyArray> v;
    v.push_back(std::move(*one));
    return v;
  }
  return ReadNpz(path);
}

namespace {

bool ModuleHasDotOrConvolution(const HloModule& module) {
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() == HloOpcode::kDot || inst->opcode() == HloOpcode::kConvolution) return true;
    }
  }
  return false;
}

std::string FormatError(double e) {
  if (std::isnan(e)) return "nan";
  if (std::isinf(e)) return "inf";
  return absl::StrFormat("%.3e", e);
}


}  // namespace

namespace {

constexpr uint64_t kMaxBytes = std::numeric_limits<uint64_t>::max();

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > kMaxBytes - b ? kMaxBytes : a + b; }

// Bytes of every array in `shape`, saturating at UINT64_MAX (shapes from user input).
uint64_t ShapeBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    uint64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) total = SaturatingAdd(total, ShapeBytes(s));
    return total;
  }
  if (!shape.IsArray()) return 0;
  absl::StatusOr<int64_t> n = shape.ElementCount();
  const uint64_t width = static_cast<uint64_t>(std::max(1, ByteWidth(shape.element_type())));
  if (!n.ok() || static_cast<uint64_t>(*n) > kMaxBytes / width) return kMaxBytes;
  return static_cast<uint64_t>(*n) * width;
}

}  // namespace

absl::Status CheckParametersFit(const std::vector<Shape>& params, const std::string& where) {
  const uint64_t available = AvailableHostMemoryBytes();
  uint64_t before = 0;  // bytes of the parameters before this one
  for (size_t i = 0; i < params.size(); ++i) {
    const uint64_t bytes = ShapeBytes(params[i]);
    if (bytes <= available - std::min(before, available)) {
      before += bytes;
      continue;
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        where, ": cannot allocate ", bytes, " bytes for parameter ", i, " (", params[i].ToString(false), "): ",
        before > 0 ? absl::StrCat("with the ", before, " bytes of the parameters before it, ") : "",
        "the inputs need more than the ", available,
        " bytes this process may still allocate (physical memory and swap, ulimit -v / -d)"));
  }
  return absl::OkStatus();
}

absl::Status WriteOutputsNpz(const std::string& path, const std::vector<const Literal*>& outputs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i) names.push_back(absl::StrCat("out", i));
  std::vector<std::pair<std::string, const Literal*>> list;
  for (size_t i = 0; i < outputs.size(); ++i) list.emplace_back(names[i], outputs[i]);
  return WriteNpz(path, list);
}

void PrintOutputs(const std::vector<const Literal*>& outputs) {
  // Small outputs are shown in full, larger ones by type and shape only.
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::cout << "out" << i << " " << outputs[i]->shape().ToString(false);
    if (outputs[i]->element_count() <= 16) std::cout << " " << PrintLiteral(*outputs[i]);
    std::cout << "\n";
  }
}

int CheckOutputs(const std::vector<const Literal*>& outputs, const std::string& expect_path, const HloModule* module,
                 std::optional<double> tol, std::optional<double> atol, const std::string& display_path) {
  auto expected = ReadArrays(expect_path);
  if (!expected.ok()) {
    std::cerr << "hloc: error: " << expected.status().message() << "\n";
    return kExitFailure;
  }
  auto matched = MatchArrays(*expected, outputs.size(), "out", expect_path, "outputs");
  if (!matched.ok()) {
    std::cerr << "hloc: error: " << matched.status().message() << "\n";
    return kExitFailure;
  }
  // Which outputs a dot or convolution may feed (looser f32 threshold); fall back to "any in
  // the module" if the per-output analysis does not line up with the leaves, and to "all" when
  // there is no module to look at.
  std::vector<bool> fed;
  if (module != nullptr) fed = OutputsFedByDotOrConvolution(*module);
  if (fed.size() != outputs.size()) {
    fed.assign(outputs.size(), module == nullptr || ModuleHasDotOrConvolution(*module));
  }
  int failures = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Literal& out = *outputs[i];
    std::string line = absl::StrCat("out", i, " ", out.shape().ToString(false));
    auto ref = ReinterpretAs(*(*matched)[i], out.shape());
    if (!ref.ok()) {
      ++failures;
      std::cout << line << " MISMATCH: expected " << ref.status().message() << "\n";
      continue;
    }
    double threshold = tol ? *tol : DefaultTolerance(out.element_type(), fed[i]);
    double floor = atol ? *atol : DefaultAbsoluteFloor(out.element_type(), fed[i]);
    CompareResult cmp = CompareLiterals(out, *ref, threshold, floor);
    absl::StrAppend(&line, " error ", FormatError(cmp.error), " tol ", absl::StrFormat("%.1e", cmp.threshold));
    if (cmp.ok && cmp.by_floor) {
      std::cout << line << absl::StrFormat(" ok (rms difference %.2e <= absolute floor %.1e)\n", cmp.rms_diff, floor);
    } else if (cmp.ok) {
      std::cout << line << " ok\n";
    } else {
      ++failures;
      std::cout << line << " MISMATCH" << (cmp.message.empty() ? "" : ": " + cmp.message) << "\n";
    }
  }
  if (failures == 0) {
    std::cout << display_path << ": " << outputs.size() << " of " << outputs.size() << " outputs match\n";
    return kExitOk;
  }
  std::cout << display_path << ": " << failures << " of " << outputs.size() << " outputs do not match\n";
  return kExitFailure;
}

std::vector<std::string> DataSearchDirs(const std::optional<std::string>& flag, const char* env_var,
                                        const char* folder, const std::string& extra) {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  if (flag) dirs.push_back(*flag);
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') dirs.push_back(env);
  if (!extra.empty()) dirs.push_back(extra);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back((exe.parent_path() / ".." / folder).lexically_normal().string());
    dirs.push_back((exe.parent_path() / ".." / "share" / "hloc" / folder).lexically_normal().string());
  }
  dirs.push_back(folder);
  // Last, the copies built into the binary (src/engine/builtin_data.h): a binary copied alone
  // still finds the default profiles and pipelines.
  dirs.push_back((fs::path(std::string(kBuiltinDir)) / folder).string());
  return dirs;
}

int64_t CountInstructions(const HloModule& module) {
  int64_t n = 0;
  for (const auto& c : module.computations()) n += static_cast<int64_t>(c->instructions().size());
  return n;
}

absl::Status ApplyDisablePasses(const ParsedArgs& args, std::optional<Pipeline>& pipeline) {
  auto list = args.Get("--disable-passes");
  if (!list) return absl::OkStatus();
  if (!pipeline) return absl::InvalidArgumentError("--disable-passes needs the passes (not --no-passes)");
  std::vector<std::string> names = absl::StrSplit(*list, ',', absl::SkipEmpty());
  if (names.empty()) return absl::InvalidArgumentError("--disable-passes needs at least one name");
  absl::Status s = DisableTargets(*pipeline, names);
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(s.message(), " (in --disable-passes)"));
  return absl::OkStatus();
}

absl::Status ApplyPipelineOptions(const ParsedArgs& args, std::optional<Profile>& profile,
                                  std::optional<Pipeline>& pipeline, bool* command_line_error) {
  namespace fs = std::filesystem;
  *command_line_error = true;
  if (auto name = args.Get("--pipeline")) {
    if (!pipeline) return absl::InvalidArgumentError("--pipeline cannot be combined with --no-passes");
    *command_line_error = false;  // a file that is missing or bad
    std::string profile_relative;
    if (profile) profile_relative = (fs::path(profile->source).parent_path() / ".." / "pipelines").lexically_normal();
    absl::StatusOr<std::string> path =
        FindPipelineFile(*name, DataSearchDirs(args.Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines", profile_relative));
    if (!path.ok()) return path.status();
    absl::StatusOr<Pipeline> p = LoadPipelineFile(*path);
    if (!p.ok()) return p.status();
    if (profile) {
      if (absl::Status s = ApplyPatches(*profile, *p); !s.ok()) return s;
    }
    pipeline = std::move(*p);
    *command_line_error = true;
  }
  if (absl::Status s = ApplyDisablePasses(args, pipeline); !s.ok()) return s;
  if (auto list = args.Get("--tuning")) {
    if (!profile) return absl::InvalidArgumentError("--tuning sets a profile's tuning numbers; it needs a --profile");
    std::vector<std::string> items = absl::StrSplit(*list, ',', absl::SkipEmpty());
    if (items.empty()) return absl::InvalidArgumentError("--tuning needs at least one KEY=VALUE");
    if (absl::Status s = SetTuningValues(items, profile->hardware); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Forwards whole lines to stderr: the compile stages' lines and the passes that took at least
// a second ("[pass] NAME: changed (1.234s, cpu ...)").
class CompileProgress::Filter : public std::streambuf {
 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    line_.push_back(static_cast<char>(c));
    if (c == '\n') Flush();
    return c;
  }

 public:
  ~Filter() override { Flush(); }
  void Flush() {
    if (line_.empty()) return;
    bool show = line_.rfind("compile:", 0) == 0;
    if (!show && line_.rfind("[pass] ", 0) == 0) {
      const size_t open = line_.rfind(" (");
      double seconds = 0;
      if (open != std::string::npos && std::sscanf(line_.c_str() + open, " (%lfs", &seconds) == 1) show = seconds >= 1.0;
    }
    if (show) {
      std::cerr << line_;
      std::cerr.flush();
    }
    line_.clear();
  }

 private:
  std::string line_;
};

CompileProgress::CompileProgress(bool verbose) {
  if (verbose) {
    log_ = &std::cerr;
    return;
  }
  const char* env = std::getenv("HLOC_PROGRESS");
  const bool on = env != nullptr && *env != '\0' ? std::string(env) != "0" : ::isatty(STDERR_FILENO) != 0;
  if (!on) return;
  filter_ = std::make_unique<Filter>();
  stream_ = std::make_unique<std::ostream>(filter_.get());
  log_ = stream_.get();
}

CompileProgress::~CompileProgress() {
  if (stream_) stream_->flush();
  if (filter_) filter_->Flush();
}

}  // namespace hloc::cli
