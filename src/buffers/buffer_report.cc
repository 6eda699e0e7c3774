// Buffer-assignment dump totals and the temp-bytes table against XLA's dumps.
#include "buffers/buffer_report.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "buffers/buffer_assignment.h"
#include "buffers/buffer_assignment_checker.h"
#include "ir/hlo_parser.h"
#include "support/file_io.h"

namespace hloc {

absl::StatusOr<BufferDumpTotals> ParseBufferAssignmentDump(const std::string& text) {
  BufferDumpTotals t;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "allocation ")) continue;
    size_t p = line.find(": size ");
    if (p == absl::string_view::npos) continue;
    absl::string_view rest = line.substr(p + 7);
    size_t comma = rest.find_first_of(",:");
    int64_t size = 0;
    if (!absl::SimpleAtoi(rest.substr(0, comma), &size)) continue;
    ++t.allocations;
    t.total_bytes += size;
    if (absl::StrContains(line, "preallocated-temp")) t.temp_bytes += size;
    else if (absl::StrContains(line, ", parameter ")) t.parameter_bytes += size;
    else if (absl::StrContains(line, ", constant")) t.constant_bytes += size;
    else if (absl::StrContains(line, "thread-local")) t.thread_local_bytes += size;
    else if (absl::StrContains(line, "maybe-live-out")) t.output_bytes += size;
  }
  if (t.allocations == 0) return absl::InvalidArgumentError("no 'allocation N: size S' lines in the dump");
  return t;
}


std::vector<TempBytesRow> CompareTempBytesWithXla(const std::string& corpus_dir, int64_t alignment) {
  namespace fs = std::filesystem;
  std::vector<TempBytesRow> rows;
  std::vector<std::string> names;
  std::error_code ec;
  const std::string suffix = ".after_optimizations.txt";
  for (const auto& e : fs::directory_iterator(corpus_dir, ec)) {
    std::string f = e.path().filename().string();
    if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(f.substr(0, f.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    TempBytesRow row;
    row.module = name;
    absl::StatusOr<std::string> dump = ReadWholeFile(absl::StrCat(corpus_dir, "/", name, ".after_optimizations-buffer-assignment.txt"));
    if (!dump.ok()) continue;
    absl::StatusOr<BufferDumpTotals> xla = ParseBufferAssignmentDump(*dump);
    if (xla.ok()) {
      row.xla_temp = xla->temp_bytes;
      row.xla_total = xla->total_bytes;
    }
    absl::StatusOr<std::string> hlo = ReadWholeFile(absl::StrCat(corpus_dir, "/", name, suffix));
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        hlo.ok() ? ParseHloModule(*hlo) : absl::StatusOr<std::unique_ptr<HloModule>>(hlo.status());
    if (!module.ok()) {
      row.error = std::string(module.status().message());
    } else {
      BufferAssignmentOptions options;
      options.alignment = alignment;
      absl::StatusOr<std::unique_ptr<BufferAssignment>> ba = AssignBuffers(**module, options);
      if (!ba.ok()) {
        row.error = std::string(ba.status().message());
      } else {
        row.ours_temp = (*ba)->stats().temp_bytes;
        row.ours_total = (*ba)->stats().total_allocation_bytes;
        if (absl::Status s = CheckBufferAssignment(**module, **ba); !s.ok())
          row.error = absl::StrCat("checker: ", s.message());
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string FormatTempBytesTable(const std::vector<TempBytesRow>& rows) {
  std::string out =
      "| module | XLA temp bytes | hloc temp bytes | hloc/XLA | XLA total | hloc total | note |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
  int64_t sx = 0, so = 0;
  for (const TempBytesRow& r : rows) {
    std::string ratio = (r.xla_temp > 0 && r.ours_temp >= 0)
                            ? absl::StrFormat("%.2f", static_cast<double>(r.ours_temp) / r.xla_temp)
                            : (r.xla_temp == 0 && r.ours_temp == 0 ? "=" : "-");
    absl::StrAppend(&out, "| ", r.module, " | ", r.xla_temp, " | ", r.ours_temp, " | ", ratio, " | ", r.xla_total,
                    " | ", r.ours_total, " | ", r.error.substr(0, 120), " |\n");
    if (r.ours_temp >= 0 && r.xla_temp >= 0) {
      sx += r.xla_temp;
      so += r.ours_temp;
    }
  }
  absl::StrAppend(&out, "| **sum** | ", sx, " | ", so, " | ",
                  sx > 0 ? absl::StrFormat("%.2f", static_cast<double>(so) / sx) : "-", " | | | |\n");
  return out;
}

}  // namespace hloc
