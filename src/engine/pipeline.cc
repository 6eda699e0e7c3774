#include "engine/pipeline.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace {

// Bounds that keep a hostile manifest (deep nesting, YAML alias bombs, self-referencing
// anchors) from exhausting the stack or memory: real pipelines are a few levels and a few
// hundred entries deep.
constexpr int kMaxGroupDepth = 32;
constexpr int64_t kMaxEntries = 10000;
constexpr int64_t kMaxFixedPointIterations = 1000000;

SourceLocation LocationOf(const yaml::Reader& reader, const YAML::Node& node) {
  SourceLocation loc;
  loc.file = reader.file();
  YAML::Mark m = node.Mark();
  if (!m.is_null() && m.line >= 0) {
    loc.line = m.line + 1;
    loc.column = m.column + 1;
  }
  return loc;
}

std::vector<std::string> RegisteredPassNames(const PassRegistry& registry) {
  std::vector<std::string> names;
  for (const PassInfo* p : registry.All()) names.push_back(p->name);
  return names;
}

absl::Status UnknownPass(const yaml::Reader& reader, const YAML::Node& node, const std::string& name,
                         const PassRegistry& registry) {
  std::string hint = yaml::DidYouMean(name, RegisteredPassNames(registry));
  if (hint.empty()) hint = " ('hloc opt --list-passes' lists them)";
  return reader.Error(node, absl::StrCat("unknown pass '", name, "'", hint));
}

// A name used in messages and dump file names: anything printable on one line.
absl::Status CheckDisplayName(const yaml::Reader& reader, const YAML::Node& node, const std::string& name,
                              const char* what) {
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return reader.Error(node, absl::StrCat(what, " must be a name on one line without control characters"));
    }
  }
  if (name.size() > 200) return reader.Error(node, absl::StrCat(what, " is too long (", name.size(), " characters)"));
  return absl::OkStatus();
}

absl::StatusOr<PipelineEntry> ParseEntry(const yaml::Reader& reader, const YAML::Node& node,
                                         const Registries& registries, int depth, int64_t* budget,
                                         const std::vector<std::string>& extra_keys = {});

absl::StatusOr<std::vector<PipelineEntry>> ParseEntryList(const yaml::Reader& reader, const YAML::Node& node,
                                                          const std::string& what, const Registries& registries,
                                                          int depth, int64_t* budget) {
  absl::StatusOr<std::vector<YAML::Node>> items = reader.Sequence(node, what);
  if (!items.ok()) return items.status();
  std::vector<PipelineEntry> out;
  for (const YAML::Node& item : *items) {
    absl::StatusOr<PipelineEntry> e = ParseEntry(reader, item, registries, depth, budget);
    if (!e.ok()) return e.status();
    out.push_back(std::move(*e));
  }
  return out;
}

absl::Status ParseRules(const yaml::Reader& reader, const YAML::Node& node, const Registries& registries,
                        PipelineEntry* entry) {
  const std::string what = absl::StrCat("the rules of pass '", entry->pass, "'");
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, what);
  if (!keys.ok()) return keys.status();
  if (absl::Status s = reader.CheckKeys(*keys, {"enable", "disable"}, what); !s.ok()) return s;
  for (const yaml::MapEntry& k : *keys) {
    absl::StatusOr<std::vector<std::string>> names =
        reader.StringList(k.value, absl::StrCat("'", k.key, "' in ", what));
    if (!names.ok()) return names.status();
    if (absl::Status s = CheckRuleNamesForPass(reader, k.value, entry->pass, *names, registries); !s.ok()) return s;
    (k.key == "enable" ? entry->enabled_rules : entry->disabled_rules) = std::move(*names);
  }
  return absl::OkStatus();
}

std::vector<std::string> Plus(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

absl::StatusOr<PipelineEntry> ParseEntry(const yaml::Reader& reader, const YAML::Node& node,
                                         const Registries& registries, int depth, int64_t* budget,
                                         const std::vector<std::string>& extra_keys) {
  if (--*budget < 0) {
    return reader.Error(node, absl::StrCat("the pipeline has more than ", kMaxEntries,
                                           " entries (are YAML aliases repeating a list?)"));
  }
  const PassRegistry& passes = registries.pass_registry();
  PipelineEntry entry;
  entry.location = LocationOf(reader, node);
  // `- dce` is short for `- pass: dce`.
  if (node.IsScalar()) {
    absl::StatusOr<std::string> name = reader.Name(node, "a pipeline entry");
    if (!name.ok()) return name.status();
    if (passes.Find(*name) == nullptr) return UnknownPass(reader, node, *name, passes);
    entry.pass = *name;
    return entry;
  }
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, "a pipeline entry");
  if (!keys.ok()) return keys.status();
  const yaml::MapEntry* pass_key = yaml::Find(*keys, "pass");
  const yaml::MapEntry* group_key = yaml::Find(*keys, "group");
  if (node.IsNull() || (pass_key == nullptr && group_key == nullptr)) {
    return reader.Error(node, "a pipeline entry needs 'pass: NAME' or 'group: NAME'");
  }
  if (pass_key != nullptr && group_key != nullptr) {
    return reader.Error(group_key->key_node, "a pipeline entry is either a pass or a group, not both");
  }

  if (pass_key != nullptr) {
    if (absl::Status s =
            reader.CheckKeys(*keys, Plus({"pass", "name", "options", "enabled", "rules"}, extra_keys), "a pass entry");
        !s.ok())
      return s;
    absl::StatusOr<std::string> name = reader.Name(pass_key->value, "'pass'");
    if (!name.ok()) return name.status();
    const PassInfo* info = passes.Find(*name);
    if (info == nullptr) return UnknownPass(reader, pass_key->value, *name, passes);
    entry.pass = *name;
    for (const yaml::MapEntry& k : *keys) {
      if (k.key == "name") {
        absl::StatusOr<std::string> label = reader.Name(k.value, "the label ('name') of a pass");
        if (!label.ok()) return label.status();
        if (absl::Status s = CheckDisplayName(reader, k.value, *label, "a label"); !s.ok()) return s;
        entry.label = *label;
      } else if (k.key == "options") {
        if (absl::Status s = ParsePassOptions(reader, k.value, *info, &entry.options); !s.ok()) return s;
      } else if (k.key == "enabled") {
        absl::StatusOr<bool> b = reader.Bool(k.value, absl::StrCat("'enabled' of pass '", entry.pass, "'"));
        if (!b.ok()) return b.status();
        entry.enabled = *b;
      } else if (k.key == "rules") {
        if (absl::Status s = ParseRules(reader, k.value, registries, &entry); !s.ok()) return s;
      }
    }
    return entry;
  }

  entry.kind = PipelineEntry::Kind::kGroup;
  if (absl::Status s =
          reader.CheckKeys(*keys, Plus({"group", "passes", "fixed_point", "enabled"}, extra_keys), "a group entry");
      !s.ok())
    return s;
  absl::StatusOr<std::string> name = reader.Name(group_key->value, "'group'");
  if (!name.ok()) return name.status();
  if (absl::Status s = CheckDisplayName(reader, group_key->value, *name, "a group name"); !s.ok()) return s;
  entry.group = *name;
  if (depth + 1 > kMaxGroupDepth) {
    return reader.Error(node, absl::StrCat("groups nest more than ", kMaxGroupDepth, " deep"));
  }
  const yaml::MapEntry* list = yaml::Find(*keys, "passes");
  if (list == nullptr) return reader.Error(node, absl::StrCat("group '", entry.group, "' needs a 'passes:' list"));
  for (const yaml::MapEntry& k : *keys) {
    if (k.key == "passes") {
      absl::StatusOr<std::vector<PipelineEntry>> children = ParseEntryList(
          reader, k.value, absl::StrCat("the passes of group '", entry.group, "'"), registries, depth + 1, budget);
      if (!children.ok()) return children.status();
      entry.passes = std::move(*children);
    } else if (k.key == "fixed_point") {
      if (absl::Status s = ParseFixedPoint(reader, k.value, entry.group, &entry.fixed_point, &entry.max_iterations);
          !s.ok())
        return s;
    } else if (k.key == "enabled") {
      absl::StatusOr<bool> b = reader.Bool(k.value, absl::StrCat("'enabled' of group '", entry.group, "'"));
      if (!b.ok()) return b.status();
      entry.enabled = *b;
    }
  }
  return entry;
}

absl::Status ParseVerify(const yaml::Reader& reader, const YAML::Node& node, VerifySettings* verify) {
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, "'verify'");
  if (!keys.ok()) return keys.status();
  if (absl::Status s = reader.CheckKeys(
          *keys, {"at_start", "after_changed_pass", "layout_sensitive", "allow_mixed_precision"}, "'verify'");
      !s.ok())
    return s;
  for (const yaml::MapEntry& k : *keys) {
    absl::StatusOr<bool> b = reader.Bool(k.value, absl::StrCat("verify: ", k.key));
    if (!b.ok()) return b.status();
    if (k.key == "at_start") verify->at_start = *b;
    if (k.key == "after_changed_pass") verify->after_changed_pass = *b;
    if (k.key == "layout_sensitive") verify->layout_sensitive = *b;
    if (k.key == "allow_mixed_precision") verify->allow_mixed_precision = *b;
  }
  return absl::OkStatus();
}

absl::StatusOr<Pipeline> ParsePipeline(const yaml::Reader& reader, const YAML::Node& root,
                                       const Registries& registries) {
  if (root.IsNull()) {
    return reader.Error(YAML::Mark::null_mark(), "empty pipeline manifest (expected 'name:' and 'passes:')");
  }
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(root, "a pipeline manifest");
  if (!keys.ok()) return keys.status();
  if (absl::Status s = reader.CheckKeys(*keys, {"name", "description", "verify", "passes"}, "a pipeline manifest");
      !s.ok())
    return s;
  Pipeline p;
  p.source = reader.file();
  const yaml::MapEntry* name = yaml::Find(*keys, "name");
  if (name == nullptr) return reader.Error(root, "a pipeline manifest needs 'name:'");
  if (yaml::Find(*keys, "passes") == nullptr) return reader.Error(root, "a pipeline manifest needs 'passes:'");
  int64_t budget = kMaxEntries;
  for (const yaml::MapEntry& k : *keys) {
    if (k.key == "name") {
      absl::StatusOr<std::string> n = reader.Name(k.value, "the pipeline's name");
      if (!n.ok()) return n.status();
      if (absl::Status s = CheckDisplayName(reader, k.value, *n, "the pipeline's name"); !s.ok()) return s;
      p.name = *n;
    } else if (k.key == "description") {
      absl::StatusOr<std::string> d = reader.String(k.value, "the description");
      if (!d.ok()) return d.status();
      p.description = *d;
    } else if (k.key == "verify") {
      if (absl::Status s = ParseVerify(reader, k.value, &p.verify); !s.ok()) return s;
    } else if (k.key == "passes") {
      absl::StatusOr<std::vector<PipelineEntry>> entries =
          ParseEntryList(reader, k.value, "the pipeline's passes", registries, 0, &budget);
      if (!entries.ok()) return entries.status();
      p.passes = std::move(*entries);
    }
  }
  if (absl::Status s = CheckPipelineNames(p, registries); !s.ok()) return s;
  return p;
}

// --- names ------------------------------------------------------------------------------------

void CollectTargets(std::vector<PipelineEntry>& entries, const std::string& target, int want,
                    std::vector<PipelineEntry*>* out) {
  for (PipelineEntry& e : entries) {
    bool match = (want == 0 && !e.is_group() && e.label == target) ||
                 (want == 1 && e.is_group() && e.group == target) || (want == 2 && !e.is_group() && e.pass == target);
    if (match) out->push_back(&e);
    if (e.is_group()) CollectTargets(e.passes, target, want, out);
  }
}

void CollectNames(const std::vector<PipelineEntry>& entries, std::set<std::string>* out) {
  for (const PipelineEntry& e : entries) {
    if (e.is_group()) {
      out->insert(e.group);
      CollectNames(e.passes, out);
    } else {
      out->insert(e.pass);
      if (!e.label.empty()) out->insert(e.label);
    }
  }
}

absl::Status CheckNames(const std::vector<PipelineEntry>& entries, const PassRegistry& registry,
                        std::map<std::string, SourceLocation>* seen) {
  for (const PipelineEntry& e : entries) {
    const std::string& name = e.is_group() ? e.group : e.label;
    if (!name.empty()) {
      const char* what = e.is_group() ? "group name" : "label";
      if (auto it = seen->find(name); it != seen->end()) {
        return absl::InvalidArgumentError(absl::StrCat(e.location.ToString(), ": ", what, " '", name,
                                                       "' is already used at ", it->second.ToString(),
                                                       "; labels and group names must be unique"));
      }
      // A pass name as a label or group name would make a target ambiguous (a pass name
      // targets every entry of that pass).
      if (registry.Find(name) != nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(e.location.ToString(), ": ", what, " '", name, "' is the name of a pass; choose another"));
      }
      (*seen)[name] = e.location;
    }
    if (e.is_group()) {
      if (absl::Status s = CheckNames(e.passes, registry, seen); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// --- printing ---------------------------------------------------------------------------------

std::string YamlList(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(yaml::QuoteIfNeeded(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

void PrintEntries(const std::vector<PipelineEntry>& entries, int indent, std::string* out) {
  const std::string pad(indent, ' ');
  if (entries.empty()) return;
  for (const PipelineEntry& e : entries) {
    if (e.is_group()) {
      absl::StrAppend(out, pad, "- group: ", yaml::QuoteIfNeeded(e.group), "\n");
      if (!e.enabled) absl::StrAppend(out, pad, "  enabled: false\n");
      if (e.fixed_point) absl::StrAppend(out, pad, "  fixed_point: {max_iterations: ", e.max_iterations, "}\n");
      if (e.passes.empty()) {
        absl::StrAppend(out, pad, "  passes: []\n");
      } else {
        absl::StrAppend(out, pad, "  passes:\n");
        PrintEntries(e.passes, indent + 4, out);
      }
      continue;
    }
    absl::StrAppend(out, pad, "- pass: ", yaml::QuoteIfNeeded(e.pass), "\n");
    if (!e.label.empty()) absl::StrAppend(out, pad, "  name: ", yaml::QuoteIfNeeded(e.label), "\n");
    if (!e.enabled) absl::StrAppend(out, pad, "  enabled: false\n");
    if (!e.options.empty()) {
      std::vector<std::string> parts;
      for (const auto& [name, value] : e.options) parts.push_back(absl::StrCat(name, ": ", OptionValueToYaml(value)));
      absl::StrAppend(out, pad, "  options: {", absl::StrJoin(parts, ", "), "}\n");
    }
    if (!e.enabled_rules.empty() || !e.disabled_rules.empty()) {
      std::vector<std::string> parts;
      if (!e.enabled_rules.empty()) parts.push_back(absl::StrCat("enable: ", YamlList(e.enabled_rules)));
      if (!e.disabled_rules.empty()) parts.push_back(absl::StrCat("disable: ", YamlList(e.disabled_rules)));
      absl::StrAppend(out, pad, "  rules: {", absl::StrJoin(parts, ", "), "}\n");
    }
  }
}

bool SameEntries(const std::vector<PipelineEntry>& a, const std::vector<PipelineEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const PipelineEntry& x = a[i];
    const PipelineEntry& y = b[i];
    if (x.kind != y.kind || x.enabled != y.enabled) return false;
    if (x.is_group()) {
      if (x.group != y.group || x.fixed_point != y.fixed_point) return false;
      if (x.fixed_point && x.max_iterations != y.max_iterations) return false;
      if (!SameEntries(x.passes, y.passes)) return false;
    } else {
      if (x.pass != y.pass || x.label != y.label || x.options != y.options || x.enabled_rules != y.enabled_rules ||
          x.disabled_rules != y.disabled_rules)
        return false;
    }
  }
  return true;
}

}  // namespace

std::string SourceLocation::ToString() const {
  if (file.empty()) return "<command line>";
  if (line <= 0) return file;
  return absl::StrCat(file, ":", line, ":", column);
}

absl::StatusOr<PipelineEntry> ParsePipelineEntry(const yaml::Reader& reader, const YAML::Node& node,
                                                 const Registries& registries, int depth,
                                                 const std::vector<std::string>& extra_keys) {
  int64_t budget = kMaxEntries;
  return ParseEntry(reader, node, registries, depth, &budget, extra_keys);
}

absl::Status ParseFixedPoint(const yaml::Reader& reader, const YAML::Node& node, const std::string& group,
                             bool* fixed_point, int64_t* max_iterations) {
  const std::string what = absl::StrCat("fixed_point of group '", group, "'");
  if (node.IsScalar()) {  // `fixed_point: true` takes XLA's default limit
    absl::StatusOr<bool> b = reader.Bool(node, what);
    if (!b.ok()) return b.status();
    *fixed_point = *b;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, what);
  if (!keys.ok()) return keys.status();
  if (absl::Status s = reader.CheckKeys(*keys, {"max_iterations"}, what); !s.ok()) return s;
  *fixed_point = true;
  if (const yaml::MapEntry* m = yaml::Find(*keys, "max_iterations")) {
    absl::StatusOr<int64_t> n = reader.Int(m->value, absl::StrCat("max_iterations of group '", group, "'"));
    if (!n.ok()) return n.status();
    if (*n < 1 || *n > kMaxFixedPointIterations) {
      return reader.Error(
          m->value, absl::StrCat("max_iterations must be between 1 and ", kMaxFixedPointIterations, ", got ", *n));
    }
    *max_iterations = *n;
  }
  return absl::OkStatus();
}

absl::Status ParsePassOptions(const yaml::Reader& reader, const YAML::Node& node, const PassInfo& info,
                              std::map<std::string, OptionValue>* out) {
  const std::string what = absl::StrCat("the options of pass '", info.name, "'");
  absl::StatusOr<std::vector<yaml::MapEntry>> keys = reader.Entries(node, what);
  if (!keys.ok()) return keys.status();
  std::vector<std::string> names;
  for (const PassOptionSpec& spec : info.options) names.push_back(spec.name);
  for (const yaml::MapEntry& k : *keys) {
    const PassOptionSpec* spec = nullptr;
    for (const PassOptionSpec& s : info.options)
      if (s.name == k.key) spec = &s;
    if (spec == nullptr) {
      if (names.empty()) return reader.Error(k.key_node, absl::StrCat("pass '", info.name, "' has no options"));
      std::string hint = yaml::DidYouMean(k.key, names);
      if (hint.empty()) hint = absl::StrCat(" (its options: ", absl::StrJoin(names, ", "), ")");
      return reader.Error(k.key_node, absl::StrCat("unknown option '", k.key, "' for pass '", info.name, "'", hint));
    }
    const std::string option = absl::StrCat("option '", k.key, "' of pass '", info.name, "'");
    switch (spec->type) {
      case OptionType::kBool: {
        absl::StatusOr<bool> v = reader.Bool(k.value, option);
        if (!v.ok()) return v.status();
        (*out)[k.key] = *v;
        break;
      }
      case OptionType::kInt: {
        absl::StatusOr<int64_t> v = reader.Int(k.value, option);
        if (!v.ok()) return v.status();
        (*out)[k.key] = *v;
        break;
      }
      case OptionType::kFloat: {
        absl::StatusOr<double> v = reader.Float(k.value, option);
        if (!v.ok()) return v.status();
        (*out)[k.key] = *v;
        break;
      }
      case OptionType::kString: {
        absl::StatusOr<std::string> v = reader.String(k.value, option);
        if (!v.ok()) return v.status();
        (*out)[k.key] = *v;
        break;
      }
      case OptionType::kStringList: {
        absl::StatusOr<std::vector<std::string>> v = reader.StringList(k.value, option);
        if (!v.ok()) return v.status();
        (*out)[k.key] = *v;
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckRuleNamesForPass(const yaml::Reader& reader, const YAML::Node& node, const std::string& pass,
                                   const std::vector<std::string>& names, const Registries& registries) {
  std::vector<std::string> known;
  for (const RuleInfo* r : registries.rule_registry().RulesForPass(pass)) {
    known.push_back(r->name);
    if (r->group != nullptr && r->group[0] != '\0' && std::find(known.begin(), known.end(), r->group) == known.end())
      known.push_back(r->group);
  }
  if (const PassInfo* info = registries.pass_registry().Find(pass); info != nullptr && info->records)
    for (std::string& r : info->records()) known.push_back(std::move(r));
  const bool has_rules = !registries.rule_registry().RulesForPass(pass).empty();
  for (size_t i = 0; i < names.size(); ++i) {
    YAML::Node at = node.IsSequence() && i < node.size() ? node[i] : node;
    if (names[i].starts_with(kRuleTagPrefix)) {
      // "tag:NAME": the pass's rewrite rules carrying a declared Tag (rules/base/Dsl.td).
      const std::string tag = names[i].substr(kRuleTagPrefix.size());
      if (!has_rules)
        return reader.Error(at, absl::StrCat("pass '", pass, "' has no rewrite rules, so '", names[i],
                                             "' selects nothing (tags are on rewrite rules)"));
      if (registries.rule_registry().FindTag(tag) != nullptr) continue;
      std::vector<std::string> tags;
      for (const TagInfo* t : registries.rule_registry().tags()) tags.push_back(t->name);
      return reader.Error(at, absl::StrCat("unknown tag '", tag, "' in 'tag:", tag, "': no Tag record (rules/base/Dsl.td) "
                                           "declares it", yaml::DidYouMean(tag, tags),
                                           tags.empty() ? "" : absl::StrCat(" (declared: ", absl::StrJoin(tags, ", "), ")")));
    }
    if (std::find(known.begin(), known.end(), names[i]) != known.end()) continue;
    if (known.empty()) {
      return reader.Error(at, absl::StrCat("pass '", pass, "' has no rewrite rules or other decision records, so it "
                                           "has no rule '", names[i], "' to enable or disable"));
    }
    return reader.Error(at, absl::StrCat("pass '", pass, "' has no rule or rule group named '", names[i], "'",
                                         yaml::DidYouMean(names[i], known)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Pipeline> LoadPipelineFile(const std::string& path, const Registries& registries) {
  absl::StatusOr<YAML::Node> root = yaml::LoadFile(path);
  if (!root.ok()) return root.status();
  return ParsePipeline(yaml::Reader(path), *root, registries);
}

absl::StatusOr<Pipeline> LoadPipelineString(const std::string& text, const std::string& name,
                                            const Registries& registries) {
  absl::StatusOr<YAML::Node> root = yaml::LoadString(text, name);
  if (!root.ok()) return root.status();
  return ParsePipeline(yaml::Reader(name), *root, registries);
}

absl::StatusOr<Pipeline> PipelineFromPassList(const std::vector<std::string>& passes, const Registries& registries) {
  Pipeline p;
  p.name = "passes";
  p.description = "passes given with --passes";
  const PassRegistry& registry = registries.pass_registry();
  for (const std::string& name : passes) {
    if (registry.Find(name) == nullptr) {
      std::string hint = yaml::DidYouMean(name, RegisteredPassNames(registry));
      if (hint.empty()) hint = " ('hloc opt --list-passes' lists them)";
      return absl::InvalidArgumentError(absl::StrCat("unknown pass '", name, "'", hint));
    }
    PipelineEntry e;
    e.pass = name;
    p.passes.push_back(std::move(e));
  }
  return p;
}

absl::Status CheckPipelineNames(const Pipeline& pipeline, const Registries& registries) {
  std::map<std::string, SourceLocation> seen;
  return CheckNames(pipeline.passes, registries.pass_registry(), &seen);
}

std::vector<PipelineEntry*> FindTargets(Pipeline& pipeline, const std::string& target) {
  std::vector<PipelineEntry*> out;
  for (int want = 0; want < 3 && out.empty(); ++want) CollectTargets(pipeline.passes, target, want, &out);
  return out;
}

std::vector<std::string> TargetNames(const Pipeline& pipeline) {
  std::set<std::string> names;
  CollectNames(pipeline.passes, &names);
  return std::vector<std::string>(names.begin(), names.end());
}

absl::Status DisableTargets(Pipeline& pipeline, const std::vector<std::string>& targets) {
  for (const std::string& t : targets) {
    std::vector<PipelineEntry*> found = FindTargets(pipeline, t);
    if (found.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("no pass, group or label named '", t, "' in pipeline '",
                                                     pipeline.name, "'", yaml::DidYouMean(t, TargetNames(pipeline))));
    }
    for (PipelineEntry* e : found) e->enabled = false;
  }
  return absl::OkStatus();
}

std::string OptionTypeName(OptionType type) {
  switch (type) {
    case OptionType::kBool: return "bool";
    case OptionType::kInt: return "int";
    case OptionType::kFloat: return "float";
    case OptionType::kString: return "string";
    case OptionType::kStringList: return "string list";
  }
  return "?";
}

std::string OptionValueToYaml(const OptionValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&value)) return absl::StrCat(*i);
  if (const double* d = std::get_if<double>(&value)) return yaml::FormatFloat(*d);
  if (const std::string* s = std::get_if<std::string>(&value)) return yaml::QuoteIfNeeded(*s);
  return YamlList(std::get<std::vector<std::string>>(value));
}

PassOptions ResolvedOptions(const PassInfo& info, const PipelineEntry& entry) {
  PassOptions options;
  for (const PassOptionSpec& spec : info.options) options.Set(spec.name, spec.default_value);
  for (const auto& [name, value] : entry.options) options.Set(name, value);
  return options;
}

std::string PrintPipeline(const Pipeline& p) {
  std::string out;
  absl::StrAppend(&out, "name: ", yaml::QuoteIfNeeded(p.name), "\n");
  if (!p.description.empty()) absl::StrAppend(&out, "description: ", yaml::QuoteIfNeeded(p.description), "\n");
  auto b = [](bool v) { return v ? "true" : "false"; };
  absl::StrAppend(&out, "verify: {at_start: ", b(p.verify.at_start),
                  ", after_changed_pass: ", b(p.verify.after_changed_pass),
                  ", layout_sensitive: ", b(p.verify.layout_sensitive),
                  ", allow_mixed_precision: ", b(p.verify.allow_mixed_precision), "}\n");
  if (p.passes.empty()) {
    absl::StrAppend(&out, "passes: []\n");
  } else {
    absl::StrAppend(&out, "passes:\n");
    PrintEntries(p.passes, 2, &out);
  }
  return out;
}

bool SamePipeline(const Pipeline& a, const Pipeline& b) {
  return a.name == b.name && a.description == b.description && a.verify.at_start == b.verify.at_start &&
         a.verify.after_changed_pass == b.verify.after_changed_pass &&
         a.verify.layout_sensitive == b.verify.layout_sensitive &&
         a.verify.allow_mixed_precision == b.verify.allow_mixed_precision && SameEntries(a.passes, b.passes);
}

}  // namespace hloc
