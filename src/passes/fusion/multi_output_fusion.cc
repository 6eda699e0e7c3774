#include "passes/fusion/multi_output_fusion.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "engine/compile_recorder.h"
#include "engine/rewrite.h"
#include "engine/rule_tables.h"
#include "passes/fusion/fusion_analysis.h"
#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/pair_signature.h"
#include "passes/fusion/fusion_legality.h"
#include "passes/fusion/gpu_cost_model.h"
#include "passes/fusion/priority_fusion.h"
#include "passes/layout/layout_util.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;
using fusion::kMaxOperandsAndOutputs;
constexpr int64_t kMaxMergeSteps = 100000;

// Which instructions each instruction of a computation depends on (XLA's
// HloReachabilityMap): one bit row per instruction, the set of its ancestors. Built on the
// first question and then kept in step with each merge (Merged), not rebuilt: a merge step
// rebuilt it from the whole computation, O(n^2/64) per merge and cubic in the module over
// the pass. Rows are numbered in the order instructions were first seen, never reused.
class Reachability {
 public:
  static constexpr size_t kUnknown = ~size_t{0};
  explicit Reachability(const HloComputation& comp) : comp_(comp) {}
  // `to` depends on `from` (or they are the same instruction).
  bool IsReachable(const HloInstruction* from, const HloInstruction* to) { return IsReachable(Index(from), Index(to)); }
  // The same by row (Index): the sibling step asks about every pair of a parent's users,
  // hundreds for a constant shared by every layer, and looked each of them up once per pair.
  size_t Index(const HloInstruction* inst) {
    if (stale_) Build();
    auto it = index_.find(inst);
    return it == index_.end() ? kUnknown : it->second;
  }
  // The next question rebuilds the table.
  bool stale() const { return stale_; }
  bool IsReachable(size_t from, size_t to) const {
    if (from == kUnknown || to == kUnknown) return true;  // unknown: assume the worst
    return (bits_[to * words_ + from / 64] >> (from % 64)) & 1;
  }

  // Before `members` are merged: their rows (kUnknown where none), and they are forgotten with
  // the get-tuple-elements that read them (the merge frees them all; a new instruction may get
  // one of their addresses).
  std::vector<size_t> Forget(const std::vector<HloInstruction*>& members) {
    std::vector<size_t> rows;
    for (HloInstruction* m : members) {
      // The merge drops a member's control edges, which can make ancestors unreachable: only a
      // rebuild says what remains.
      if (!m->control_predecessors().empty() || !m->control_successors().empty()) stale_ = true;
      rows.push_back(stale_ ? kUnknown : Index(m));
      index_.erase(m);
      for (const HloInstruction* u : m->users())
        if (u->opcode() == O::kGetTupleElement) index_.erase(u);
    }
    return rows;
  }
  // After the members with `rows` (from Forget) became `fusion`: the fusion depends on what
  // any member depended on, and so does everything that depended on a member (the merge
  // creates no cycle, so one pass through the fusion is all a new path can take). Its
  // get-tuple-elements get rows too; nothing asks about paths from them.
  void Merged(const std::vector<size_t>& rows, HloInstruction* fusion) {
    if (stale_) return;
    std::vector<const HloInstruction*> added = {fusion};
    for (const HloInstruction* u : fusion->users())
      if (u->opcode() == O::kGetTupleElement) added.push_back(u);
    if (std::find(rows.begin(), rows.end(), kUnknown) != rows.end() || used_ + added.size() > capacity_) {
      stale_ = true;
      return;
    }
    const size_t f = used_++;
    uint64_t* frow = Row(f);
    frow[f / 64] |= uint64_t{1} << (f % 64);
    for (size_t r : rows) Or(frow, Row(r));
    for (size_t y = 0; y < f; ++y) {
      const uint64_t* row = Row(y);
      bool below = false;
      for (size_t r : rows) below |= (row[r / 64] >> (r % 64)) & 1;
      if (below) Or(Row(y), frow);
    }
    index_[fusion] = f;
    for (size_t i = 1; i < added.size(); ++i) {
      const size_t g = used_++;
      Or(Row(g), frow);
      Row(g)[g / 64] |= uint64_t{1} << (g % 64);
      index_[added[i]] = g;
    }
  }

 private:
  uint64_t* Row(size_t i) { return &bits_[i * words_]; }
  void Or(uint64_t* to, const uint64_t* from) const {
    for (size_t w = 0; w < words_; ++w) to[w] |= from[w];
  }
  void Build() {
    const std::vector<HloInstruction*> post = comp_.MakeInstructionPostOrder();
    // Room for the merges to come (each adds a fusion and its get-tuple-elements; a full
    // table is rebuilt).
    capacity_ = 2 * post.size() + 64;
    words_ = (capacity_ + 63) / 64;
    index_.clear();
    for (size_t i = 0; i < post.size(); ++i) index_[post[i]] = i;
    used_ = post.size();
    bits_.assign(capacity_ * words_, 0);
    for (size_t i = 0; i < post.size(); ++i) {
      uint64_t* row = Row(i);
      row[i / 64] |= uint64_t{1} << (i % 64);
      for (const HloInstruction* op : post[i]->operands()) Or(row, Row(index_.at(op)));
      for (const HloInstruction* p : post[i]->control_predecessors()) Or(row, Row(index_.at(p)));
    }
    stale_ = false;
  }

  const HloComputation& comp_;
  bool stale_ = true;
  size_t words_ = 0, capacity_ = 0, used_ = 0;
  absl::flat_hash_map<const HloInstruction*, size_t> index_;
  std::vector<uint64_t> bits_;
};

// The iteration space of a node's kernel: a reduction's input and reduced dimensions, or
// the (first) output's dimensions.
struct LoopShape {
  std::vector<int64_t> dims;
  std::vector<int64_t> reduced;  // empty: a loop
};
LoopShape GetLoopShape(const HloInstruction* node) {
  std::vector<const HloInstruction*> reductions = fusion::Reductions(node);
  if (!reductions.empty()) return {reductions[0]->operand(0)->shape().dimensions(), reductions[0]->attrs().dimensions};
  const HloInstruction* out = fusion::FusionOutputs(node).front();
  const Shape& s = out->shape().IsTuple() && !out->shape().tuple_shapes().empty() ? out->shape().tuple_shapes(0) : out->shape();
  return {s.dimensions(), {}};
}

// Every output of the node has no layout or the default (major-to-minor) one.
bool DefaultLayouts(const HloInstruction* node) {
  for (const HloInstruction* o : fusion::FusionOutputs(node)) {
    const Shape& s = o->shape();
    if (!s.IsArray() || !s.has_layout()) continue;
    const std::vector<int64_t>& m = s.layout().minor_to_major;
    for (size_t i = 0; i < m.size(); ++i)
      if (m[i] != static_cast<int64_t>(m.size() - 1 - i)) return false;
  }
  return true;
}

bool ShapesCompatible(const HloInstruction* a, const HloInstruction* b) {
  const LoopShape la = GetLoopShape(a), lb = GetLoopShape(b);
  if (la.dims != lb.dims) {
    // XLA also accepts loop shapes that are bitcasts of each other (IsReshapeOrTransposeBitcast):
    // with default layouts, any two shapes of one element count, outside reductions.
    if (!la.reduced.empty() || !lb.reduced.empty() || !DefaultLayouts(a) || !DefaultLayouts(b)) return false;
    int64_t na = 1, nb = 1;
    for (int64_t d : la.dims) na *= d;
    for (int64_t d : lb.dims) nb *= d;
    if (na != nb) return false;
    for (const HloInstruction* n : {a, b})
      for (const HloInstruction* o : fusion::FusionOutputs(n))
        if (o->shape().IsArray() && fusion::ElementCount(o->shape()) != na) return false;
    return true;
  }
  if (!la.reduced.empty() && !lb.reduced.empty()) return la.reduced == lb.reduced;
  // Every output of a multi-output node must iterate the same space (a reduction's outputs
  // are checked through their reductions).
  for (const HloInstruction* n : {a, b}) {
    if (fusion::HasReduction(n)) continue;
    for (const HloInstruction* o : fusion::FusionOutputs(n))
      if (o->shape().IsArray() && o->shape().dimensions() != la.dims) return false;
  }
  return true;
}

bool HeroesCompatible(const HloInstruction* a, const HloInstruction* b, bool siblings) {
  const bool ta = fusion::HasTiledTransposeHero(a), tb = fusion::HasTiledTransposeHero(b);
  if (!ta && !tb) return true;
  // XLA's FusionHeroesAreCompatible: the transpose kernel writes roots without a transpose hero
  // at the positions of the transpose's input (ShapesCompatible has checked that they are
  // bitcasts of it), so two siblings reading one operand share its reads. A producer-consumer
  // pair would need the consumer to use the transpose elementwise ("tiled transpose would
  // become untiled"), which is not checked here: those stay apart.
  if (ta != tb) return siblings;
  return fusion::FusionOutputs(a).front()->shape().dimensions() == fusion::FusionOutputs(b).front()->shape().dimensions();
}

// A node that computes a kernel and may share it: a kLoop/kInput fusion or a plain fusible
// instruction with an array value.
bool IsMofCandidate(const HloInstruction* node, fusion::FusionLegality& legality) {
  if (!fusion::GpuCostModel::LaunchesKernel(node) || node->opcode() == O::kCustomCall) return false;
  if (node->opcode() == O::kFusion && node->attrs().fusion_kind == FusionKind::kCustom) return false;
  if (node->opcode() == O::kIota || node->opcode() == O::kBroadcast) return false;  // cheaper to recompute
  if (node->opcode() != O::kFusion && !node->shape().IsArray()) return false;
  // In-place updates (dynamic-update-slice, scatter) write their operand's buffer: the kernel
  // emitters take them as a fusion's only output.
  if (node->opcode() == O::kDynamicUpdateSlice || node->opcode() == O::kScatter) return false;
  if (node->opcode() == O::kFusion && node->fused_instructions_computation() != nullptr) {
    const HloInstruction* root = node->fused_instructions_computation()->root_instruction();
    std::vector<const HloInstruction*> roots = {root};
    if (root->opcode() == O::kTuple) roots.assign(root->operands().begin(), root->operands().end());
    for (const HloInstruction* o : roots)
      if (o->opcode() == O::kDynamicUpdateSlice || o->opcode() == O::kScatter) return false;
    // A variadic reduce or reduce-window root (e.g. select-and-scatter-expander's (value,
    // index) reduce-window) is itself a tuple: merged, it would be a nested tuple output,
    // which the kernel emitters do not take.
    for (const HloInstruction* o : roots)
      if (!o->shape().IsArray()) return false;
  }
  return legality.IsFusibleNode(node, /*as_producer=*/false).ok;
}

// Every fused op allows the kind the merged fusion would get.
bool KindsAllow(const std::vector<const HloInstruction*>& nodes, fusion::FusionLegality& legality) {
  std::vector<const HloInstruction*> all;
  for (const HloInstruction* n : nodes)
    for (const HloInstruction* i : fusion::FusedInstructions(n)) all.push_back(i);
  const FusionKind kind = fusion::FusionKindFor(all);
  const char* name = kind == FusionKind::kInput ? "kInput" : "kLoop";
  for (const HloInstruction* i : all) {
    if (i->opcode() == O::kTuple || i->opcode() == O::kGetTupleElement) continue;
    const FusibleInfo* row = legality.FusibleRecord(i->opcode());
    if (row == nullptr) return false;
    bool ok = false;
    for (int k = 0; k < row->num_kinds; ++k) ok |= std::string(row->kinds[k]) == name;
    if (!ok) return false;
  }
  return true;
}

int64_t CombinedOperandsAndOutputs(const HloInstruction* a, const HloInstruction* b) {
  absl::flat_hash_set<const HloInstruction*> ops;
  for (const HloInstruction* n : {a, b})
    for (const HloInstruction* op : n->operands())
      if (op != a && op != b) ops.insert(op);
  return static_cast<int64_t>(ops.size() + fusion::FusionOutputs(a).size() + fusion::FusionOutputs(b).size());
}

// Sharing a kernel reads `operand` once instead of twice; worthless for scalars and
// broadcast scalars (XLA's IsProfitableOperand).
bool IsProfitableOperand(const HloInstruction* operand) {
  if (fusion::ElementCount(operand->shape()) <= 1) return false;
  if (operand->opcode() == O::kConstant) return fusion::ElementCount(operand->shape()) > 1;
  if (operand->opcode() == O::kBroadcast) return fusion::ElementCount(operand->operand(0)->shape()) > 1;
  return true;
}

double MergeBenefit(const fusion::GpuCostModel& cost, const HloInstruction* a, const HloInstruction* b) {
  const double launch = cost.hardware().launch_overhead;
  const double separate = 2 * launch + cost.Estimate(a).exec_time + cost.Estimate(b).exec_time;
  const double merged = launch + cost.EstimateMerged({a, b}).exec_time;
  return separate - merged;
}

// The reduction producer of a row chain (softmax's, logsumexp's row max) joining the chain's
// kernel as an extra output: PriorityFusion cannot fuse it when it has other users (the
// ReductionWithManyUsers veto: it would be computed twice), but as an output of the chain's
// kernel it is computed once and the other users read it from the fusion's tuple. Every
// veto but those against copies (Duplication) still applies (ReductionIntoNonEpilogue admits
// only row-normalization chains, which the row emitter runs in one kernel, a block or a warp
// per row).
bool ChainMergeLegal(HloInstruction* producer, HloInstruction* consumer, fusion::FusionLegality& legality) {
  if (!fusion::HasReduction(consumer) || fusion::IsMultiOutputFusion(producer)) return false;
  if (!legality.IsFusibleNode(producer, /*as_producer=*/true).ok) return false;
  RewriteContext ctx(producer->parent(), legality.context());
  for (const FusionVetoInfo* veto : legality.active_vetoes()) {
    if (veto->duplication) continue;  // nothing is copied here
    if (veto->fn(ctx, producer, consumer)) return false;
  }
  return KindsAllow({producer, consumer}, legality);
}

// Time saved by running the chain producer -> consumer as one kernel. Both read the rows of
// their shared operands (logsumexp: the logits): separately, each reads them from memory; in
// one kernel the consumer's pass re-reads each row its block has just read, which the caches
// serve while the rows that the resident blocks hold fit in L2 (the row emitter gives long rows
// whose chain re-reads them, row_reduction_long_row_elements and up, 1024 threads: two blocks
// per SM). Otherwise the
// re-read goes to memory again and merging saves only the reduced values' round trip and a
// launch, which the re-read's latency eats: no merge then.
double ChainMergeBenefit(const fusion::GpuCostModel& cost, const HloInstruction* producer,
                         const HloInstruction* consumer) {
  const fusion::CostModelHardware& hw = cost.hardware();
  const std::vector<const HloInstruction*> reductions = fusion::Reductions(producer);
  if (reductions.empty()) return -1;
  const HloInstruction* r = reductions.front();
  const int64_t rows = std::max<int64_t>(1, fusion::ElementCount(r->shape()));
  const int64_t row_len = fusion::ElementCount(r->operand(0)->shape()) / rows;
  int64_t reread = 0, row_bytes = 0;
  for (const HloInstruction* op : producer->operands()) {
    if (std::find(consumer->operands().begin(), consumer->operands().end(), op) == consumer->operands().end()) continue;
    if (fusion::ElementCount(op->shape()) != rows * row_len) continue;  // only row-shaped operands are re-read
    reread += fusion::ByteSize(op->shape());
    row_bytes += fusion::ByteSize(op->shape()) / rows;
  }
  if (reread == 0) return -1;  // nothing read twice: the merge would only add a pass
  const int64_t blocks_per_sm = row_len >= hw.row_long_row_elements ? 2 : 4;
  const int64_t in_flight = std::min(rows, hw.sm_count * blocks_per_sm) * row_bytes;
  if (in_flight > hw.l2_cache_size) return -1;
  const double separate = 2 * hw.launch_overhead + cost.Estimate(producer).exec_time + cost.Estimate(consumer).exec_time;
  const double merged =
      hw.launch_overhead + cost.EstimateMerged({producer, consumer}).exec_time + reread / (hw.memory_bandwidth * hw.l2_cache_speedup);
  return separate - merged;
}

class ComputationMof {
 public:
  ComputationMof(HloComputation& comp, fusion::FusionLegality& legality, const fusion::GpuCostModel& cost,
                 fusion::FusionBuilder& builder)
      : comp_(comp), legality_(legality), cost_(cost), builder_(builder) {}

  // One producer-consumer merge; false when none is left.
  absl::StatusOr<bool> ProducerConsumerStep() {
    const std::vector<HloInstruction*> post = comp_.MakeInstructionPostOrder();
    for (HloInstruction* consumer : post) {
      // Judged in an earlier step with nothing around it changed since: still no pair.
      if (!dead_consumers_.insert(consumer->unique_id()).second) continue;
      if (!IsMofCandidate(consumer, legality_)) continue;
      for (HloInstruction* producer : consumer->operands()) {
        if (!IsMofCandidate(producer, legality_) || producer->IsRoot()) continue;
        if (!producer->shape().IsArray()) continue;
        int64_t distinct_users = 0;
        for (HloInstruction* u : producer->users()) distinct_users += u != consumer;
        if (distinct_users == 0) continue;  // PriorityFusion's business
        if (!Verdict(kProducerConsumer, producer, consumer)) continue;
        bool cycle = false;
        for (HloInstruction* u : producer->users())
          if (u != consumer && reach_.IsReachable(u, consumer)) cycle = true;
        if (cycle) continue;
        dead_consumers_.erase(consumer->unique_id());
        return Merge({producer, consumer},
                     absl::StrCat("multi-output fusion: '", producer->name(), "' becomes an extra output of its "
                                  "consumer's kernel (it has other users)"));
      }
    }
    return false;
  }

  absl::StatusOr<bool> SiblingStep() {
    const std::vector<HloInstruction*> post = comp_.MakeInstructionPostOrder();
    for (HloInstruction* parent : post) {
      if (!dead_parents_.insert(parent->unique_id()).second) continue;
      if (!IsProfitableOperand(parent)) continue;
      std::vector<HloInstruction*> siblings;
      absl::flat_hash_set<const HloInstruction*> seen;
      for (HloInstruction* u : parent->users())
        if (seen.insert(u).second && IsMofCandidate(u, legality_)) siblings.push_back(u);
      if (siblings.size() < 2) continue;
      std::vector<size_t> index;
      for (HloInstruction* s : siblings) index.push_back(reach_.Index(s));
      for (size_t i = 0; i < siblings.size(); ++i) {
        for (size_t j = i + 1; j < siblings.size(); ++j) {
          HloInstruction* a = siblings[i];
          HloInstruction* b = siblings[j];
          if (reach_.IsReachable(index[i], index[j]) || reach_.IsReachable(index[j], index[i])) continue;
          if (!Verdict(kSiblings, a, b)) continue;
          dead_parents_.erase(parent->unique_id());
          return Merge({a, b}, absl::StrCat("multi-output fusion: siblings reading '", parent->name(), "' once"));
        }
      }
    }
    return false;
  }

 private:
  enum PairKind : int64_t { kProducerConsumer = -3, kSiblings = -4 };

  // Merges `members` into one multi-output fusion; `why` goes to the --dump-html record.
  absl::StatusOr<bool> Merge(const std::vector<HloInstruction*>& members, const std::string& why) {
    RecordMerge(members, why);
    std::vector<HloInstruction*> changed = Neighbours(members);
    const std::vector<size_t> rows = reach_.Forget(members);
    absl::StatusOr<HloInstruction*> f = builder_.Merge(members);
    if (!f.ok()) return f.status();
    reach_.Merged(rows, *f);
    if (reach_.stale()) {
      // A rebuild can answer "unreachable" where the table assumed the worst (an instruction
      // it did not know), and dropped control edges remove paths: any pair may be mergeable.
      dead_consumers_.clear();
      dead_parents_.clear();
    } else {
      Revive(changed);
    }
    return true;
  }

  // --trace-rules prints the merge, --dump-html records it (as priority-fusion does its fusions).
  void RecordMerge(const std::vector<HloInstruction*>& members, const std::string& why) {
    PassContext* context = legality_.context();
    if (context == nullptr) return;
    if (context->trace_rules && context->trace_out != nullptr)
      *context->trace_out << "multi-output-fusion: merged " << members[0]->name() << " + " << members[1]->name()
                          << " (" << why << ")\n";
    if (context->recorder == nullptr) return;
    CompileRecorder::FusionEvent e;
    e.producer = members[0]->name();
    for (size_t i = 1; i < members.size(); ++i) absl::StrAppend(&e.consumers, i > 1 ? "," : "", members[i]->name());
    e.fused = true;
    e.reason = why;
    const double launch = cost_.hardware().launch_overhead;
    double separate = 0;
    for (HloInstruction* m : members) separate += launch + cost_.Estimate(m).exec_time;
    e.time_unfused_us = separate * 1e6;
    e.time_fused_us =
        (launch + cost_.EstimateMerged(std::vector<const HloInstruction*>(members.begin(), members.end())).exec_time) * 1e6;
    e.benefit_us = e.time_unfused_us - e.time_fused_us;
    context->recorder->AddFusion(std::move(e));
  }

  // The instructions that survive a merge of `members` with other operands or users after
  // it: the members' operands (they get the fusion as a user) and their users, and the
  // users of their get-tuple-elements (rewired to the fusion's). Everything else the merge
  // touches is new, with a new unique id, or freed.
  static std::vector<HloInstruction*> Neighbours(const std::vector<HloInstruction*>& members) {
    absl::flat_hash_set<const HloInstruction*> group(members.begin(), members.end());
    std::vector<HloInstruction*> out;
    auto add = [&](HloInstruction* i) {
      if (!group.contains(i)) out.push_back(i);
    };
    for (HloInstruction* m : members) {
      for (HloInstruction* op : m->operands()) add(op);
      for (HloInstruction* u : m->users()) {
        if (u->opcode() != O::kGetTupleElement) {
          add(u);
          continue;
        }
        // The merge frees a member's get-tuple-elements: only their users survive.
        for (HloInstruction* uu : u->users()) add(uu);
      }
    }
    return out;
  }

  // A step's judgement of a consumer reads it, its operands and their operands' and users'
  // lists (the pair signatures, the users and cycle checks); of a parent, it and its users'
  // the same. Reachability only grows with a merge, so a refused pair stays refused unless one
  // of those changed: forget the judgements that read a changed instruction. A producer that
  // is no candidate refuses every pair by itself, so its users need not be judged again.
  void Revive(const std::vector<HloInstruction*>& changed) {
    for (HloInstruction* x : changed) {
      dead_consumers_.erase(x->unique_id());
      dead_parents_.erase(x->unique_id());
      for (HloInstruction* op : x->operands()) dead_parents_.erase(op->unique_id());
      if (!IsMofCandidate(x, legality_)) continue;
      for (HloInstruction* u : x->users()) dead_consumers_.erase(u->unique_id());
    }
  }

  // The pair's local checks (everything but the users and cycle checks, which depend on the
  // rest of the graph), judged once per pair signature (pair_signature.h): each step rescans
  // the computation, and would otherwise re-judge every pair.
  bool Verdict(PairKind kind, HloInstruction* a, HloInstruction* b) {
    std::vector<int64_t> sig = {kind};
    fusion::AppendPairSignature(a, sig);
    fusion::AppendPairSignature(b, sig);
    auto it = verdicts_.find(sig);
    if (it != verdicts_.end()) return it->second;
    const bool ok = kind == kProducerConsumer ? ProducerConsumerOk(a, b) : SiblingsOk(a, b);
    verdicts_.emplace(std::move(sig), ok);
    return ok;
  }

  bool ProducerConsumerOk(HloInstruction* producer, HloInstruction* consumer) {
    const bool chain = fusion::HasReduction(producer);
    if (chain) {
      if (!ChainMergeLegal(producer, consumer, legality_)) return false;
    } else {
      if (fusion::IsMultiOutputFusion(producer) || !legality_.CanFuse(producer, consumer, fusion::FusionUse::kOutput).ok)
        return false;
    }
    if (!ShapesCompatible(producer, consumer) || !HeroesCompatible(producer, consumer, /*siblings=*/false)) return false;
    if (CombinedOperandsAndOutputs(producer, consumer) + 1 > kMaxOperandsAndOutputs) return false;
    return chain ? ChainMergeBenefit(cost_, producer, consumer) > 0 : MergeBenefit(cost_, producer, consumer) >= 0;
  }

  bool SiblingsOk(HloInstruction* a, HloInstruction* b) {
    if (!ShapesCompatible(a, b) || !HeroesCompatible(a, b, /*siblings=*/true) || !KindsAllow({a, b}, legality_)) return false;
    if (CombinedOperandsAndOutputs(a, b) > kMaxOperandsAndOutputs) return false;
    return MergeBenefit(cost_, a, b) >= 0;
  }

  HloComputation& comp_;
  fusion::FusionLegality& legality_;
  const fusion::GpuCostModel& cost_;
  fusion::FusionBuilder& builder_;
  Reachability reach_{comp_};
  absl::flat_hash_map<std::vector<int64_t>, bool> verdicts_;
  // Consumers (by unique id, never reused) and sibling parents a step found no pair for.
  absl::flat_hash_set<int64_t> dead_consumers_, dead_parents_;
};

// Whether `to` depends on `from` (operands and control predecessors).
bool DependsOn(const HloInstruction* to, const HloInstruction* from) {
  std::vector<const HloInstruction*> stack = {to};
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* h = stack.back();
    stack.pop_back();
    if (!seen.insert(h).second) continue;
    if (h == from && h != to) return true;
    for (const HloInstruction* o : h->operands()) stack.push_back(o);
    for (const HloInstruction* o : h->control_predecessors()) stack.push_back(o);
  }
  return false;
}

std::string HeroNames(const HloInstruction* fusion_inst) {
  std::set<std::string> heroes;
  bool reduction_hero = false;
  for (const HloInstruction* o : fusion::FusionOutputs(fusion_inst)) {
    const HloInstruction* hero = fusion::FindHero(o);
    reduction_hero |= fusion::IsInputFusibleReduction(hero) || hero->opcode() == O::kScatter;
    heroes.insert(absl::StrReplaceAll(std::string(HloOpcodeString(hero->opcode())), {{"-", "_"}}));
  }
  // A row-normalization kernel (softmax, layer norm) ends in elementwise ops over the row,
  // but it is a reduction kernel: name it after its reductions, as XLA's reduction fusions.
  if (!reduction_hero && fusion_inst->attrs().fusion_kind == FusionKind::kInput) {
    for (const HloInstruction* i : fusion::FusedInstructions(fusion_inst))
      if (i->opcode() == O::kScatter) heroes = {"scatter"};
    if (heroes.count("scatter") == 0) heroes = {"reduce"};
  }
  return absl::StrJoin(heroes, "_");
}

bool HasBase(const std::string& name, const std::string& base) {
  return name == base || (name.size() > base.size() + 1 && name.compare(0, base.size() + 1, base + ".") == 0);
}

}  // namespace

std::string ExplainMultiOutputFusion(HloInstruction* a, HloInstruction* b, PassContext& context) {
  fusion::FusionLegality legality(&context);
  fusion::GpuCostModel cost(context.profile);
  std::string out;
  auto say = [&](const std::string& s) { absl::StrAppend(&out, "  multi-output fusion: ", s, "\n"); };
  auto numbers = [&](double benefit) {
    const double launch = cost.hardware().launch_overhead;
    return absl::StrFormat("two kernels %.3f us, one kernel %.3f us, benefit %.3f us",
                           (2 * launch + cost.Estimate(a).exec_time + cost.Estimate(b).exec_time) * 1e6,
                           (launch + cost.EstimateMerged({a, b}).exec_time) * 1e6, benefit * 1e6);
  };
  for (HloInstruction* n : {a, b}) {
    if (!IsMofCandidate(n, legality)) {
      say(absl::StrCat("'", n->name(), "' is no candidate (no kernel of its own, a library call, an iota or "
                       "broadcast, an in-place update, a tuple-shaped root, or not fusible)"));
      return out;
    }
  }
  const bool reads = std::find(b->operands().begin(), b->operands().end(), a) != b->operands().end();
  if (reads) {
    int64_t other_users = 0;
    for (HloInstruction* u : a->users()) other_users += u != b;
    if (other_users == 0) {
      say(absl::StrCat("producer-consumer: '", a->name(), "' has no other user, so priority-fusion decides the pair"));
      return out;
    }
    const bool chain = fusion::HasReduction(a);
    if (chain) {
      if (!ChainMergeLegal(a, b, legality)) {
        say("producer-consumer (a reduction joining its row chain): not legal (a veto, a kind the ops do not allow, "
            "or the producer is multi-output)");
        return out;
      }
    } else if (fusion::IsMultiOutputFusion(a)) {
      say(absl::StrCat("producer-consumer: '", a->name(), "' is a multi-output fusion already"));
      return out;
    } else if (fusion::FusionDecision d = legality.CanFuse(a, b, fusion::FusionUse::kOutput); !d.ok) {
      say(absl::StrCat("producer-consumer: not legal: ", d.ToString()));
      return out;
    }
    if (!ShapesCompatible(a, b)) {
      say("producer-consumer: the kernels iterate different shapes");
      return out;
    }
    if (!HeroesCompatible(a, b, /*siblings=*/false)) {
      say("producer-consumer: a tiled transpose would become untiled");
      return out;
    }
    if (CombinedOperandsAndOutputs(a, b) + 1 > kMaxOperandsAndOutputs) {
      say(absl::StrCat("producer-consumer: more than ", kMaxOperandsAndOutputs, " operands and outputs together"));
      return out;
    }
    for (HloInstruction* u : a->users())
      if (u != b && DependsOn(b, u)) {
        say(absl::StrCat("producer-consumer: '", b->name(), "' depends on '", u->name(), "', another user of '",
                         a->name(), "': merging would make a cycle"));
        return out;
      }
    const double benefit = chain ? ChainMergeBenefit(cost, a, b) : MergeBenefit(cost, a, b);
    const bool merge = chain ? benefit > 0 : benefit >= 0;
    say(absl::StrCat("producer-consumer (", a->name(), " becomes an extra output): ",
                     chain ? absl::StrFormat("benefit %.3f us", benefit * 1e6) : numbers(benefit), "; ",
                     merge ? "would merge" : "would not merge (the cost model expects no gain)"));
    return out;
  }
  // Siblings: a common operand read once by one kernel.
  const HloInstruction* parent = nullptr;
  bool any_common = false;
  for (const HloInstruction* op : a->operands()) {
    if (std::find(b->operands().begin(), b->operands().end(), op) == b->operands().end()) continue;
    any_common = true;
    if (IsProfitableOperand(op)) {
      parent = op;
      break;
    }
  }
  if (!any_common) {
    say(absl::StrCat("'", b->name(), "' does not read '", a->name(), "' and they read no common operand"));
    return out;
  }
  if (parent == nullptr) {
    say("siblings: their common operands are scalars or broadcast scalars, not worth sharing a kernel");
    return out;
  }
  if (DependsOn(a, b) || DependsOn(b, a)) {
    say("siblings: one depends on the other: merging would make a cycle");
    return out;
  }
  if (!ShapesCompatible(a, b)) {
    say("siblings: the kernels iterate different shapes");
    return out;
  }
  if (!HeroesCompatible(a, b, /*siblings=*/true)) {
    say("siblings: transpose heroes of different shapes");
    return out;
  }
  if (!KindsAllow({a, b}, legality)) {
    say("siblings: an op does not allow the kind of the merged fusion (rules/fusion/FusionKinds.td)");
    return out;
  }
  if (CombinedOperandsAndOutputs(a, b) > kMaxOperandsAndOutputs) {
    say(absl::StrCat("siblings: more than ", kMaxOperandsAndOutputs, " operands and outputs together"));
    return out;
  }
  const double benefit = MergeBenefit(cost, a, b);
  say(absl::StrCat("siblings (reading '", parent->name(), "' once): ", numbers(benefit), "; ",
                   benefit >= 0 ? "would merge" : "would not merge (the cost model expects no gain)"));
  return out;
}

absl::StatusOr<bool> MultiOutputFusion::Run(HloModule& module, PassContext& context) {
  fusion::FusionLegality legality(&context);
  fusion::GpuCostModel cost(context.profile);
  fusion::FusionBuilder builder(module);
  bool changed = false;
  for (HloComputation* comp : FusibleComputations(module)) {
    ComputationMof mof(*comp, legality, cost, builder);
    bool comp_changed = false;
    // Each merge removes an instruction, so these loops end; the caps guard bugs (and say so).
    for (const bool siblings : {false, true}) {
      if (!(siblings ? siblings_ : producer_consumer_)) continue;
      int64_t steps = 0;
      for (; steps < kMaxMergeSteps; ++steps) {
        absl::StatusOr<bool> step = siblings ? mof.SiblingStep() : mof.ProducerConsumerStep();
        if (!step.ok()) return step.status();
        if (!*step) break;
        comp_changed = true;
      }
      if (steps == kMaxMergeSteps)
        std::cerr << "hloc: note: multi_output_fusion stopped its " << (siblings ? "sibling" : "producer-consumer")
                  << " merges after " << kMaxMergeSteps << " in " << comp->name() << " (its cap); continuing\n";
    }
    if (comp_changed) {
      if (absl::Status s = fusion::EnsureDefinitionOrder(*comp); !s.ok()) return s;
    }
    changed |= comp_changed;
  }
  return changed;
}

absl::StatusOr<bool> RenameFusions::Run(HloModule& module, PassContext&) {
  NameUniquer names = InstructionNameUniquer(module);
  NameUniquer computation_names = ComputationNameUniquer(module);
  bool changed = false;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != O::kFusion || inst->called_computations().empty()) continue;
      const FusionKind kind = inst->attrs().fusion_kind;
      // kCustom fusions keep their library names; fusion-wrapper's "wrapped_<op>" fusions
      // keep theirs (XLA wraps after renaming).
      if (kind == FusionKind::kCustom || absl::StartsWith(inst->name(), "wrapped_")) continue;
      const std::string heroes = HeroNames(inst.get());
      const char* prefix = kind == FusionKind::kInput ? "input" : kind == FusionKind::kOutput ? "output" : "loop";
      const std::string base = absl::StrCat(prefix, "_", heroes, "_fusion");
      if (!HasBase(inst->name(), base)) {
        inst->set_name(names.GetUniqueName(base));
        changed = true;
      }
      HloComputation* fused = inst->fused_instructions_computation();
      const std::string comp_base = absl::StrCat("fused_", heroes);
      if (!HasBase(fused->name(), comp_base)) {
        fused->set_name(computation_names.GetUniqueName(comp_base));
        changed = true;
      }
    }
  }
  return changed;
}

absl::StatusOr<bool> FusionWrapper::Run(HloModule& module, PassContext& context) {
  fusion::FusionLegality legality(&context);
  fusion::FusionBuilder builder(module);
  bool changed = false;
  for (HloComputation* comp : FusibleComputations(module)) {
    for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
      if (inst->opcode() == O::kFusion || inst->opcode() == O::kConstant || inst->opcode() == O::kBitcast) continue;
      // A reshape left unfused that only renames the dimensions of its operand's bytes is a
      // bitcast (XLA's layout-sensitive algsimp makes it one after layout normalization): no
      // kernel. Flax's GRU reshaped each bias f32[1,512] -> f32[512] for cuBLAS inside its scan,
      // four copy kernels an iteration.
      if (inst->opcode() == O::kReshape && inst->shape().IsArray() && inst->operand(0)->shape().IsArray() &&
          layout::ReshapeIsBitcast(inst->operand(0)->shape(), inst->shape()) &&
          inst->control_predecessors().empty() && inst->control_successors().empty()) {
        auto made = std::make_unique<HloInstruction>(O::kBitcast, inst->shape(),
                                                     builder.instruction_names().GetUniqueName("bitcast"));
        made->AppendOperand(inst->operand(0));
        made->mutable_attrs().metadata = inst->attrs().metadata;
        HloInstruction* cast = comp->AddInstructionBefore(std::move(made), inst);
        inst->ReplaceAllUsesWith(cast);
        if (absl::Status s = comp->RemoveInstruction(inst); !s.ok()) return s;
        changed = true;
        continue;
      }
      if (!fusion::GpuCostModel::LaunchesKernel(inst) || legality.FusibleRecord(inst->opcode()) == nullptr) continue;
      if (!inst->control_predecessors().empty() || !inst->control_successors().empty()) continue;
      const std::string op = absl::StrReplaceAll(std::string(HloOpcodeString(inst->opcode())), {{"-", "_"}});
      absl::StatusOr<HloInstruction*> f = builder.Wrap(inst);
      if (!f.ok()) return f.status();
      (*f)->set_name(builder.instruction_names().GetUniqueName(absl::StrCat("wrapped_", op)));
      (*f)->fused_instructions_computation()->set_name(
          builder.computation_names().GetUniqueName(absl::StrCat("wrapped_", op, "_computation")));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
