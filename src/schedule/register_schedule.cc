// Registration of the scheduling passes (XLA's names and options), and hlo-memory-scheduler.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "engine/profile.h"
#include "schedule/buffer_model.h"
#include "schedule/hlo_scheduling.h"
#include "schedule/schedule_passes.h"

namespace hloc {

namespace {

int64_t IntOption(const PassOptions& o, const std::string& name, int64_t def) {
  return o.Has(name) ? o.GetInt(name) : def;
}
bool BoolOption(const PassOptions& o, const std::string& name, bool def) { return o.Has(name) ? o.GetBool(name) : def; }

std::vector<HloInstruction*> CurrentOrder(const HloComputation& c) {
  std::vector<HloInstruction*> order;
  for (const auto& inst : c.instructions()) order.push_back(inst.get());
  return order;
}

}  // namespace

absl::StatusOr<std::string> ScheduleReport(HloModule& module) {
  absl::StatusOr<std::vector<std::pair<std::string, MemorySchedulerResult>>> results = ScheduleModule(module);
  if (!results.ok()) return results.status();
  std::string out;
  for (const auto& [name, r] : *results) {
    absl::StrAppend(&out, "hlo-memory-scheduler: module=", module.name(), " computation=", name,
                    " algorithm=", r.algorithm, " peak_bytes=", r.peak_memory_bytes, " (",
                    schedule_internal::HumanBytes(r.peak_memory_bytes), ") list=", r.list_peak_bytes,
                    " dfs=", r.dfs_peak_bytes, " post-order=", r.post_order_peak_bytes, "\n");
  }
  return out;
}

absl::StatusOr<bool> HloMemorySchedulerPass::Run(HloModule& module, PassContext& context) {
  std::vector<std::vector<HloInstruction*>> before;
  for (const auto& c : module.computations()) before.push_back(CurrentOrder(*c));
  const bool was_scheduled = module.is_scheduled();
  absl::StatusOr<std::string> report = ScheduleReport(module);
  if (!report.ok()) return report.status();
  if (report_) (context.trace_out ? *context.trace_out : std::cerr) << *report;
  bool changed = !was_scheduled;
  for (size_t i = 0; i < module.computations().size() && !changed; ++i)
    changed = before[i] != CurrentOrder(*module.computations()[i]);
  return changed;
}

namespace {

// <0: the profile's memory size (no profile: no limit); otherwise as given (0: no limit).
int64_t ResolveLimit(int64_t option, const PassContext& context) {
  if (option >= 0) return option;
  return context.profile != nullptr ? context.profile->memory_size : 0;
}

}  // namespace

absl::StatusOr<bool> HloRematerializationPass::Run(HloModule& module, PassContext& context) {
  const int64_t limit = ResolveLimit(options_.memory_limit_bytes, context);
  std::ostream& out = context.trace_out ? *context.trace_out : std::cerr;
  if (limit <= 0) {
    // No limit: nothing to recompute; a module that is not scheduled yet gets its schedule,
    // since the passes after this one expect one.
    if (module.is_scheduled()) return false;
    absl::StatusOr<std::string> report = ScheduleReport(module);
    if (!report.ok()) return report.status();
    if (options_.report) out << "hlo-rematerialization: module=" << module.name() << " no memory limit\n";
    return true;
  }
  const bool was_scheduled = module.is_scheduled();
  absl::StatusOr<RematerializationStats> stats = Rematerialize(module, limit, options_.max_chain_length);
  if (!stats.ok()) return stats.status();
  if (options_.report) {
    out << "hlo-rematerialization: module=" << module.name() << " limit=" << stats->limit
        << " peak_before=" << stats->peak_before << " peak_after=" << stats->peak_after
        << " rematerialized=" << stats->rematerialized << " removed=" << stats->removed << "\n";
  }
  return !was_scheduled || stats->rematerialized > 0 || stats->removed > 0;
}

absl::StatusOr<bool> LatencyHidingSchedulerPass::Run(HloModule& module, PassContext& context) {
  const int64_t limit = ResolveLimit(options_.memory_limit_bytes, context);
  const bool was_scheduled = module.is_scheduled();
  std::ostream* out = options_.report ? (context.trace_out ? context.trace_out : &std::cerr) : nullptr;
  const LatencyEstimator estimator =
      LatencyEstimator::FromProfile(context.profile, options_.async_latency, DeviceCountsOf(module));
  std::string schedule;
  absl::StatusOr<int64_t> moved =
      ScheduleAsync(module, limit, estimator, out, context.write_dump ? &schedule : nullptr);
  if (!moved.ok()) return moved.status();
  if (context.write_dump && schedule.find("computation %") != std::string::npos)
    if (absl::Status s = context.write_dump("latency-hiding-scheduler", schedule); !s.ok()) return s;
  return !was_scheduled || *moved > 0;
}

void RegisterSchedulePasses(PassRegistry& registry) {
  registry.Register(PassInfo{
      HloMemorySchedulerPass::kName,
      "schedules every sequential computation with the list, DFS and post-order schedulers and keeps the "
      "order with the least heap-simulated peak memory; sets is_scheduled",
      {{"report", OptionType::kBool, OptionValue(false),
        "print the chosen scheduler and the peaks of each computation to stderr"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<HloMemorySchedulerPass>(BoolOption(o, "report", false));
      }});

  registry.Register(PassInfo{
      HloRematerializationPass::kName,
      "recomputes cheap values (elementwise, broadcast, iota, bitcast, fusions of those) next to their later "
      "uses until the scheduled module's peak memory fits the limit",
      {{"memory_limit_bytes", OptionType::kInt, OptionValue(int64_t{-1}),
        "peak-memory limit in bytes; -1: the profile's memory_size (none without a profile); 0: no limit"},
       {"max_chain_length", OptionType::kInt, OptionValue(int64_t{3}),
        "most instructions recomputed together for one use (e.g. broadcast -> multiply)"},
       {"report", OptionType::kBool, OptionValue(false), "print the peak before and after to stderr"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        RematerializationOptions options;
        options.memory_limit_bytes = IntOption(o, "memory_limit_bytes", -1);
        options.max_chain_length = IntOption(o, "max_chain_length", 3);
        options.report = BoolOption(o, "report", false);
        return std::make_unique<HloRematerializationPass>(options);
      }});

  registry.Register(PassInfo{
      LatencyHidingSchedulerPass::kName,
      "moves async starts (all-reduce, all-gather, collective-permute, copy, async) early and their dones "
      "late, as far as their estimated latency needs and the memory limit allows",
      {{"memory_limit_bytes", OptionType::kInt, OptionValue(int64_t{-1}),
        "peak-memory limit in bytes; -1: the profile's memory_size (none without a profile); 0: no limit"},
       {"async_latency", OptionType::kInt, OptionValue(int64_t{50}),
        "without profile link numbers: the estimated cost of an async operation, in units where a cheap "
        "instruction costs 1 and a fusion 10 (with them, estimates are times from the profile)"},
       {"report", OptionType::kBool, OptionValue(false), "print each move to stderr"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        LatencyHidingOptions options;
        options.memory_limit_bytes = IntOption(o, "memory_limit_bytes", -1);
        options.async_latency = IntOption(o, "async_latency", 50);
        options.report = BoolOption(o, "report", false);
        return std::make_unique<LatencyHidingSchedulerPass>(options);
      }});
}

}  // namespace hloc
