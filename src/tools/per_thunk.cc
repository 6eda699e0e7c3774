#include "tools/per_thunk.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace hloc {
namespace {

// One thunk's numbers per call of the module (a while body's thunk runs several times a call).
struct PerCall {
  double us, floor_us, runs;
};
PerCall PerCallOf(const runtime::ThunkTime& t, int64_t calls, const HardwareProfile& hw) {
  const double runs = static_cast<double>(t.executions) / static_cast<double>(calls);
  return {t.total_us / static_cast<double>(calls), FloorOf(*t.thunk).floor_us(hw) * runs, runs};
}

}  // namespace

double ThunkFloor::floor_us(const HardwareProfile& hw) const {
  const double mem = hw.memory_bandwidth > 0 ? bytes / hw.memory_bandwidth : 0;
  const double peak = hw.peak_flops_bf16 > 0 ? hw.peak_flops_bf16 : hw.peak_flops_f32;
  const double math = peak > 0 ? flops / peak : 0;
  return 1e6 * std::max(mem, math);
}

ThunkFloor FloorOf(const runtime::Thunk& t) {
  ThunkFloor f;
  f.bytes = static_cast<double>(runtime::DistinctArgumentBytes(t));
  if (t.kind == runtime::ThunkKind::kCopy && t.size > 0) f.bytes = 2.0 * static_cast<double>(t.size);
  if (t.kind == runtime::ThunkKind::kGemm)
    f.flops = 2.0 * static_cast<double>(t.gemm.batch) * static_cast<double>(t.gemm.m) * static_cast<double>(t.gemm.n) *
              static_cast<double>(t.gemm.k);
  return f;
}

std::string PerThunkReport(const std::vector<runtime::ThunkTime>& times, int64_t calls, const HardwareProfile& hw) {
  struct Row {
    const runtime::ThunkTime* t;
    double us, floor_us, per_call;
  };
  std::vector<Row> rows;
  double total = 0;
  for (const runtime::ThunkTime& t : times) {
    const PerCall p = PerCallOf(t, calls, hw);
    rows.push_back({&t, p.us, p.floor_us, p.runs});
    total += p.us;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.us > b.us; });
  std::string out = absl::StrFormat("per-thunk: %d thunks, %.1f us per call in all (%s: %.2f TB/s, %.0f TFLOP/s)\n",
                                    rows.size(), total, hw.name, hw.memory_bandwidth / 1e12, hw.peak_flops_bf16 / 1e12);
  absl::StrAppend(&out, absl::StrFormat("  %10s %10s %7s %6s  %-13s %s\n", "us/call", "floor us", "x floor", "runs",
                                        "kind", "thunk (kernel)"));
  const Row* worst = nullptr;
  for (const Row& r : rows) {
    const runtime::Thunk& t = *r.t->thunk;
    const std::string x = r.floor_us > 0 ? absl::StrFormat("%7.1f", r.us / r.floor_us) : std::string("      -");
    absl::StrAppend(&out, absl::StrFormat("  %10.2f %10.2f %s %6.0f  %-13s %s%s\n", r.us, r.floor_us, x, r.per_call,
                                          std::string(runtime::ThunkKindName(t.kind)), t.name,
                                          t.kernel_name.empty() ? "" : " (" + t.kernel_name + ")"));
    if (worst == nullptr || r.us - r.floor_us > worst->us - worst->floor_us) worst = &r;
  }
  if (worst != nullptr) {
    absl::StrAppend(&out, absl::StrFormat("worst thunk: %s %s time_us=%.2f floor_us=%.2f\n", worst->t->thunk->name,
                                          std::string(runtime::ThunkKindName(worst->t->thunk->kind)), worst->us,
                                          worst->floor_us));
  }
  return out;
}

std::string ThunkTimesJson(const std::vector<runtime::ThunkTime>& times, int64_t calls, const HardwareProfile& hw,
                           const std::string& device, const std::string& module_name,
                           const runtime::ThunkSequence& top) {
  // Joined to a compile's thunk_sequence.txt by these numbers (a bench run writes no dumps).
  const std::vector<std::pair<const runtime::Thunk*, int64_t>> sorted = runtime::NumberThunks(top);
  const std::map<const runtime::Thunk*, int64_t> numbers(sorted.begin(), sorted.end());
  nlohmann::ordered_json thunks = nlohmann::ordered_json::array();
  double total = 0;
  for (const runtime::ThunkTime& t : times) {
    const PerCall p = PerCallOf(t, calls, hw);
    auto it = numbers.find(t.thunk);
    thunks.push_back({{"position", it == numbers.end() ? 0 : it->second},
                      {"name", t.thunk->name},
                      {"kind", std::string(runtime::ThunkKindName(t.thunk->kind))},
                      {"kernel", t.thunk->kernel_name},
                      {"us_per_call", p.us},
                      {"floor_us", p.floor_us},
                      {"runs_per_call", p.runs}});
    total += p.us;
  }
  nlohmann::ordered_json doc = {{"format", "hloc-thunk-times/1"}, {"module", module_name}, {"device", device},
                        {"profile", hw.name},           {"calls", calls},        {"total_us_per_call", total},
                        {"thunks", std::move(thunks)}};
  // Names are the compiler's, but a module's name is the user's: never throw on bad UTF-8.
  return doc.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace hloc
