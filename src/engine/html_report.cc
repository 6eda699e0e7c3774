#include "engine/html_report.h"

#include <cstdio>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/html_report_page.h"
#include "engine/pass_manager.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/opcode.h"
#include "nlohmann/json.hpp"
#include "support/file_io.h"

namespace hloc {
namespace {

// A JSON string; '<', '>' and '&' as \uXXXX so the text can sit inside <script>.
std::string Json(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == '<' || c == '>' || c == '&') {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

std::string Num(double v) { return absl::StrFormat("%.6g", v); }

const char* FusionKindName(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
    case FusionKind::kCustom: return "kCustom";
  }
  return "?";
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else out.push_back(c);
  }
  return out;
}

// The entry computation as a Graphviz graph: fusions as filled boxes, other ops as ellipses.
std::string FusionGraphDot(const HloModule& module, size_t max_nodes) {
  const HloComputation* entry = module.entry_computation();
  std::ostringstream dot;
  dot << "digraph fusions {\n  rankdir=TB; node [fontname=\"DejaVu Sans\", fontsize=10];\n";
  if (entry == nullptr) return dot.str() + "}\n";
  std::map<const HloInstruction*, int> ids;
  for (const auto& inst : entry->instructions()) {
    if (ids.size() >= max_nodes) break;
    const int id = static_cast<int>(ids.size());
    ids[inst.get()] = id;
    std::string label = inst->name();
    if (inst->opcode() == HloOpcode::kFusion) {
      const HloComputation* body = inst->fused_instructions_computation();
      absl::StrAppend(&label, "\\n", FusionKindName(inst->attrs().fusion_kind), ", ",
                      body != nullptr ? body->instructions().size() : 0, " ops");
      dot << "  n" << id << " [shape=box, style=filled, fillcolor=\"#cfe3ff\", label=\"" << Escape(label) << "\"];\n";
    } else {
      absl::StrAppend(&label, "\\n", std::string(HloOpcodeString(inst->opcode())));
      dot << "  n" << id << " [shape=ellipse, label=\"" << Escape(label) << "\"];\n";
    }
  }
  for (const auto& [inst, id] : ids)
    for (const HloInstruction* op : inst->operands())
      if (auto it = ids.find(op); it != ids.end()) dot << "  n" << it->second << " -> n" << id << ";\n";
  dot << "}\n";
  return dot.str();
}

// SVG from `dot -Tsvg`, or "" when Graphviz is not installed or fails.
std::string RenderDot(const std::string& dot) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) return "";
  char path[] = "/tmp/hloc-graph-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  close(fd);
  {
    std::ofstream f(path);
    f << dot;
  }
  std::string svg;
  if (FILE* p = popen(absl::StrCat("dot -Tsvg '", path, "' 2>/dev/null").c_str(), "r")) {
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) svg.append(buf, n);
    if (pclose(p) != 0) svg.clear();
  }
  std::remove(path);
  const size_t start = svg.find("<svg");
  return start == std::string::npos ? "" : svg.substr(start);
}

// Parses `text` without letting an exception escape; nesting is capped (a times file is three
// levels deep) so a hostile file cannot make the parser or the destructor recurse deeply.
absl::StatusOr<nlohmann::json> ParseJson(const std::string& text) {
  constexpr int kMaxDepth = 16;
  bool too_deep = false;
  auto limit_depth = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if (depth > kMaxDepth && (event == nlohmann::json::parse_event_t::object_start ||
                              event == nlohmann::json::parse_event_t::array_start))
      too_deep = true;
    return !too_deep;
  };
  try {
    nlohmann::json doc = nlohmann::json::parse(text, limit_depth, /*allow_exceptions=*/true);
    if (too_deep) return absl::InvalidArgumentError(absl::StrCat("nested deeper than ", kMaxDepth, " levels"));
    return doc;
  } catch (const nlohmann::json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 40: ...".
    std::string what = e.what();
    if (size_t p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", what));
  }
}

std::optional<std::string> StringField(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// A finite number >= 0 (times, floors, runs per call).
std::optional<double> NonNegativeField(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// An integer >= 0 (positions, calls).
std::optional<int64_t> CountField(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    return v > static_cast<uint64_t>(INT64_MAX) ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(v));
  }
  const int64_t v = it->get<int64_t>();
  return v < 0 ? std::nullopt : std::optional<int64_t>(v);
}

// One entry of "thunks", as the page wants it, or what is wrong with it.
absl::StatusOr<nlohmann::ordered_json> PageThunkTime(const nlohmann::json& t, size_t i) {
  const std::string where = absl::StrCat("thunks[", i, "]");
  if (!t.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " is not an object"));
  const std::optional<int64_t> position = CountField(t, "position");
  const std::optional<std::string> name = StringField(t, "name"), kind = StringField(t, "kind"),
                                   kernel = StringField(t, "kernel");
  const std::optional<double> us = NonNegativeField(t, "us_per_call"), floor_us = NonNegativeField(t, "floor_us"),
                              runs = NonNegativeField(t, "runs_per_call");
  const char* missing = !position   ? "position (an integer >= 0)"
                        : !name     ? "name (a string)"
                        : !kind     ? "kind (a string)"
                        : !kernel   ? "kernel (a string)"
                        : !us       ? "us_per_call (a number >= 0)"
                        : !floor_us ? "floor_us (a number >= 0)"
                        : !runs     ? "runs_per_call (a number >= 0)"
                                    : nullptr;
  if (missing != nullptr) return absl::InvalidArgumentError(absl::StrCat(where, ": missing or wrong ", missing));
  return nlohmann::ordered_json{{"position", *position}, {"name", *name}, {"kind", *kind}, {"kernel", *kernel},
                                {"us", *us}, {"floor_us", *floor_us}, {"runs", *runs}};
}

// JSON text that can sit inside <script>: '<', '>' and '&' occur only inside strings there,
// where \u003c and friends mean the same characters.
std::string ScriptSafeJson(const nlohmann::ordered_json& j) {
  std::string out;
  for (char c : j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) {
    if (c == '<' || c == '>' || c == '&') out += absl::StrFormat("\\u%04x", static_cast<int>(c));
    else out.push_back(c);
  }
  return out;
}

}  // namespace

std::string ThunkTimesFileName(int64_t module_id, const std::string& module_name) {
  std::string name = DumpFileName(module_id, module_name, "thunk_times");
  // DumpFileName gives module_NNNN.NAME.thunk_times.txt: the file is JSON.
  if (name.size() > 4 && name.substr(name.size() - 4) == ".txt") name = name.substr(0, name.size() - 4);
  return name + ".json";
}

absl::StatusOr<std::string> ReadThunkTimesForPage(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();  // names `path`
  auto bad = [&](const std::string& what) { return absl::InvalidArgumentError(absl::StrCat(path, ": ", what)); };
  absl::StatusOr<nlohmann::json> doc = ParseJson(*text);
  if (!doc.ok()) return bad(std::string(doc.status().message()));
  if (!doc->is_object()) return bad("not a JSON object");
  if (StringField(*doc, "format") != "hloc-thunk-times/1")
    return bad("no \"format\": \"hloc-thunk-times/1\" (not written by hloc run --per-thunk --dump-to)");
  const std::optional<std::string> device = StringField(*doc, "device");
  const std::optional<int64_t> calls = CountField(*doc, "calls");
  const std::optional<double> total = NonNegativeField(*doc, "total_us_per_call");
  auto thunks = doc->find("thunks");
  if (!device) return bad("missing or wrong device (a string)");
  if (!calls || *calls == 0) return bad("missing or wrong calls (an integer >= 1)");
  if (!total) return bad("missing or wrong total_us_per_call (a number >= 0)");
  if (thunks == doc->end() || !thunks->is_array()) return bad("missing or wrong thunks (an array)");
  nlohmann::ordered_json page = {{"file", path},
                                 {"device", *device},
                                 {"profile", StringField(*doc, "profile").value_or("")},
                                 {"calls", *calls},
                                 {"total_us", *total},
                                 {"thunks", nlohmann::ordered_json::array()}};
  for (size_t i = 0; i < thunks->size(); ++i) {
    absl::StatusOr<nlohmann::ordered_json> t = PageThunkTime((*thunks)[i], i);
    if (!t.ok()) return bad(std::string(t.status().message()));
    page["thunks"].push_back(std::move(*t));
  }
  return ScriptSafeJson(page);
}

std::string RenderHtmlReport(const HloModule& module, const CompileRecorder& r, const HtmlReportExtras& extras) {
  std::string j = "{";
  absl::StrAppend(&j, "\"module\":", Json(module.name()), ",\"scheduled\":", module.is_scheduled() ? "true" : "false");
  // Snapshots of the module text, shared by the passes that did not change it.
  j += ",\"snapshots\":[";
  for (size_t i = 0; i < r.snapshots.size(); ++i) absl::StrAppend(&j, i ? "," : "", Json(r.snapshots[i]));
  j += "],\"passes\":[";
  for (size_t i = 0; i < r.passes.size(); ++i) {
    const CompileRecorder::PassStep& p = r.passes[i];
    absl::StrAppend(&j, i ? "," : "", "{\"path\":", Json(p.path), ",\"pass\":", Json(p.pass),
                    ",\"changed\":", p.changed ? "true" : "false", ",\"seconds\":", Num(p.seconds),
                    ",\"before\":", p.before, ",\"after\":", p.after, "}");
  }
  j += "],\"firings\":[";
  for (size_t i = 0; i < r.firings.size(); ++i) {
    const CompileRecorder::RuleFiring& f = r.firings[i];
    absl::StrAppend(&j, i ? "," : "", "{\"pass\":", f.pass, ",\"rule\":", Json(f.rule), ",\"file\":", Json(f.file),
                    ",\"line\":", f.line, ",\"before\":", Json(f.before), ",\"after\":", Json(f.after), "}");
  }
  j += "],\"fusions\":[";
  for (size_t i = 0; i < r.fusions.size(); ++i) {
    const CompileRecorder::FusionEvent& f = r.fusions[i];
    absl::StrAppend(&j, i ? "," : "", "{\"pass\":", f.pass, ",\"producer\":", Json(f.producer),
                    ",\"consumers\":", Json(f.consumers), ",\"fused\":", f.fused ? "true" : "false",
                    ",\"unfused_us\":", Num(f.time_unfused_us), ",\"fused_us\":", Num(f.time_fused_us),
                    ",\"benefit_us\":", Num(f.benefit_us), ",\"reason\":", Json(f.reason), ",\"record\":",
                    Json(f.record), ",\"file\":", Json(f.file), ",\"line\":", f.line, "}");
  }
  absl::StrAppend(&j, "],\"dropped_fusion_events\":", r.dropped_fusion_events);

  // The fusion instructions of the final module, and live ranges: the buffer assignment's own
  // (compile), else approximated over the entry's order (its schedule when the module is
  // scheduled): defined at its position, live to its last user's.
  j += ",\"final_fusions\":[";
  bool first = true;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kFusion) continue;
      const HloComputation* body = inst->fused_instructions_computation();
      absl::StrAppend(&j, first ? "" : ",", "{\"name\":", Json(inst->name()), ",\"kind\":",
                      Json(FusionKindName(inst->attrs().fusion_kind)), ",\"computation\":", Json(c->name()),
                      ",\"ops\":", body != nullptr ? body->instructions().size() : 0, "}");
      first = false;
    }
  }
  j += "],\"live_ranges\":[";
  if (!extras.live_ranges.empty()) {
    first = true;
    int64_t shown = 0;
    for (const HtmlReportExtras::LiveRange& l : extras.live_ranges) {
      if (++shown > 600) break;
      absl::StrAppend(&j, first ? "" : ",", "{\"name\":", Json(l.name), ",\"op\":", Json(l.op), ",\"bytes\":", l.bytes,
                      ",\"allocation\":", l.allocation, ",\"offset\":", l.offset, ",\"start\":", l.start,
                      ",\"end\":", l.end, "}");
      first = false;
    }
    absl::StrAppend(&j, "],\"live_ranges_exact\":true,\"live_ranges_total\":", extras.live_ranges.size(),
                    ",\"schedule_length\":", extras.timeline_length);
  } else if (const HloComputation* entry = module.entry_computation()) {
    std::map<const HloInstruction*, int64_t> position;
    for (const auto& inst : entry->instructions()) position[inst.get()] = static_cast<int64_t>(position.size());
    const int64_t n = static_cast<int64_t>(position.size());
    first = true;
    int64_t shown = 0;
    for (const auto& inst : entry->instructions()) {
      const HloOpcode op = inst->opcode();
      if (!inst->shape().IsArray() || op == HloOpcode::kBitcast || op == HloOpcode::kGetTupleElement) continue;
      if (++shown > 600) break;
      const int64_t start = position[inst.get()];
      int64_t end = inst.get() == entry->root_instruction() ? n : start;
      for (const HloInstruction* u : inst->users())
        if (auto it = position.find(u); it != position.end()) end = std::max(end, it->second);
      absl::StrAppend(&j, first ? "" : ",", "{\"name\":", Json(inst->name()), ",\"op\":",
                      Json(std::string(HloOpcodeString(op))), ",\"bytes\":", inst->shape().byte_size(),
                      ",\"start\":", start, ",\"end\":", end, "}");
      first = false;
    }
    absl::StrAppend(&j, "],\"live_ranges_exact\":false,\"schedule_length\":", n);
  } else {
    j += "],\"live_ranges_exact\":false,\"schedule_length\":0";
  }
  const std::string dot = FusionGraphDot(module, 400);
  absl::StrAppend(&j, ",\"graph_svg\":", Json(RenderDot(dot)), ",\"graph_dot\":", Json(dot));
  absl::StrAppend(&j, ",\"buffer_assignment\":", Json(extras.buffer_assignment_text),
                  ",\"thunk_sequence\":", Json(extras.thunk_sequence_text), ",\"thunk_times\":",
                  extras.thunk_times_json.empty() ? std::string("null") : extras.thunk_times_json, "}");

  std::string page = kHtmlReportPage;
  const std::string marker = "/*HLOC_DATA*/";
  page.replace(page.find(marker), marker.size(), j);
  const std::string title_marker = "HLOC_TITLE";
  std::string title;
  for (char c : module.name()) title += (c == '<' || c == '>' || c == '&') ? '_' : c;
  for (size_t at = page.find(title_marker); at != std::string::npos; at = page.find(title_marker, at + title.size()))
    page.replace(at, title_marker.size(), title);
  return page;
}

absl::Status WriteHtmlReport(const std::string& dump_to, int64_t module_id, const HloModule& module,
                             const CompileRecorder& recorder, const HtmlReportExtras& extras) {
  std::string name = DumpFileName(module_id, module.name(), "html");
  // DumpFileName gives module_NNNN.NAME.html.txt: drop the ".txt".
  if (name.size() > 4 && name.substr(name.size() - 4) == ".txt") name = name.substr(0, name.size() - 4);
  std::error_code ec;
  std::filesystem::create_directories(dump_to, ec);
  const std::string page_path = (std::filesystem::path(dump_to) / name).string();
  if (extras.thunk_sequence_text.empty() || !extras.thunk_times_json.empty())
    return WriteFileAtomically(page_path, RenderHtmlReport(module, recorder, extras));
  // A bench run into the same folder left its times: show them (a bad file only loses them).
  HtmlReportExtras with_times = extras;
  const std::string times_path = (std::filesystem::path(dump_to) / ThunkTimesFileName(module_id, module.name())).string();
  if (std::filesystem::exists(times_path, ec)) {
    absl::StatusOr<std::string> times = ReadThunkTimesForPage(times_path);
    if (times.ok()) {
      with_times.thunk_times_json = *times;
    } else {
      std::cerr << "hloc: warning: " << times.status().message() << "; the page shows no per-thunk times\n";
    }
  }
  return WriteFileAtomically(page_path, RenderHtmlReport(module, recorder, with_times));
}

}  // namespace hloc
