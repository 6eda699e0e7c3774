// hlo-rematerialization: XLA's HloRematerialization, simplified. Walking each sequential
// computation's schedule, at the first program point whose live bytes exceed the limit it picks
// a value that is live across that point but not used there, whose instruction is cheap to
// recompute (elementwise, broadcast, iota, fusions of those) and whose operands are still live
// at its next use (or, up to max_chain_length, cheap themselves: a chain such as broadcast ->
// multiply is recomputed together). The uses after the point then read a clone placed just
// before the first of them, so the original dies earlier; an original left without users is
// removed. Repeats until every point fits or nothing more can be recomputed.
#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "schedule/buffer_model.h"
#include "schedule/hlo_scheduling.h"
#include "schedule/schedule_passes.h"

namespace hloc {
namespace {

using O = HloOpcode;
using namespace schedule_internal;

bool IsCheapOpcode(O op) {
  if (op == O::kRng || op == O::kRngBitGenerator || op == O::kRngGetAndUpdateState) return false;
  return IsElementwise(op) || op == O::kBroadcast || op == O::kIota || op == O::kBitcast;
}

// Cheap enough to run twice: a cheap opcode, or a fusion of only cheap opcodes (and its
// parameters and constants). No control edges: a clone could not honour them.
bool IsRematerializable(const HloInstruction& inst) {
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) return false;
  if (!inst.shape().IsArray()) return false;
  if (inst.opcode() == O::kFusion) {
    if (inst.called_computations().size() != 1 || inst.called_computations()[0] == nullptr) return false;
    for (const auto& f : inst.called_computations()[0]->instructions()) {
      const O op = f->opcode();
      if (op != O::kParameter && op != O::kConstant && !IsCheapOpcode(op) && op != O::kReshape) return false;
    }
    return true;
  }
  return IsCheapOpcode(inst.opcode());
}

class NameSource {
 public:
  explicit NameSource(const HloModule& module) {
    for (const auto& c : module.computations()) {
      computations_.insert(c->name());
      for (const auto& i : c->instructions()) instructions_.insert(i->name());
    }
  }
  std::string Instruction(const std::string& base) { return Unique(instructions_, base + ".remat"); }
  std::string Computation(const std::string& base) { return Unique(computations_, base + ".remat"); }

 private:
  static std::string Unique(absl::flat_hash_set<std::string>& taken, const std::string& want) {
    std::string name = want;
    for (int64_t k = 2; taken.contains(name); ++k) name = absl::StrCat(want, k);
    taken.insert(name);
    return name;
  }
  absl::flat_hash_set<std::string> instructions_, computations_;
};

// A copy of `inst` with `operands`; a fusion gets its own copy of the fused computation (a fused
// computation belongs to exactly one fusion).
absl::StatusOr<HloInstruction*> Clone(HloInstruction& inst, const std::vector<HloInstruction*>& operands,
                                      const HloInstruction* before, NameSource& names) {
  HloComputation& computation = *inst.parent();
  HloModule& module = *computation.parent();
  auto clone = std::make_unique<HloInstruction>(inst.opcode(), inst.shape(), names.Instruction(inst.name()));
  clone->mutable_attrs() = inst.attrs();
  clone->mutable_called_computations() = inst.called_computations();
  for (HloInstruction* op : operands) clone->AppendOperand(op);
  HloInstruction* raw = computation.AddInstructionBefore(std::move(clone), before);
  if (inst.opcode() == O::kFusion) {
    const HloComputation& fused = *inst.called_computations()[0];
    HloComputation* copy =
        module.AddComputation(std::make_unique<HloComputation>(names.Computation(fused.name())));
    copy->set_execution_thread(fused.execution_thread());
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (const auto& f : fused.instructions()) {
      auto c = std::make_unique<HloInstruction>(f->opcode(), f->shape(), names.Instruction(f->name()));
      c->mutable_attrs() = f->attrs();
      c->mutable_called_computations() = f->called_computations();
      for (const HloInstruction* op : f->operands()) {
        auto it = map.find(op);
        if (it == map.end())
          return absl::InternalError(absl::StrCat("fused computation ", fused.name(), " is not in definition order"));
        c->AppendOperand(it->second);
      }
      map[f.get()] = copy->AddInstruction(std::move(c));
    }
    if (fused.root_instruction() == nullptr || !map.contains(fused.root_instruction()))
      return absl::InternalError(absl::StrCat("fused computation ", fused.name(), " has no root"));
    copy->set_root_instruction(map.at(fused.root_instruction()));
    copy->SetFusionInstruction(raw);
    raw->mutable_called_computations() = {copy};
  }
  return raw;
}

// Removes `inst` and then whatever became dead through it (never parameters, side-effecting or
// control-edged instructions); fused computations of removed fusions go too.
absl::StatusOr<int64_t> RemoveDead(HloInstruction* inst) {
  int64_t removed = 0;
  std::vector<HloInstruction*> work = {inst};
  while (!work.empty()) {
    HloInstruction* i = work.back();
    work.pop_back();
    if (i->user_count() > 0 || i->IsRoot() || !IsRematerializable(*i)) continue;
    HloComputation* computation = i->parent();
    std::vector<HloInstruction*> operands(i->operands().begin(), i->operands().end());
    std::vector<HloComputation*> fused;
    if (i->opcode() == O::kFusion) fused = i->called_computations();
    if (absl::Status s = computation->RemoveInstruction(i); !s.ok()) return s;
    ++removed;
    for (HloComputation* f : fused)
      if (absl::Status s = computation->parent()->RemoveFusedComputation(f); !s.ok()) return s;
    absl::flat_hash_set<HloInstruction*> seen;
    for (HloInstruction* op : operands)
      if (seen.insert(op).second) work.push_back(op);
  }
  return removed;
}

struct Candidate {
  HloInstruction* inst = nullptr;
  int64_t bytes = 0;
  std::vector<HloInstruction*> chain;  // instructions to clone, operands before users; inst last
};

class ComputationRematerializer {
 public:
  ComputationRematerializer(HloComputation& computation, int64_t limit, int64_t max_chain, bool include_parameters,
                            const MemoryByComputation& memory, NameSource& names)
      : computation_(computation), limit_(limit), max_chain_(std::max<int64_t>(1, max_chain)),
        include_parameters_(include_parameters), memory_(memory), names_(names) {}

  absl::StatusOr<RematerializationStats> Run() {
    RematerializationStats stats;
    stats.limit = limit_;
    if (absl::Status s = Analyze(); !s.ok()) return s;
    stats.peak_before = Peak();
    const int64_t max_steps = 4 * computation_.instruction_count() + 64;
    int64_t p = 0;
    for (int64_t step = 0; step < max_steps && p < (int64_t)sequence_.size(); ) {
      if (live_[p] <= limit_) {
        ++p;
        continue;
      }
      std::optional<Candidate> best = FindCandidate(p);
      if (!best) {
        ++p;
        continue;
      }
      ++step;
      absl::StatusOr<int64_t> removed = Apply(*best, p);
      if (!removed.ok()) return removed.status();
      stats.rematerialized += static_cast<int64_t>(best->chain.size());
      stats.removed += *removed;
      if (absl::Status s = Analyze(); !s.ok()) return s;
      p = std::max<int64_t>(0, p - *removed - 1);
    }
    stats.peak_after = Peak();
    return stats;
  }

 private:
  absl::Status Analyze() {
    sequence_.clear();
    for (const auto& inst : computation_.instructions()) sequence_.push_back(inst.get());
    absl::StatusOr<LogicalBuffers> buffers = ComputeLogicalBuffers(computation_);
    if (!buffers.ok()) return buffers.status();
    buffers_ = std::move(*buffers);
    absl::StatusOr<std::vector<int64_t>> live = LiveBytesPerStep(sequence_, buffers_, memory_, include_parameters_);
    if (!live.ok()) return live.status();
    live_ = std::move(*live);
    use_positions_.assign(buffers_.num_buffers(), {});
    for (size_t i = 0; i < sequence_.size(); ++i)
      for (int64_t id : buffers_.uses.at(sequence_[i])) use_positions_[id].push_back(static_cast<int64_t>(i));
    return absl::OkStatus();
  }

  int64_t Peak() const {
    int64_t fixed = 0;
    for (int64_t id = 0; id < buffers_.num_buffers(); ++id)
      if (buffers_.fixed[id] && (include_parameters_ || !buffers_.is_parameter[id])) fixed += buffers_.size[id];
    int64_t peak = fixed;
    for (int64_t v : live_) peak = std::max(peak, v);
    return peak;
  }

  // The single buffer `inst` defines, or -1.
  int64_t OwnBuffer(const HloInstruction* inst) const {
    const auto& d = buffers_.defined.at(inst);
    return d.size() == 1 ? d[0] : -1;
  }

  // Whether buffer `id` is still live just before position `n` without any change.
  bool LiveAt(int64_t id, int64_t n) const {
    if (buffers_.fixed[id] || buffers_.live_out[id]) return true;
    const auto& uses = use_positions_[id];
    return !uses.empty() && uses.back() >= n;
  }

  // Adds to `chain` what must be cloned so `inst` can run again just before position n; false
  // when an operand is dead there and cannot be recomputed within the chain budget.
  bool PlanChain(HloInstruction* inst, int64_t n, std::vector<HloInstruction*>& chain, int depth) const {
    if (std::find(chain.begin(), chain.end(), inst) != chain.end()) return true;
    for (HloInstruction* op : inst->operands()) {
      bool live = true;
      for (int64_t id : buffers_.points_to.at(op))
        if (!LiveAt(id, n)) live = false;
      if (live) continue;
      // Recompute the operand too: only its own single buffer, only cheap instructions.
      if (depth + 1 >= max_chain_ || OwnBuffer(op) < 0 || !IsRematerializable(*op)) return false;
      if (!PlanChain(op, n, chain, depth + 1)) return false;
    }
    chain.push_back(inst);
    return static_cast<int64_t>(chain.size()) <= max_chain_;
  }

  std::optional<Candidate> FindCandidate(int64_t p) const {
    std::optional<Candidate> best;
    for (int64_t x = 0; x < p; ++x) {
      HloInstruction* inst = sequence_[x];
      if (inst->IsRoot() || !IsRematerializable(*inst)) continue;
      const int64_t id = OwnBuffer(inst);
      if (id < 0 || buffers_.fixed[id] || buffers_.live_out[id] || buffers_.size[id] == 0) continue;
      const auto& uses = use_positions_[id];
      auto later = std::upper_bound(uses.begin(), uses.end(), p);
      if (later == uses.end()) continue;  // not live across p
      if (std::binary_search(uses.begin(), uses.end(), p)) continue;  // needed at p itself
      // Every later reader must read `inst` directly, so it can be pointed at the clone.
      bool direct = true;
      for (auto it = later; it != uses.end() && direct; ++it) {
        const HloInstruction* user = sequence_[*it];
        direct = std::find(user->operands().begin(), user->operands().end(), inst) != user->operands().end();
      }
      if (!direct) continue;
      Candidate c{inst, buffers_.size[id], {}};
      if (!PlanChain(inst, *later, c.chain, 0)) continue;
      // Recomputed operands are extra bytes beside the clone just before the use: only where
      // that point stays within the limit.
      int64_t extra = 0;
      for (const HloInstruction* member : c.chain)
        if (member != inst) extra += buffers_.size[OwnBuffer(member)];
      if (extra > 0 && live_[*later] + extra > limit_) continue;
      if (!best || c.bytes > best->bytes || (c.bytes == best->bytes && c.chain.size() < best->chain.size()))
        best = std::move(c);
    }
    return best;
  }

  // Clones the chain before the first use after p and points the later uses at the clone.
  // Returns how many instructions were removed as dead.
  absl::StatusOr<int64_t> Apply(const Candidate& c, int64_t p) {
    const int64_t id = OwnBuffer(c.inst);
    const auto& uses = use_positions_[id];
    const int64_t n = *std::upper_bound(uses.begin(), uses.end(), p);
    HloInstruction* before = sequence_[n];
    std::vector<HloInstruction*> later_users;
    for (auto it = std::upper_bound(uses.begin(), uses.end(), p); it != uses.end(); ++it)
      later_users.push_back(sequence_[*it]);
    absl::flat_hash_map<HloInstruction*, HloInstruction*> cloned;
    for (HloInstruction* inst : c.chain) {
      std::vector<HloInstruction*> operands;
      for (HloInstruction* op : inst->operands()) {
        auto it = cloned.find(op);
        operands.push_back(it == cloned.end() ? op : it->second);
      }
      absl::StatusOr<HloInstruction*> clone = Clone(*inst, operands, before, names_);
      if (!clone.ok()) return clone.status();
      cloned[inst] = *clone;
    }
    HloInstruction* replacement = cloned.at(c.inst);
    for (HloInstruction* user : later_users)
      for (int64_t i = 0; i < user->operand_count(); ++i)
        if (user->operand(i) == c.inst) user->ReplaceOperandWith(i, replacement);
    int64_t removed = 0;
    if (c.inst->user_count() == 0) {
      absl::StatusOr<int64_t> r = RemoveDead(c.inst);
      if (!r.ok()) return r.status();
      removed = *r;
    }
    return removed;
  }

  HloComputation& computation_;
  const int64_t limit_;
  const int64_t max_chain_;
  const bool include_parameters_;
  const MemoryByComputation& memory_;
  NameSource& names_;
  std::vector<HloInstruction*> sequence_;
  LogicalBuffers buffers_;
  std::vector<int64_t> live_;
  std::vector<std::vector<int64_t>> use_positions_;
};

}  // namespace

absl::StatusOr<RematerializationStats> HloRematerializationPass::Rematerialize(HloModule& module, int64_t limit,
                                                                               int64_t max_chain_length) {
  if (limit <= 0) return absl::InvalidArgumentError("rematerialization needs a positive memory limit");
  if (module.entry_computation() == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  if (!module.is_scheduled()) {
    absl::StatusOr<std::vector<std::pair<std::string, MemorySchedulerResult>>> s = ScheduleModule(module);
    if (!s.ok()) return s.status();
  }
  NameSource names(module);
  RematerializationStats total;
  total.limit = limit;
  absl::StatusOr<int64_t> before = PeakMemoryOfCurrentOrder(*module.entry_computation());
  if (!before.ok()) return before.status();
  MemoryByComputation memory;
  // Callees first, so a caller counts what its callees need after their rematerialization.
  for (HloComputation* computation : SequentialComputations(module)) {
    const bool is_entry = computation == module.entry_computation();
    ComputationRematerializer remat(*computation, limit, max_chain_length, is_entry, memory, names);
    absl::StatusOr<RematerializationStats> stats = remat.Run();
    if (!stats.ok()) return stats.status();
    total.rematerialized += stats->rematerialized;
    total.removed += stats->removed;
    if (is_entry) total.peak_after = stats->peak_after;
    memory[computation] = stats->peak_after;
  }
  total.peak_before = *before;
  return total;
}

}  // namespace hloc
