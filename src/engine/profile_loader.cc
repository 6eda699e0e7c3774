#include "engine/profile_loader.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/builtin_data.h"
#include "engine/rewrite.h"
#include "engine/rule_tables.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

struct Unit {
  const char* name;
  double scale;
};

// Units a fact may carry; a bare number is in the base unit (bytes, bytes/s, FLOP/s).
const std::vector<Unit>& ByteUnits() {
  static const std::vector<Unit> units = {{"B", 1},           {"KB", 1e3},           {"MB", 1e6},
                                          {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
                                          {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  return units;
}
const std::vector<Unit>& BandwidthUnits() {
  static const std::vector<Unit> units = {{"B/s", 1},           {"KB/s", 1e3},           {"MB/s", 1e6},
                                          {"GB/s", 1e9},        {"TB/s", 1e12},          {"KiB/s", 1024.0},
                                          {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0}};
  return units;
}
const std::vector<Unit>& TimeUnits() {
  static const std::vector<Unit> units = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  return units;
}
const std::vector<Unit>& FlopUnits() {
  static const std::vector<Unit> units = {
      {"FLOP/s", 1}, {"MFLOP/s", 1e6}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}};
  return units;
}

// "4.8 TB/s", "60 MiB", "132", "67e12": a non-negative number with an optional unit.
absl::StatusOr<double> Quantity(const yaml::Reader& reader, const YAML::Node& node, const std::string& what,
                                const std::vector<Unit>& units) {
  absl::StatusOr<std::string> text = reader.String(node, what);
  if (!text.ok()) return text.status();
  std::string number = *text, unit;
  if (size_t space = text->find(' '); space != std::string::npos) {
    number = text->substr(0, space);
    unit = text->substr(text->find_first_not_of(' ', space) == std::string::npos ? text->size()
                                                                                 : text->find_first_not_of(' ', space));
  }
  std::vector<std::string> names;
  for (const Unit& u : units) names.push_back(u.name);
  double v = 0;
  if (!yaml::ParseFloat(number, &v) || v < 0) {
    return reader.Error(node, absl::StrCat("expected a non-negative number for ", what, " (optionally with a unit: ",
                                           absl::StrJoin(names, ", "), "), got '", *text, "'"));
  }
  if (unit.empty()) return v;
  for (const Unit& u : units)
    if (unit == u.name) return v * u.scale;
  return reader.Error(node, absl::StrCat("unknown unit '", unit, "' for ", what, yaml::DidYouMean(unit, names),
                                         " (units: ", absl::StrJoin(names, ", "), ")"));
}

// A hardware fact the cost models divide by: 0 is no hardware's value (a key left out means
// unknown; the models then use their defaults), so it is refused where it is written.
absl::StatusOr<double> PositiveQuantity(const yaml::Reader& reader, const YAML::Node& node, const std::string& what,
                                        const std::vector<Unit>& units) {
  absl::StatusOr<double> v = Quantity(reader, node, what, units);
  if (v.ok() && *v == 0) return reader.Error(node, absl::StrCat(what, " must be positive (leave the key out when unknown)"));
  return v;
}

absl::StatusOr<int64_t> ByteCount(const yaml::Reader& reader, const YAML::Node& node, const std::string& what) {
  absl::StatusOr<double> v = Quantity(reader, node, what, ByteUnits());
  if (!v.ok()) return v.status();
  if (*v >= 9.2e18 || std::fabs(*v - std::round(*v)) > 1e-6 * std::max(1.0, *v)) {
    return reader.Error(node, absl::StrCat(what, " must be a whole number of bytes below 2^63"));
  }
  return static_cast<int64_t>(std::llround(*v));
}

absl::Status ParseComputeCapability(const yaml::Reader& reader, const YAML::Node& node, HardwareProfile* hw) {
  absl::StatusOr<std::string> text = reader.String(node, "compute_capability");
  if (!text.ok()) return text.status();
  int64_t major = -1, minor = -1;
  size_t dot = text->find('.');
  if (dot == std::string::npos || !yaml::ParseInt(text->substr(0, dot), &major) ||
      !yaml::ParseInt(text->substr(dot + 1), &minor) || major < 0 || minor < 0 || major > 99 || minor > 9 ||
      !std::isdigit(static_cast<unsigned char>((*text)[0]))) {
    return reader.Error(node, absl::StrCat("expected MAJOR.MINOR for compute_capability (\"9.0\"), got '", *text, "'"));
  }
  if (major == 0) return reader.Error(node, absl::StrCat("compute_capability ", *text, " is no GPU's (0 means unset)"));
  hw->compute_capability_major = static_cast<int>(major);
  hw->compute_capability_minor = static_cast<int>(minor);
  // Whether LLVM can compile for it is known only to the GPU compiler (codegen/gpu), which
  // reports a target it cannot build for at this place.
  hw->compute_capability_location = reader.Where(node.Mark());
  return absl::OkStatus();
}

absl::Status ParseHardware(const yaml::Reader& reader, const YAML::Node& node, HardwareProfile* hw) {
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, "'hardware'");
  if (!keys.ok()) return keys.status();
  if (absl::Status s = reader.CheckKeys(
          *keys,
          {"sm_count", "memory_bandwidth", "peak_flops_f32", "peak_flops_bf16", "shared_memory_per_block",
           "l2_cache_size", "compute_capability", "memory_size", "tensor_cores", "capabilities", "link_bandwidth",
           "link_latency"},
          "'hardware'");
      !s.ok())
    return s;
  for (const yaml::MapEntry& k : *keys) {
    const std::string what = absl::StrCat("hardware: ", k.key);
    if (k.key == "sm_count") {
      absl::StatusOr<int64_t> n = reader.Int(k.value, what);
      if (!n.ok()) return n.status();
      if (*n < 1 || *n > 1000000) return reader.Error(k.value, "sm_count must be between 1 and 1000000");
      hw->sm_count = *n;
    } else if (k.key == "memory_bandwidth") {
      absl::StatusOr<double> v = PositiveQuantity(reader, k.value, what, BandwidthUnits());
      if (!v.ok()) return v.status();
      hw->memory_bandwidth = *v;
    } else if (k.key == "link_bandwidth") {
      absl::StatusOr<double> v = Quantity(reader, k.value, what, BandwidthUnits());
      if (!v.ok()) return v.status();
      hw->link_bandwidth = *v;
    } else if (k.key == "link_latency") {
      absl::StatusOr<double> v = Quantity(reader, k.value, what, TimeUnits());
      if (!v.ok()) return v.status();
      if (*v > 1) return reader.Error(k.value, "link_latency above 1 s is not a link's latency");
      hw->link_latency = *v;
    } else if (k.key == "peak_flops_f32" || k.key == "peak_flops_bf16") {
      absl::StatusOr<double> v = PositiveQuantity(reader, k.value, what, FlopUnits());
      if (!v.ok()) return v.status();
      (k.key == "peak_flops_f32" ? hw->peak_flops_f32 : hw->peak_flops_bf16) = *v;
    } else if (k.key == "shared_memory_per_block" || k.key == "l2_cache_size" || k.key == "memory_size") {
      absl::StatusOr<int64_t> v = ByteCount(reader, k.value, what);
      if (!v.ok()) return v.status();
      if (*v == 0) return reader.Error(k.value, absl::StrCat(what, " must be positive (leave the key out when unknown)"));
      if (k.key == "shared_memory_per_block") hw->shared_memory_per_block = *v;
      if (k.key == "l2_cache_size") hw->l2_cache_size = *v;
      if (k.key == "memory_size") hw->memory_size = *v;
    } else if (k.key == "compute_capability") {
      if (absl::Status s = ParseComputeCapability(reader, k.value, hw); !s.ok()) return s;
    } else if (k.key == "tensor_cores") {
      absl::StatusOr<bool> b = reader.Bool(k.value, what);
      if (!b.ok()) return b.status();
      hw->has_tensor_cores = *b;
    } else if (k.key == "capabilities") {
      absl::StatusOr<std::vector<yaml::MapEntry>> caps = reader.Entries(k.value, "'capabilities'");
      if (!caps.ok()) return caps.status();
      const std::map<std::string, std::string> known = KnownCapabilities();
      for (const yaml::MapEntry& c : *caps) {
        bool ident = std::isalpha(static_cast<unsigned char>(c.key[0]));
        for (char ch : c.key) ident = ident && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
        if (!ident) {
          return reader.Error(c.key_node,
                              absl::StrCat("capability names are identifiers (HasTensorCores), got '", c.key, "'"));
        }
        if (known.count(c.key) == 0) {
          std::vector<std::string> names;
          for (const auto& [name, where] : known) names.push_back(name);
          return reader.Error(c.key_node, absl::StrCat("unknown capability '", c.key,
                                                       "': no Requirement record (rules/base/Requirements.td) "
                                                       "has that name",
                                                       yaml::DidYouMean(c.key, names)));
        }
        absl::StatusOr<bool> b = reader.Bool(c.value, absl::StrCat("capability '", c.key, "'"));
        if (!b.ok()) return b.status();
        hw->capabilities[c.key] = *b;
      }
    }
  }
  return absl::OkStatus();
}

const char* const kActions[] = {"disable", "enable", "set", "insert_before", "insert_after"};

absl::StatusOr<PipelinePatch> ParsePatch(const yaml::Reader& reader, const YAML::Node& node,
                                         const Registries& registries) {
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, "a patch");
  if (!keys.ok()) return keys.status();
  std::vector<std::string> actions(std::begin(kActions), std::end(kActions));
  const yaml::MapEntry* action = nullptr;
  for (const yaml::MapEntry& k : *keys) {
    if (std::find(actions.begin(), actions.end(), k.key) == actions.end()) continue;
    if (action != nullptr) {
      return reader.Error(k.key_node, absl::StrCat("a patch does one thing: '", action->key, "' and '", k.key,
                                                   "' cannot be combined (write two patches)"));
    }
    action = &k;
  }
  if (action == nullptr) {
    // Say what the first key might have meant.
    if (!keys->empty()) {
      std::string hint = yaml::DidYouMean(keys->front().key, actions);
      if (!hint.empty()) {
        return reader.Error(keys->front().key_node,
                            absl::StrCat("unknown patch action '", keys->front().key, "'", hint));
      }
    }
    return reader.Error(node, absl::StrCat("a patch needs one of: ", absl::StrJoin(actions, ", ")));
  }
  PipelinePatch patch;
  patch.location.file = reader.file();
  if (!node.Mark().is_null()) {
    patch.location.line = node.Mark().line + 1;
    patch.location.column = node.Mark().column + 1;
  }
  absl::StatusOr<std::string> target = reader.Name(action->value, absl::StrCat("the target of '", action->key, "'"));
  if (!target.ok()) return target.status();
  patch.target = *target;
  patch.target_node = action->value;
  const std::string what = absl::StrCat("a '", action->key, "' patch");

  if (action->key == "disable" || action->key == "enable") {
    patch.kind = action->key == "disable" ? PipelinePatch::Kind::kDisable : PipelinePatch::Kind::kEnable;
    if (absl::Status s = reader.CheckKeys(*keys, {action->key}, what); !s.ok()) return s;
    return patch;
  }
  if (action->key == "set") {
    patch.kind = PipelinePatch::Kind::kSet;
    if (absl::Status s = reader.CheckKeys(*keys, {"set", "options", "fixed_point", "rules"}, what); !s.ok()) return s;
    if (keys->size() == 1) {
      return reader.Error(action->key_node, "a 'set' patch needs 'options:', 'fixed_point:' or 'rules:'");
    }
    for (const yaml::MapEntry& k : *keys) {
      if (k.key == "options") {
        patch.has_options = true;
        patch.options = k.value;
        // The types are checked against the target's pass when the patch is applied; the shape now.
        if (absl::StatusOr<std::vector<yaml::MapEntry>> o = reader.Entries(k.value, "'options'"); !o.ok()) {
          return o.status();
        }
      } else if (k.key == "fixed_point") {
        patch.has_fixed_point = true;
        patch.fixed_point_node = k.value;
        if (absl::Status s = ParseFixedPoint(reader, k.value, patch.target, &patch.fixed_point, &patch.max_iterations);
            !s.ok())
          return s;
      } else if (k.key == "rules") {
        patch.has_rules = true;
        patch.rules_node = k.value;
        absl::StatusOr<std::vector<yaml::MapEntry>> r = reader.Entries(k.value, "'rules'");
        if (!r.ok()) return r.status();
        if (absl::Status s = reader.CheckKeys(*r, {"enable", "disable"}, "'rules'"); !s.ok()) return s;
        for (const yaml::MapEntry& e : *r) {
          absl::StatusOr<std::vector<std::string>> names = reader.StringList(e.value, absl::StrCat("rules: ", e.key));
          if (!names.ok()) return names.status();
          (e.key == "enable" ? patch.enable_rules : patch.disable_rules) = *names;
        }
      }
    }
    return patch;
  }
  patch.kind = action->key == "insert_before" ? PipelinePatch::Kind::kInsertBefore : PipelinePatch::Kind::kInsertAfter;
  absl::StatusOr<PipelineEntry> entry = ParsePipelineEntry(reader, node, registries, 0, {action->key});
  if (!entry.ok()) return entry.status();
  patch.entry = std::move(*entry);
  return patch;
}

// The list holding `target` and its index there.
bool Locate(std::vector<PipelineEntry>& entries, const PipelineEntry* target, std::vector<PipelineEntry>** list,
            size_t* index) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (&entries[i] == target) {
      *list = &entries;
      *index = i;
      return true;
    }
    if (entries[i].is_group() && Locate(entries[i].passes, target, list, index)) return true;
  }
  return false;
}

// Labels and group names of `entries` (recursively) with where they were written.
void CollectNamed(const std::vector<PipelineEntry>& entries, std::vector<std::pair<std::string, SourceLocation>>* out) {
  for (const PipelineEntry& e : entries) {
    const std::string& name = e.is_group() ? e.group : e.label;
    if (!name.empty()) out->push_back({name, e.location});
    if (e.is_group()) CollectNamed(e.passes, out);
  }
}

void AppendUnique(std::vector<std::string>& to, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (std::find(to.begin(), to.end(), n) == to.end()) to.push_back(n);
}

absl::Status ApplyPatch(const yaml::Reader& reader, const PipelinePatch& patch, Pipeline& pipeline,
                        const Registries& registries) {
  std::vector<PipelineEntry*> targets = FindTargets(pipeline, patch.target);
  if (targets.empty()) {
    return reader.Error(patch.target_node,
                        absl::StrCat("patch target '", patch.target, "' names no pass, group or label in pipeline '",
                                     pipeline.name, "'", yaml::DidYouMean(patch.target, TargetNames(pipeline))));
  }
  switch (patch.kind) {
    case PipelinePatch::Kind::kDisable:
    case PipelinePatch::Kind::kEnable:
      for (PipelineEntry* e : targets) e->enabled = patch.kind == PipelinePatch::Kind::kEnable;
      return absl::OkStatus();
    case PipelinePatch::Kind::kSet:
      for (PipelineEntry* e : targets) {
        if (e->is_group()) {
          if (patch.has_options || patch.has_rules) {
            return reader.Error(patch.target_node,
                                absl::StrCat("'", patch.target, "' is a group: it has no options or ",
                                             "rules of its own (set fixed_point, or target a pass)"));
          }
          e->fixed_point = patch.fixed_point;
          e->max_iterations = patch.max_iterations;
          continue;
        }
        if (patch.has_fixed_point) {
          return reader.Error(patch.fixed_point_node,
                              absl::StrCat("'", patch.target, "' is a pass; fixed_point applies to groups"));
        }
        const PassInfo* info = registries.pass_registry().Find(e->pass);
        if (info == nullptr) return reader.Error(patch.target_node, absl::StrCat("unknown pass '", e->pass, "'"));
        if (patch.has_options) {
          if (absl::Status s = ParsePassOptions(reader, patch.options, *info, &e->options); !s.ok()) return s;
        }
        if (patch.has_rules) {
          for (const auto& [list, names] : {std::pair{&e->enabled_rules, &patch.enable_rules},
                                            std::pair{&e->disabled_rules, &patch.disable_rules}}) {
            if (absl::Status s = CheckRuleNamesForPass(reader, patch.rules_node, e->pass, *names, registries); !s.ok())
              return s;
            AppendUnique(*list, *names);
          }
        }
      }
      return absl::OkStatus();
    case PipelinePatch::Kind::kInsertBefore:
    case PipelinePatch::Kind::kInsertAfter: {
      if (targets.size() > 1) {
        return reader.Error(patch.target_node,
                            absl::StrCat("'", patch.target, "' names ", targets.size(), " entries of pipeline '",
                                         pipeline.name, "'; give the one you mean a label (name:) and insert at it"));
      }
      std::vector<PipelineEntry>* list = nullptr;
      size_t index = 0;
      if (!Locate(pipeline.passes, targets[0], &list, &index)) {
        return absl::InternalError("patch target found but not located");
      }
      // A label or group name the insertion brings must be new; say so at the patch.
      std::vector<std::pair<std::string, SourceLocation>> existing, added;
      CollectNamed(pipeline.passes, &existing);
      CollectNamed({patch.entry}, &added);
      for (const auto& [name, loc] : added) {
        for (const auto& [old_name, old_loc] : existing) {
          if (name == old_name) {
            return absl::InvalidArgumentError(absl::StrCat(patch.location.ToString(), ": the inserted name '", name,
                                                           "' is already used at ", old_loc.ToString(),
                                                           "; labels and group names must be unique"));
          }
        }
      }
      size_t at = patch.kind == PipelinePatch::Kind::kInsertBefore ? index : index + 1;
      list->insert(list->begin() + static_cast<std::ptrdiff_t>(at), patch.entry);
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

std::string Trim(double v) { return absl::StrFormat("%.4g", v); }

std::string Bytes(int64_t v) {
  if (v >= (int64_t{1} << 30)) return absl::StrCat(Trim(v / 1073741824.0), " GiB");
  if (v >= (int64_t{1} << 20)) return absl::StrCat(Trim(v / 1048576.0), " MiB");
  if (v >= 1024) return absl::StrCat(Trim(v / 1024.0), " KiB");
  return absl::StrCat(v, " B");
}

std::vector<std::string> YamlNamesIn(const std::vector<std::string>& dirs) {
  std::set<std::string> names;
  for (const std::string& d : dirs) {
    if (IsBuiltinPath(d)) {
      for (std::string& n : BuiltinYamlNamesIn(d)) names.insert(std::move(n));
      continue;
    }
    std::error_code ec;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".yaml") names.insert(it->path().stem().string());
    }
  }
  return std::vector<std::string>(names.begin(), names.end());
}

bool LooksLikePath(const std::string& s) {
  auto ends = [&](const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return s.find('/') != std::string::npos || ends(".yaml") || ends(".yml");
}

bool IsFile(const std::string& path) {
  if (IsBuiltinPath(path)) return FindBuiltinFile(path).has_value();
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

absl::StatusOr<std::string> FindByName(const std::string& name, const std::vector<std::string>& dirs,
                                       const char* what) {
  for (const std::string& d : dirs) {
    if (d.empty()) continue;
    std::string candidate = (fs::path(d) / (name + ".yaml")).string();
    if (IsFile(candidate)) return candidate;
  }
  std::vector<std::string> looked;
  for (const std::string& d : dirs)
    if (!d.empty()) looked.push_back(d);
  std::vector<std::string> known = YamlNamesIn(looked);
  std::string hint = yaml::DidYouMean(name, known);
  return absl::NotFoundError(absl::StrCat(
      "unknown ", what, " '", name, "'", hint, "; looked for ", name, ".yaml in ",
      looked.empty() ? std::string("no folder") : absl::StrJoin(looked, ", "),
      known.empty() ? std::string("") : absl::StrCat(" (", what, "s there: ", absl::StrJoin(known, ", "), ")")));
}

// launch_check: {min_bytes: 1 MiB, max_bytes_per_thread: 64 KiB}
absl::Status ParseLaunchCheck(const yaml::Reader& reader, const YAML::Node& node, HardwareProfile* hw) {
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, "'launch_check'");
  if (!keys.ok()) return keys.status();
  if (absl::Status s = reader.CheckKeys(*keys, {"min_bytes", "max_bytes_per_thread"}, "'launch_check'"); !s.ok())
    return s;
  for (const yaml::MapEntry& k : *keys) {
    absl::StatusOr<int64_t> v = ByteCount(reader, k.value, absl::StrCat("launch_check: ", k.key));
    if (!v.ok()) return v.status();
    if (*v <= 0) return reader.Error(k.value, absl::StrCat(k.key, " must be a positive byte count"));
    (k.key == "min_bytes" ? hw->launch_check_min_bytes : hw->launch_check_max_bytes_per_thread) = *v;
  }
  return absl::OkStatus();
}

// A knob's value as the profile writes it: an integer for count and byte knobs.
std::string TuningValueText(const TuningDecl& d, double v) {
  if (d.kind == TuningKind::kReal) return yaml::FormatFloat(v);
  return absl::StrCat(static_cast<int64_t>(v));
}

// tuning: {small_gemm_max_macs: 16777216, ...}: engine/tuning.h's knobs, checked against their
// declarations (name, kind, range).
absl::Status ParseTuning(const yaml::Reader& reader, const YAML::Node& node, HardwareProfile* hw) {
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, "'tuning'");
  if (!keys.ok()) return keys.status();
  std::vector<std::string> names;
  for (const TuningDecl& d : TuningDecls()) names.push_back(std::string(d.name));
  if (absl::Status s = reader.CheckKeys(*keys, names, "'tuning'"); !s.ok()) return s;
  for (const yaml::MapEntry& k : *keys) {
    const TuningDecl& d = *FindTuningDecl(k.key);  // CheckKeys accepted only declared names
    const std::string what = absl::StrCat("tuning: ", k.key);
    double value = 0;
    if (d.kind == TuningKind::kReal) {
      absl::StatusOr<double> v = reader.Float(k.value, what);
      if (!v.ok()) return v.status();
      value = *v;
    } else {
      absl::StatusOr<int64_t> v = d.kind == TuningKind::kBytes ? ByteCount(reader, k.value, what) : reader.Int(k.value, what);
      if (!v.ok()) return v.status();
      value = static_cast<double>(*v);
    }
    if (!(value >= d.min_value && value <= d.max_value))
      return reader.Error(k.value, absl::StrCat(what, " must be from ", TuningValueText(d, d.min_value), " to ",
                                                TuningValueText(d, d.max_value), ", got ", TuningValueText(d, value)));
    hw->tuning.Set(d.knob, value);
  }
  return absl::OkStatus();
}

absl::StatusOr<Profile> ParseProfile(const yaml::Reader& reader, const YAML::Node& root, const Registries& registries) {
  if (root.IsNull()) return reader.Error(YAML::Mark::null_mark(), "empty profile (expected name, kind, pipeline)");
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(root, "a profile");
  if (!keys.ok()) return keys.status();
  if (absl::Status s =
          reader.CheckKeys(*keys, {"name", "kind", "pipeline", "description", "hardware", "launch_check", "tuning", "patches"},
                           "a profile");
      !s.ok())
    return s;
  for (const char* required : {"name", "kind", "pipeline"}) {
    if (yaml::Find(*keys, required) == nullptr) {
      return reader.Error(root, absl::StrCat("a profile needs '", required, ":'"));
    }
  }
  Profile p;
  p.source = reader.file();
  for (const yaml::MapEntry& k : *keys) {
    if (k.key == "name" || k.key == "pipeline" || k.key == "kind") {
      absl::StatusOr<std::string> v = reader.Name(k.value, absl::StrCat("the profile's ", k.key));
      if (!v.ok()) return v.status();
      if (k.key == "name") p.hardware.name = *v;
      if (k.key == "pipeline") {
        p.hardware.pipeline = *v;
        p.pipeline_node = k.value;
      }
      if (k.key == "kind") {
        if (*v != "gpu" && *v != "cpu") {
          return reader.Error(
              k.value, absl::StrCat("kind must be gpu or cpu, got '", *v, "'", yaml::DidYouMean(*v, {"gpu", "cpu"})));
        }
        p.hardware.kind = *v;
      }
    } else if (k.key == "description") {
      absl::StatusOr<std::string> v = reader.String(k.value, "the description");
      if (!v.ok()) return v.status();
      p.description = *v;
    } else if (k.key == "hardware") {
      if (absl::Status s = ParseHardware(reader, k.value, &p.hardware); !s.ok()) return s;
    } else if (k.key == "launch_check") {
      if (absl::Status s = ParseLaunchCheck(reader, k.value, &p.hardware); !s.ok()) return s;
    } else if (k.key == "tuning") {
      if (absl::Status s = ParseTuning(reader, k.value, &p.hardware); !s.ok()) return s;
    } else if (k.key == "patches") {
      absl::StatusOr<std::vector<YAML::Node>> items = reader.Sequence(k.value, "'patches'");
      if (!items.ok()) return items.status();
      if (items->size() > 10000) return reader.Error(k.value, "too many patches");
      for (const YAML::Node& item : *items) {
        absl::StatusOr<PipelinePatch> patch = ParsePatch(reader, item, registries);
        if (!patch.ok()) return patch.status();
        p.patches.push_back(std::move(*patch));
      }
    }
  }
  DeriveCapabilities(p.hardware);
  return p;
}

}  // namespace

std::string PrintProfile(const Profile& p) {
  const HardwareProfile& h = p.hardware;
  std::string out = absl::StrCat("# hloc opt --print-profile: ", p.source, "\n", "name: ", h.name, "\nkind: ", h.kind,
                                 "\npipeline: ", h.pipeline, "\nhardware:\n");
  absl::StrAppend(&out, "  sm_count: ", h.sm_count, "\n  memory_bandwidth: ", absl::StrFormat("%.6g", h.memory_bandwidth),
                  "  # B/s\n  peak_flops_f32: ", absl::StrFormat("%.6g", h.peak_flops_f32),
                  "\n  peak_flops_bf16: ", absl::StrFormat("%.6g", h.peak_flops_bf16),
                  "\n  shared_memory_per_block: ", h.shared_memory_per_block, "\n  l2_cache_size: ", h.l2_cache_size,
                  "\n  compute_capability: \"", h.compute_capability_major, ".", h.compute_capability_minor,
                  "\"\n  memory_size: ", h.memory_size, "\n  tensor_cores: ", h.has_tensor_cores ? "true" : "false",
                  "\n  link_bandwidth: ", absl::StrFormat("%.6g", h.link_bandwidth), "  # B/s\n  link_latency: ",
                  absl::StrFormat("%.6g", h.link_latency), "  # s\n");
  absl::StrAppend(&out, "launch_check: {min_bytes: ", h.launch_check_min_bytes,
                  ", max_bytes_per_thread: ", h.launch_check_max_bytes_per_thread, "}  # 0: the compiler's defaults\n");
  absl::StrAppend(&out, "tuning:\n");
  for (const TuningDecl& d : TuningDecls()) {
    absl::StrAppend(&out, "  ", std::string(d.name), ": ", TuningValueText(d, h.tuning.GetReal(d.knob)), "  # ",
                    h.tuning.IsDefault(d.knob)
                        ? std::string("default")
                        : absl::StrCat("set by the profile (default ", TuningValueText(d, d.default_value), ")"),
                    ": ", std::string(d.decides), ". ",
                    std::string(d.measurement), "\n");
  }
  return out;
}

absl::StatusOr<Profile> LoadProfileFile(const std::string& path, const Registries& registries) {
  absl::StatusOr<YAML::Node> root = yaml::LoadFile(path);
  if (!root.ok()) return root.status();
  return ParseProfile(yaml::Reader(path), *root, registries);
}

absl::StatusOr<Profile> LoadProfileString(const std::string& text, const std::string& name,
                                          const Registries& registries) {
  absl::StatusOr<YAML::Node> root = yaml::LoadString(text, name);
  if (!root.ok()) return root.status();
  return ParseProfile(yaml::Reader(name), *root, registries);
}

absl::Status SetTuningValues(const std::vector<std::string>& assignments, HardwareProfile& hardware) {
  // Read as the profile's `tuning:` mapping would be, one "key: value" line per assignment, so
  // the names, units and ranges are checked exactly as in a profile.
  std::string text;
  for (const std::string& a : assignments) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
      return absl::InvalidArgumentError(absl::StrCat("--tuning takes KEY=VALUE (a key of the profile's tuning: ",
                                                     "section, `hloc opt --profile P --print-profile` lists them), got '",
                                                     a, "'"));
    absl::StrAppend(&text, a.substr(0, eq), ": ", a.substr(eq + 1), "\n");
  }
  absl::StatusOr<YAML::Node> root = yaml::LoadString(text, "--tuning");
  if (!root.ok()) return root.status();
  return ParseTuning(yaml::Reader("--tuning"), *root, &hardware);
}

absl::Status ApplyPatches(const Profile& profile, Pipeline& pipeline, const Registries& registries) {
  yaml::Reader reader(profile.source);
  for (const PipelinePatch& patch : profile.patches) {
    if (absl::Status s = ApplyPatch(reader, patch, pipeline, registries); !s.ok()) return s;
  }
  // Inserted entries may bring labels or group names that clash with the pipeline's.
  return CheckPipelineNames(pipeline, registries);
}

void DeriveCapabilities(HardwareProfile& hw) {
  std::map<Requirement, bool> derived;
  const bool gpu = hw.kind == "gpu";
  const int cc = hw.compute_capability_major * 10 + hw.compute_capability_minor;
  derived[Requirement::kIsGpu] = gpu;
  derived[Requirement::kIsCpu] = hw.kind == "cpu";
  derived[Requirement::kHasTensorCores] = hw.has_tensor_cores;
  // NVIDIA's compute capabilities: bf16 and cp.async from Ampere (8.0), fp8 from Ada (8.9),
  // TMA and thread-block clusters from Hopper (9.0), wgmma on Hopper only.
  derived[Requirement::kHasBf16] = gpu && cc >= 80;
  derived[Requirement::kHasAsyncCopy] = gpu && cc >= 80;
  derived[Requirement::kHasFp8] = gpu && cc >= 89;
  derived[Requirement::kHasTma] = gpu && cc >= 90;
  derived[Requirement::kHasClusters] = gpu && cc >= 90;
  derived[Requirement::kIsHopperOrNewer] = gpu && cc >= 90;  // XLA's cuDNN layout heuristic changes there
  derived[Requirement::kHasWgmma] = gpu && hw.compute_capability_major == 9;
  for (const auto& [r, value] : derived) hw.capabilities.emplace(RequirementName(r), value);  // explicit entries win
}

std::map<std::string, std::string> KnownCapabilities() {
  // The Requirement records (rules/base/Requirements.td): DeriveCapabilities derives some, and a
  // profile may set any.
  std::map<std::string, std::string> known;
  for (int i = 0; i < kNumRequirements; ++i) known.emplace(RequirementName(static_cast<Requirement>(i)), "");
  auto add = [&](const Requirement* requirements, int n, const char* record, const char* file, int line) {
    for (int i = 0; i < n; ++i) {
      std::string& where = known[RequirementName(requirements[i])];
      if (where.empty()) where = absl::StrCat(file, ":", line, " (", record, ")");
    }
  };
  for (const RuleInfo* r : RuleRegistry::Global().all()) add(r->requirements, r->num_requires, r->name, r->file, r->line);
  const GeneratedTables& t = GeneratedTables::Global();
  for (const LayoutConstraintInfo* r : t.layout) add(r->requirements, r->num_requires, r->name, r->file, r->line);
  for (const FusibleInfo* r : t.fusible) add(r->requirements, r->num_requires, r->name, r->file, r->line);
  for (const FusionVetoInfo* r : t.vetoes) add(r->requirements, r->num_requires, r->name, r->file, r->line);
  return known;
}

std::optional<std::string> GpuProfileForDevice(const GpuDeviceFacts& device, const std::vector<std::string>& config_dirs) {
  std::optional<std::string> best;
  std::pair<int64_t, int64_t> best_distance;
  for (const std::string& name : YamlNamesIn(config_dirs)) {
    absl::StatusOr<std::string> path = FindProfileFile(name, config_dirs);
    if (!path.ok()) continue;
    absl::StatusOr<Profile> p = LoadProfileFile(*path);
    if (!p.ok()) continue;
    const HardwareProfile& h = p->hardware;
    if (h.kind != "gpu" || h.compute_capability_major != device.compute_capability_major ||
        h.compute_capability_minor != device.compute_capability_minor)
      continue;
    const std::pair<int64_t, int64_t> distance = {std::abs(h.memory_size - device.memory_size),
                                                  std::abs(h.sm_count - device.sm_count)};
    if (!best || distance < best_distance) best = name, best_distance = distance;
  }
  return best;
}

absl::StatusOr<std::string> FindProfileFile(const std::string& name_or_path,
                                            const std::vector<std::string>& config_dirs) {
  if (LooksLikePath(name_or_path) || IsFile(name_or_path)) {
    if (!IsFile(name_or_path)) return absl::NotFoundError(absl::StrCat(name_or_path, ": cannot open profile"));
    return name_or_path;
  }
  return FindByName(name_or_path, config_dirs, "profile");
}

absl::StatusOr<std::string> FindPipelineFile(const std::string& name_or_path,
                                             const std::vector<std::string>& pipeline_dirs,
                                             const std::string& relative_to) {
  if (LooksLikePath(name_or_path)) {
    fs::path p(name_or_path);
    if (p.is_relative() && !relative_to.empty()) p = fs::path(relative_to).parent_path() / p;
    if (!IsFile(p.string())) return absl::NotFoundError(absl::StrCat(p.string(), ": cannot open pipeline manifest"));
    return p.string();
  }
  if (relative_to.empty() && IsFile(name_or_path)) return name_or_path;
  return FindByName(name_or_path, pipeline_dirs, "pipeline");
}

absl::StatusOr<std::string> FindProfilePipelineFile(const Profile& profile,
                                                    const std::vector<std::string>& pipeline_dirs) {
  absl::StatusOr<std::string> path = FindPipelineFile(profile.hardware.pipeline, pipeline_dirs, profile.source);
  if (path.ok() || !profile.pipeline_node.IsDefined()) return path;
  yaml::Reader reader(profile.source);
  return reader.Error(profile.pipeline_node, std::string(path.status().message()));
}

std::string DescribeHardware(const HardwareProfile& hw) {
  std::vector<std::string> parts;
  if (hw.sm_count > 0) parts.push_back(absl::StrCat(hw.sm_count, hw.kind == "cpu" ? " cores" : " SMs"));
  if (hw.compute_capability_major > 0) {
    parts.push_back(absl::StrCat("compute capability ", hw.compute_capability_major, ".", hw.compute_capability_minor));
  }
  // Tera where it reads well, giga below.
  auto scaled = [](double v, const char* unit) {
    return v >= 1e12 ? absl::StrCat(Trim(v / 1e12), " T", unit) : absl::StrCat(Trim(v / 1e9), " G", unit);
  };
  if (hw.memory_bandwidth > 0) parts.push_back(scaled(hw.memory_bandwidth, "B/s"));
  if (hw.peak_flops_f32 > 0) parts.push_back(scaled(hw.peak_flops_f32, "FLOP/s f32"));
  if (hw.peak_flops_bf16 > 0) parts.push_back(scaled(hw.peak_flops_bf16, "FLOP/s bf16"));
  if (hw.l2_cache_size > 0) parts.push_back(absl::StrCat(Bytes(hw.l2_cache_size), " L2"));
  if (hw.shared_memory_per_block > 0) {
    parts.push_back(absl::StrCat(Bytes(hw.shared_memory_per_block), " shared memory per block"));
  }
  if (hw.memory_size > 0) parts.push_back(absl::StrCat(Bytes(hw.memory_size), " memory"));
  std::vector<std::string> caps;
  for (const auto& [name, on] : hw.capabilities)
    if (on) caps.push_back(name);
  std::string out = absl::StrCat(hw.name, " (", hw.kind, "): ", absl::StrJoin(parts, ", "));
  if (!caps.empty()) absl::StrAppend(&out, "; capabilities: ", absl::StrJoin(caps, ", "));
  return out;
}

}  // namespace hloc
