#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "ir/hlo_parser.h"
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
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", name, "' for 'hloc ", command, "'"));
    }
    if (parsed.values.contains(spec->name)) {
      return absl::InvalidArgumentError(absl::StrCat("option '", spec->name, "' given more than once"));
    }
    if (!spec->takes_value) {
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
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    module = ParseHloModule(text, "<stdin>");
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
  return std::move(*module);
}

int64_t CountInstructions(const HloModule& module) {
  int64_t n = 0;
  for (const auto& c : module.computations()) n += static_cast<int64_t>(c->instructions().size());
  return n;
}

}  // namespace hloc::cli
