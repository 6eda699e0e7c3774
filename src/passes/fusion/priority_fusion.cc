#include "passes/fusion/priority_fusion.h"

#include "ir/fusion_backend_config.h"
#include "passes/fusion/fusion_emitter_assignment.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/compile_recorder.h"
#include "engine/yaml_util.h"
#include "passes/fusion/fusion_analysis.h"
#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_legality.h"
#include "passes/fusion/gpu_cost_model.h"
#include "passes/fusion/horizontal_in_place_fusion.h"
#include "passes/fusion/multi_output_fusion.h"
#include "passes/fusion/pair_signature.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;
using fusion::FusionDecision;

// A tiny negative benefit is rounding, not a loss.
constexpr double kMinBenefit = -1e-12;

// The distinct users of a producer, in use order. A set, not a scan of `out`: a constant
// shared by every layer has hundreds of users and is looked at after each of their fusions.
// Most producers have a few users: those are compared in a list, without the set.
std::vector<HloInstruction*> Consumers(const HloInstruction* producer) {
  constexpr size_t kMaxListed = 16;
  std::vector<HloInstruction*> out;
  const std::vector<HloInstruction*>& users = producer->users();
  if (users.size() <= kMaxListed) {
    for (HloInstruction* u : users)
      if (std::find(out.begin(), out.end(), u) == out.end()) out.push_back(u);
    return out;
  }
  absl::flat_hash_set<const HloInstruction*> seen;
  for (HloInstruction* u : users)
    if (seen.insert(u).second) out.push_back(u);
  return out;
}

bool IsCandidateProducer(const HloInstruction* inst) {
  switch (inst->opcode()) {
    case O::kParameter: case O::kTuple: case O::kGetTupleElement:
      return false;
    default:
      return !inst->users().empty() && !inst->IsRoot();
  }
}

struct Priority {
  bool fusible = false;
  double benefit = 0;
  FusionDecision refusal;
  HloInstruction* refused_consumer = nullptr;
  fusion::FusionRunTimes times;
};

// What ComputePriority learns about one (producer, consumer) pair: the legality verdict and
// the two cost terms, kept while the pair's signature (pair_signature.h) is unchanged. A
// producer shared by every layer (a constant, a mask) is re-ranked after each of its consumers
// fuses, and would otherwise re-judge all of them each time.
class PairCache {
 public:
  struct Facts {
    std::vector<int64_t> signature;
    std::optional<FusionDecision> decision;
    std::optional<std::pair<double, double>> exec_times;  // {unfused consumer, fused}
  };
  Facts& Lookup(const std::vector<int64_t>& producer_signature, const HloInstruction* producer,
                const HloInstruction* consumer) {
    // In a buffer kept between calls: a shared producer's hundreds of consumers are looked up
    // on every re-rank, and a vector allocated per lookup was a good part of it.
    sig_.assign(producer_signature.begin(), producer_signature.end());
    fusion::AppendPairSignature(consumer, sig_);
    Facts& f = facts_[{producer->unique_id(), consumer->unique_id()}];
    if (f.signature != sig_) f = Facts{sig_, std::nullopt, std::nullopt};
    return f;
  }

 private:
  absl::node_hash_map<std::pair<int64_t, int64_t>, Facts> facts_;  // stable references
  std::vector<int64_t> sig_;
};

// A node's own Estimate, kept while the node and its operands are the same instructions (what
// Estimate reads: the node's body, shape and operands' shapes; unique ids are never reused and
// a fusion grown in place gets a new one). Re-ranking a producer estimates it again, and a
// fusion with an operand from every layer was estimated again for each of its operands after
// every merge into it.
class EstimateCache {
 public:
  explicit EstimateCache(const fusion::GpuCostModel& cost) : cost_(cost) {}
  const fusion::KernelEstimate& Get(const HloInstruction* node) {
    if (node->unique_id() < 0) return scratch_ = cost_.Estimate(node);
    Entry& e = entries_[node->unique_id()];
    bool same = e.valid && e.operands.size() == node->operands().size();
    for (size_t j = 0; same && j < e.operands.size(); ++j) same = e.operands[j] == node->operand(j)->unique_id();
    if (!same) {
      e.operands.clear();
      for (const HloInstruction* op : node->operands()) e.operands.push_back(op->unique_id());
      e.estimate = cost_.Estimate(node);
      e.valid = true;
    }
    return e.estimate;
  }

 private:
  struct Entry {
    bool valid = false;
    std::vector<int64_t> operands;
    fusion::KernelEstimate estimate;
  };
  const fusion::GpuCostModel& cost_;
  absl::node_hash_map<int64_t, Entry> entries_;  // stable references
  fusion::KernelEstimate scratch_;
};

// --trace-rules: a fusion's root opcode ("fusion.3 [reduce]"), and the consumers' names.
std::string DescribeRoot(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kFusion) return "";
  return absl::StrCat(" [", std::string(HloOpcodeString(i->fused_instructions_computation()->root_instruction()->opcode())), "]");
}
std::string ConsumerNames(const std::vector<HloInstruction*>& consumers) {
  std::vector<std::string> names;
  for (const HloInstruction* c : consumers) names.push_back(absl::StrCat(c->name(), DescribeRoot(c)));
  return absl::StrJoin(names, ", ");
}

Priority ComputePriority(HloInstruction* producer, fusion::FusionLegality& legality,
                         const fusion::GpuCostModel& cost, PairCache* cache = nullptr,
                         EstimateCache* estimates = nullptr) {
  Priority p;
  if (!IsCandidateProducer(producer)) {
    p.refusal = FusionDecision::Refuse("the producer has no users to fuse into, or is a parameter/tuple");
    return p;
  }
  std::vector<HloInstruction*> consumers = Consumers(producer);
  std::vector<int64_t> producer_signature;
  if (cache != nullptr) fusion::AppendPairSignature(producer, producer_signature);
  std::vector<PairCache::Facts*> facts;
  for (HloInstruction* c : consumers) {
    PairCache::Facts* f = cache != nullptr ? &cache->Lookup(producer_signature, producer, c) : nullptr;
    if (f != nullptr && !f->decision) f->decision = legality.CanFuse(producer, c);
    FusionDecision d = f != nullptr ? *f->decision : legality.CanFuse(producer, c);
    if (!d.ok) {
      p.refusal = d;
      p.refused_consumer = c;
      return p;
    }
    facts.push_back(f);
  }
  if (cache == nullptr) {
    p.times = cost.EstimateRunTimes(producer, consumers);
  } else {
    std::vector<std::pair<double, double>> times;
    for (size_t i = 0; i < consumers.size(); ++i) {
      if (!facts[i]->exec_times) {
        const double unfused = estimates != nullptr ? estimates->Get(consumers[i]).exec_time
                                                    : cost.Estimate(consumers[i]).exec_time;
        facts[i]->exec_times = {unfused, cost.EstimateFused(producer, consumers[i]).exec_time};
      }
      times.push_back(*facts[i]->exec_times);
    }
    p.times = estimates != nullptr ? cost.RunTimesFrom(estimates->Get(producer), times)
                                   : cost.RunTimesFrom(producer, times);
  }
  p.benefit = p.times.benefit();
  p.fusible = true;
  return p;
}

class ComputationFusion {
 public:
  ComputationFusion(HloComputation& comp, fusion::FusionLegality& legality, const fusion::GpuCostModel& cost,
                    fusion::FusionBuilder& builder, PassContext& context)
      : comp_(comp), legality_(legality), cost_(cost), builder_(builder), context_(context) {}

  absl::StatusOr<bool> Run() {
    for (HloInstruction* inst : comp_.MakeInstructionPostOrder()) Update(inst);
    bool changed = false;
    // Each fusion removes at least one instruction, so this ends; the cap guards bugs (and says so).
    constexpr int64_t kMaxSteps = 1000000;
    int64_t steps = 0;
    for (; !queue_.empty() && steps < kMaxSteps; ++steps) {
      auto top = std::prev(queue_.end());
      HloInstruction* producer = top->second;
      Erase(producer);
      Priority p = ComputePriority(producer, legality_, cost_, &pairs_, &estimates_);
      if (!p.fusible || p.benefit < kMinBenefit) {
        Record(producer, p, false);
        TraceRefusal(producer, p);
        continue;
      }
      std::vector<HloInstruction*> consumers = Consumers(producer);
      Record(producer, p, true);
      if (context_.trace_rules && context_.trace_out)
        *context_.trace_out << "priority-fusion: " << producer->name() << DescribeRoot(producer) << " into "
                            << consumers.size() << " consumer(s) (" << ConsumerNames(consumers) << "), benefit "
                            << absl::StrFormat("%.3f", p.benefit * 1e6) << " us\n";
      std::vector<HloInstruction*> touched;
      // Their facts go after the merges (replaced by the merged fusions): a consumer grown in
      // place hands its facts on to its new id (FusionFactsCache::GrewInPlace) during the merge.
      std::vector<int64_t> gone = {producer->unique_id()};
      for (HloInstruction* c : consumers) {
        Erase(c);
        gone.push_back(c->unique_id());
      }
      for (size_t i = 0; i < consumers.size(); ++i) {
        HloInstruction* c = consumers[i];
        absl::flat_hash_set<HloInstruction*> dup;
        if (i + 1 < consumers.size()) dup.insert(producer);
        absl::StatusOr<HloInstruction*> f = builder_.Merge({producer, c}, dup);
        if (!f.ok()) return f.status();
        touched.push_back(*f);
      }
      for (int64_t id : gone) facts_.Forget(id);
      changed = true;
      // Each instruction once: a producer shared by every layer (a constant, a mask) is an
      // operand of most of the new fusions, and re-ranking it walks all its consumers. The
      // graph does not change in between, so a second Update would compute the same priority.
      absl::flat_hash_set<const HloInstruction*> updated;
      for (HloInstruction* f : touched) {
        if (updated.insert(f).second) Update(f);
        for (HloInstruction* op : f->operands())
          if (updated.insert(op).second) Update(op);
      }
    }
    if (!queue_.empty())
      std::cerr << "hloc: note: priority-fusion stopped after " << kMaxSteps << " steps in " << comp_.name()
                << " with " << queue_.size() << " candidates left (its cap); continuing\n";
    // XLA fuses the remaining small constants into every kernel that reads them (they fold
    // into the code); a constant read by a plain instruction makes that a fusion too.
    absl::StatusOr<bool> constants = FuseScalarConstants();
    if (!constants.ok()) return constants.status();
    changed |= *constants;
    if (changed) {
      if (absl::Status s = fusion::EnsureDefinitionOrder(comp_); !s.ok()) return s;
    }
    return changed;
  }

  absl::StatusOr<bool> FuseScalarConstants() {
    std::vector<HloInstruction*> constants;
    for (HloInstruction* inst : comp_.MakeInstructionPostOrder())
      if (inst->opcode() == O::kConstant && fusion::ElementCount(inst->shape()) == 1 && inst->shape().IsArray() &&
          !inst->IsRoot())
        constants.push_back(inst);
    bool changed = false;
    for (HloInstruction* constant : constants) {
      std::vector<HloInstruction*> users;
      for (HloInstruction* u : Consumers(constant)) {
        if (!fusion::GpuCostModel::LaunchesKernel(u)) continue;
        if (legality_.CanFuse(constant, u, fusion::FusionUse::kConstantSweep).ok) users.push_back(u);
      }
      for (size_t i = 0; i < users.size(); ++i) {
        absl::flat_hash_set<HloInstruction*> dup;
        // Keep the original while anything else (a later user here, or an unfusible one) reads it.
        if (i + 1 < users.size() || constant->user_count() > 1) dup.insert(constant);
        const int64_t gone = users[i]->unique_id();
        absl::StatusOr<HloInstruction*> f = builder_.Merge({constant, users[i]}, dup);
        if (!f.ok()) return f.status();
        facts_.Forget(gone);
        changed = true;
      }
    }
    return changed;
  }

 private:
  // --dump-html: a fusion, a veto (with its record and line) or an unprofitable pair, with the
  // cost model's numbers. A producer with nothing to fuse into is not worth a row; a producer
  // refused again (it is re-ranked as its neighbours fuse) keeps one row, its latest refusal.
  void Record(HloInstruction* producer, const Priority& p, bool fused) {
    if (context_.recorder == nullptr || (!p.fusible && p.refused_consumer == nullptr)) return;
    std::vector<CompileRecorder::FusionEvent>& events = context_.recorder->fusions;
    CompileRecorder::FusionEvent e;
    e.producer = producer->name();
    if (p.refused_consumer != nullptr) {
      e.consumers = p.refused_consumer->name();
    } else {
      for (HloInstruction* c : Consumers(producer)) absl::StrAppend(&e.consumers, e.consumers.empty() ? "" : ",", c->name());
    }
    e.fused = fused;
    e.time_unfused_us = p.times.time_unfused * 1e6;
    e.time_fused_us = p.times.time_fused * 1e6;
    e.benefit_us = p.benefit * 1e6;
    if (!p.fusible) {
      e.reason = p.refusal.reason;
      e.record = p.refusal.rule;
      e.file = p.refusal.file;
      e.line = p.refusal.line;
    } else if (!fused) {
      e.reason = "the cost model finds the fused kernel slower";
    }
    if (!fused) {
      auto it = refusal_row_.find(e.producer);
      if (it != refusal_row_.end() && it->second < events.size() && !events[it->second].fused &&
          events[it->second].producer == e.producer) {
        e.pass = events[it->second].pass;
        events[it->second] = std::move(e);
        return;
      }
      refusal_row_[e.producer] = events.size();
    }
    context_.recorder->AddFusion(std::move(e));
  }

  // --trace-rules: each refused fusion once (a producer is re-ranked as its neighbours fuse):
  // the veto with its record and line, or the cost model's numbers. A producer with nothing to
  // fuse into is not listed.
  void TraceRefusal(HloInstruction* producer, const Priority& p) {
    if (!context_.trace_rules || context_.trace_out == nullptr) return;
    if (!p.fusible && p.refused_consumer == nullptr) return;
    std::string line;
    if (!p.fusible) {
      line = absl::StrCat("priority-fusion: refused ", producer->name(), " into ", p.refused_consumer->name(), ": ",
                          p.refusal.ToString());
    } else {
      line = absl::StrCat("priority-fusion: refused ", producer->name(), " into ", Consumers(producer).size(),
                          " consumer(s): not profitable ",
                          absl::StrFormat("(unfused %.3f us, fused %.3f us, benefit %.3f us)", p.times.time_unfused * 1e6,
                                          p.times.time_fused * 1e6, p.benefit * 1e6));
    }
    if (traced_refusals_.insert(line).second) *context_.trace_out << line << "\n";
  }

  void Erase(HloInstruction* inst) {
    auto it = key_.find(inst);
    if (it == key_.end()) return;
    queue_.erase(it->second);
    key_.erase(it);
  }
  void Update(HloInstruction* inst) {
    Erase(inst);
    if (!IsCandidateProducer(inst)) return;
    Priority p = ComputePriority(inst, legality_, cost_, &pairs_, &estimates_);
    if (!p.fusible || p.benefit < kMinBenefit) {
      Record(inst, p, false);
      TraceRefusal(inst, p);
      return;
    }
    // Ties go to the producer defined later (consumers first), as a post-order walk would.
    auto k = std::make_pair(p.benefit, inst->unique_id());
    queue_.emplace(k, inst);
    key_[inst] = k;
  }

  HloComputation& comp_;
  fusion::FusionLegality& legality_;
  const fusion::GpuCostModel& cost_;
  fusion::FusionBuilder& builder_;
  PassContext& context_;
  fusion::FusionFactsCache facts_;
  PairCache pairs_;
  EstimateCache estimates_{cost_};
  std::map<std::pair<double, int64_t>, HloInstruction*> queue_;
  absl::flat_hash_map<HloInstruction*, std::pair<double, int64_t>> key_;
  absl::flat_hash_map<std::string, size_t> refusal_row_;  // producer -> its refusal's row (--dump-html)
  std::set<std::string> traced_refusals_;                 // --trace-rules lines printed
};

}  // namespace

std::vector<HloComputation*> FusibleComputations(const HloModule& module) {
  auto callers = ComputeCallers(module);
  std::vector<HloComputation*> out;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    bool embedded = false;
    auto it = callers.find(comp);
    if (it != callers.end()) {
      for (const HloInstruction* caller : it->second) {
        const CallContext ctx = GetInstructionCallContext(caller->opcode());
        embedded |= ctx == CallContext::kEmbedded || caller->opcode() == O::kFusion;
      }
    }
    if (!embedded) out.push_back(comp);
  }
  return out;
}

absl::StatusOr<bool> PriorityFusion::Run(HloModule& module, PassContext& context) {
  fusion::FusionLegality legality(&context, target_);
  fusion::CostModelHardware hw = fusion::CostModelHardware::FromProfile(context.profile);
  if (target_ == "cpu" && !hw.is_cpu) {
    hw.is_cpu = true;
    hw.launch_overhead = 5e-8;  // what cpu.yaml sets (kernel_launch_overhead_s): no CPU profile here
  }
  fusion::GpuCostModel cost(hw);
  fusion::FusionBuilder builder(module);
  bool changed = false;
  for (HloComputation* comp : FusibleComputations(module)) {
    ComputationFusion run(*comp, legality, cost, builder, context);
    absl::StatusOr<bool> c = run.Run();
    if (!c.ok()) return c.status();
    changed |= *c;
  }
  return changed;
}

namespace {

// Names need only be unique within a computation: look in the computations fusion works on
// first (the entry, control-flow bodies), then in fused computations, then anywhere.
HloInstruction* FindInstruction(const HloModule& module, const std::string& name) {
  for (HloComputation* comp : FusibleComputations(module))
    if (HloInstruction* i = comp->GetInstructionWithName(name)) return i;
  for (const auto& comp : module.computations())
    if (comp->IsFusionComputation())
      if (HloInstruction* i = comp->GetInstructionWithName(name)) return i;
  for (const auto& comp : module.computations())
    if (HloInstruction* i = comp->GetInstructionWithName(name)) return i;
  return nullptr;
}

}  // namespace

InputInstruction FindInputInstruction(const HloModule& input, const std::string& name) {
  InputInstruction ref;
  ref.name = name;
  if (const HloInstruction* i = FindInstruction(input, name)) {
    ref.in_input = true;
    ref.opcode = std::string(HloOpcodeString(i->opcode()));
    ref.location = i->text_location();
  }
  return ref;
}

namespace {

// The instructions of `module` that stand for the input's `ref`: those with its place in the
// text (clones keep it, a rule's replacement takes the place of the root it rewrites), best
// first: the same name, the same opcode, then the last of a rule's new instructions (the one
// no other of them reads); a producer copied into several fusions has one per copy. A fusion instruction takes the place of its last member; it is not
// the member. Empty when the place is unknown or nothing has it.
std::vector<HloInstruction*> ByInputPlace(const HloModule& module, const InputInstruction& ref) {
  if (!ref.in_input || !ref.location.known()) return {};
  std::vector<std::pair<int, HloInstruction*>> scored;
  for (const auto& comp : module.computations()) {
    for (const auto& owned : comp->instructions()) {
      HloInstruction* i = owned.get();
      const TextLocation& l = i->text_location();
      if (l.line != ref.location.line || l.column != ref.location.column) continue;
      const bool same_opcode = HloOpcodeString(i->opcode()) == ref.opcode;
      if (i->opcode() == O::kFusion && !same_opcode) continue;
      bool top = true;
      for (const HloInstruction* u : i->users())
        top &= !(u->text_location().line == l.line && u->text_location().column == l.column);
      scored.push_back({(i->name() == ref.name ? 4 : 0) + (same_opcode ? 2 : 0) + (top ? 1 : 0), i});
    }
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<HloInstruction*> out;
  for (const auto& [score, i] : scored) out.push_back(i);
  return out;
}

// The kernel an instruction belongs to now: the fusion holding it, or itself.
HloInstruction* NodeOf(HloInstruction* i) {
  while (i->parent() != nullptr && i->parent()->IsFusionComputation() && i->parent()->FusionInstruction() != nullptr)
    i = i->parent()->FusionInstruction();
  return i;
}

bool Reads(const HloInstruction* consumer, const HloInstruction* producer) {
  return std::find(consumer->operands().begin(), consumer->operands().end(), producer) != consumer->operands().end();
}

std::string Where(const InputInstruction& ref) {
  return ref.location.known() ? absl::StrCat(" (input line ", ref.location.line, ")") : std::string();
}

}  // namespace

// The emitter codegen gives `node` as it stands (an unfused instruction: as a kernel of its own):
// the one fusion emitter analysis (codegen/gpu/fusion_emitter_kind.h, which
// fusion-emitter-assignment records and codegen dispatches on), named without its "__hloc_"
// prefix; "unknown" in a binary without GPU codegen.
std::string EmitterNameFor(const HloInstruction& node, const PassContext& context) {
  FusionEmitterAnalysis analysis = GetFusionEmitterAnalysis();
  if (analysis == nullptr) return "unknown";
  std::string kind = analysis(node, context.profile).kind;
  if (kind.rfind(kHlocFusionKindPrefix, 0) == 0) kind = kind.substr(kHlocFusionKindPrefix.size());
  return kind;
}

FusionExplanation ExplainFusion(HloModule& module, const InputInstruction& producer_ref,
                                const InputInstruction& consumer_ref, PassContext& context) {
  FusionExplanation result;
  std::string& out = result.text;
  // Candidates for each name: by the input's place in the text, else by name in the module.
  std::vector<HloInstruction*> cands[2];
  const InputInstruction* refs[2] = {&producer_ref, &consumer_ref};
  for (int k = 0; k < 2; ++k) {
    cands[k] = ByInputPlace(module, *refs[k]);
    if (cands[k].empty())
      if (HloInstruction* i = FindInstruction(module, refs[k]->name)) cands[k].push_back(i);
  }
  for (int k = 0; k < 2; ++k) {
    if (!cands[k].empty()) continue;
    const InputInstruction& ref = *refs[k];
    if (ref.in_input) {
      out = absl::StrCat("explain-fusion: '", ref.name, "'", Where(ref),
                         " is gone after the pipeline: a pass removed it or replaced it with an instruction from "
                         "elsewhere (run with --dump-to DIR --dump-pass-re . to see which)\n");
    } else {
      std::vector<std::string> names;
      for (const auto& comp : module.computations())
        for (const auto& i : comp->instructions()) names.push_back(i->name());
      out = absl::StrCat("explain-fusion: no instruction named '", ref.name, "' in the input or the optimized module",
                         yaml::DidYouMean(ref.name, names), "\n");
    }
    result.found = false;
    return result;
  }
  // The pair to judge: copies of both in one fused computation if any (fused), else one where the
  // consumer's kernel reads the producer's, else the best candidates.
  HloInstruction* producer = cands[0].front();
  HloInstruction* consumer = cands[1].front();
  bool fused_together = false, reading = false;
  for (HloInstruction* p : cands[0]) {
    for (HloInstruction* c : cands[1]) {
      if (p->parent() == c->parent() && p->parent()->IsFusionComputation()) {
        producer = p, consumer = c, fused_together = true;
        break;
      }
      if (!reading && Reads(NodeOf(c), NodeOf(p))) producer = p, consumer = c, reading = true;
    }
    if (fused_together) break;
  }
  const std::string& producer_name = producer_ref.name;
  const std::string& consumer_name = consumer_ref.name;
  absl::StrAppend(&out, "explain-fusion ", producer_name, " -> ", consumer_name, ":\n");
  for (int k = 0; k < 2; ++k) {
    HloInstruction* i = k == 0 ? producer : consumer;
    if (i->name() != refs[k]->name)
      absl::StrAppend(&out, "  '", refs[k]->name, "'", Where(*refs[k]), " is '", i->name(), "' (",
                      std::string(HloOpcodeString(i->opcode())), ") after the pipeline\n");
  }
  // Already fused together?
  if (fused_together) {
    HloInstruction* f = producer->parent()->FusionInstruction();
    absl::StrAppend(&out, "  fused: both are in ", producer->parent()->name(), " (fusion ", f->name(), ", a ",
                    fusion::IsMultiOutputFusion(f) ? "multi-output " : "",
                    f->attrs().fusion_kind == FusionKind::kInput ? "kInput" : "kLoop", " fusion)\n");
    return result;
  }
  // Otherwise judge the kernels they belong to now: the fusions holding them, if any.
  if (NodeOf(producer) != producer || NodeOf(consumer) != consumer) {
    producer = NodeOf(producer);
    consumer = NodeOf(consumer);
    absl::StrAppend(&out, "  not fused together: ", producer_name, " is in ", producer->name(), ", ", consumer_name,
                    " in ", consumer->name(), "; judging those\n");
  }
  if (producer == consumer) return result;
  if (!Reads(consumer, producer)) {
    // No producer and consumer: what the passes that merge other pairs of kernels would do.
    absl::StrAppend(&out, "  not a producer and consumer: ", consumer->name(), " does not read ", producer->name(),
                    "\n");
    if (producer->parent() != consumer->parent()) {
      absl::StrAppend(&out, "  they are in different computations (", producer->parent()->name(), ", ",
                      consumer->parent()->name(), ")\n");
      return result;
    }
    absl::StrAppend(&out, ExplainMultiOutputFusion(producer, consumer, context));
    absl::StrAppend(&out, ExplainHorizontalInPlaceFusion(producer, consumer));
    return result;
  }
  fusion::FusionLegality legality(&context);
  fusion::GpuCostModel cost(context.profile);
  FusionDecision d = legality.CanFuse(producer, consumer);
  if (!d.ok) {
    absl::StrAppend(&out, "  not fusible: ", d.reason, "\n");
    if (!d.rule.empty()) absl::StrAppend(&out, "  rule: ", d.rule, " at ", d.file, ":", d.line, "\n");
    absl::StrAppend(&out, ExplainMultiOutputFusion(producer, consumer, context));
    return result;
  }
  absl::StrAppend(&out, "  legal: no Fusible record or veto in rules/fusion/*.td refuses the pair\n");
  std::vector<const HloInstruction*> all = fusion::FusedInstructions(producer);
  for (const HloInstruction* i : fusion::FusedInstructions(consumer)) all.push_back(i);
  absl::StrAppend(&out, "  emitters: producer ", EmitterNameFor(*producer, context), ", consumer ",
                  EmitterNameFor(*consumer, context), "; fused: a ",
                  fusion::FusionKindFor(all) == FusionKind::kInput ? "kInput" : "kLoop", " fusion\n");
  Priority p = ComputePriority(producer, legality, cost);
  absl::StrAppend(&out, "  cost model (", cost.hardware().name, "): producer ", cost.Estimate(producer).ToString(), "\n");
  absl::StrAppend(&out, "    consumer ", cost.Estimate(consumer).ToString(), "\n");
  absl::StrAppend(&out, "    fused    ", cost.EstimateFused(producer, consumer).ToString(), "\n");
  if (!p.fusible) {
    absl::StrAppend(&out, "  not fused: the producer has ", Consumers(producer).size(),
                    " consumers and PriorityFusion fuses it into all or none; '",
                    p.refused_consumer ? p.refused_consumer->name() : std::string("?"), "' refuses: ", p.refusal.ToString(),
                    "\n");
    absl::StrAppend(&out, ExplainMultiOutputFusion(producer, consumer, context));
    return result;
  }
  absl::StrAppend(&out,
                  absl::StrFormat("  into all %d consumer(s): unfused %.3f us, fused %.3f us, benefit %.3f us\n",
                                  Consumers(producer).size(), p.times.time_unfused * 1e6, p.times.time_fused * 1e6,
                                  p.benefit * 1e6));
  absl::StrAppend(&out, p.benefit >= kMinBenefit ? "  would fuse (benefit >= 0)\n"
                                                 : "  would not fuse: the cost model expects it to be slower\n");
  if (p.benefit < kMinBenefit) absl::StrAppend(&out, ExplainMultiOutputFusion(producer, consumer, context));
  return result;
}

}  // namespace hloc
