// Replay checker for buffer assignments (see the header). Bytes are tracked by "token": each
// write of a value makes a fresh token, so a read notices any other write in between, even one
// by a value of the same buffer (e.g. swapped loop state copied back in the wrong order).
#include "buffers/buffer_assignment_checker.h"

#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "buffers/hlo_alias_analysis.h"

namespace hloc {

namespace {

bool IsForwarding(HloOpcode op) {
  return op == HloOpcode::kTuple || op == HloOpcode::kGetTupleElement || op == HloOpcode::kBitcast ||
         op == HloOpcode::kOptimizationBarrier || op == HloOpcode::kDomain || op == HloOpcode::kAddDependency ||
         op == HloOpcode::kWhile || op == HloOpcode::kConditional || op == HloOpcode::kCall ||
         op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone ||
         op == HloOpcode::kCopyDone;
}

class Replayer {
 public:
  Replayer(const HloModule& module, const BufferAssignment& assignment, const HloAliasAnalysis& alias)
      : module_(module), ba_(assignment), alias_(alias), df_(alias.dataflow()) {}

  absl::Status Run() {
    if (absl::Status s = CheckCoverage(); !s.ok()) return s;
    if (absl::Status s = Replay(module_.entry_computation(), 0); !s.ok()) return s;
    const HloInstruction* root = module_.entry_computation()->root_instruction();
    for (const ShapeIndex& i : AllShapeIndices(root->shape()))
      if (absl::Status s = CheckRead(root, i, "the module's output"); !s.ok()) return s;
    return absl::OkStatus();
  }

 private:
  absl::Status CheckCoverage() {
    for (const auto& v : df_.values()) {
      if (df_.context(v->defining_instruction()->parent()) != ComputationKind::kSequential) continue;
      if (BufferSizeOfShape(v->shape()) == 0) continue;
      absl::StatusOr<BufferAllocation::Slice> s = ba_.GetUniqueSlice(v->defining_instruction(), v->defining_index());
      if (!s.ok()) return absl::InternalError(absl::StrCat("value ", v->ToShortString(), " has no slice"));
      if (s->index < 0 || s->index >= static_cast<int64_t>(ba_.allocations().size()) || s->offset < 0 ||
          s->offset + s->size > ba_.allocations()[s->index].size())
        return absl::InternalError(absl::StrCat("value ", v->ToShortString(), " lies outside its allocation"));
    }
    return absl::OkStatus();
  }

  absl::Status Replay(const HloComputation* comp, int depth) {
    if (depth > 64) return absl::OkStatus();  // deep nests: the outer levels were checked
    for (const auto& inst_ptr : comp->instructions()) {
      const HloInstruction* inst = inst_ptr.get();
      std::vector<const HloComputation*> runs;
      switch (inst->opcode()) {
        case HloOpcode::kWhile:
          runs = {inst->while_condition(), inst->while_body(), inst->while_condition(), inst->while_body(),
                  inst->while_condition()};
          if (depth > 3) runs.resize(3);  // bound the replay of deep loop nests
          break;
        case HloOpcode::kConditional:
        case HloOpcode::kCall:
        case HloOpcode::kAsyncStart:
          runs.assign(inst->called_computations().begin(), inst->called_computations().end());
          break;
        default:
          break;
      }
      for (const HloComputation* c : runs)
        if (absl::Status s = Replay(c, depth + 1); !s.ok()) return s;
      if (!IsForwarding(inst->opcode())) {
        for (int64_t k = 0; k < inst->operand_count(); ++k)
          for (const ShapeIndex& i : AllShapeIndices(inst->operand(k)->shape())) {
            if (inst->opcode() == HloOpcode::kCopy && !i.empty()) continue;
            if (absl::Status s = CheckRead(inst->operand(k), i, inst->name()); !s.ok()) return s;
          }
      }
      for (const ShapeIndex& i : AllShapeIndices(inst->shape())) {
        if (!df_.ValueIsDefinedAt(inst, i)) continue;
        const HloValue& v = df_.GetValueDefinedAt(inst, i);
        if (BufferSizeOfShape(v.shape()) == 0) continue;
        absl::StatusOr<BufferAllocation::Slice> s = ba_.GetUniqueSlice(inst, i);
        if (!s.ok()) return s.status();
        if (v.is_phi()) {
          // A phi names whatever its buffer holds now (the init, or the last iteration's result).
          token_of_value_[v.id()] = CurrentToken(*s);
        } else {
          token_of_value_[v.id()] = next_token_;
          Write(*s, next_token_++);
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckRead(const HloInstruction* operand, const ShapeIndex& index, const std::string& reader) {
    const std::vector<int64_t>& set = df_.GetValueSet(operand, index);
    if (set.empty()) return absl::OkStatus();
    const HloValue& v = df_.GetValue(set[0]);
    if (BufferSizeOfShape(v.shape()) == 0) return absl::OkStatus();
    absl::StatusOr<BufferAllocation::Slice> s = ba_.GetUniqueSlice(operand, index);
    if (!s.ok()) return absl::InternalError(absl::StrCat(reader, " reads ", operand->name(), ShapeIndexToString(index),
                                                         ", which has no unique slice"));
    auto tok = token_of_value_.find(v.id());
    int64_t expected = tok == token_of_value_.end() ? -2 : tok->second;
    auto& segs = owners_[s->index];
    int64_t pos = s->offset, end = s->offset + s->size;
    auto it = segs.upper_bound(pos);
    if (it != segs.begin()) --it;
    for (; pos < end; ++it) {
      if (it == segs.end() || it->first > pos || it->second.first <= pos || it->second.second != expected)
        return absl::InternalError(absl::StrCat(
            reader, " reads ", operand->name(), ShapeIndexToString(index), " (", v.ToShortString(),
            ") at allocation ", s->index, " [", s->offset, ",", end, "), but byte ", pos,
            (it == segs.end() || it->first > pos || it->second.first <= pos)
                ? std::string(" was never written")
                : absl::StrCat(" holds another value (token ", it->second.second, ", expected ", expected, ")")));
      pos = it->second.first;
    }
    return absl::OkStatus();
  }

  // The one token covering a slice, or -1 when it is mixed or unwritten.
  int64_t CurrentToken(const BufferAllocation::Slice& s) {
    auto& segs = owners_[s.index];
    auto it = segs.upper_bound(s.offset);
    if (it == segs.begin()) return -1;
    --it;
    if (it->first > s.offset || it->second.first < s.offset + s.size) return -1;
    return it->second.second;
  }

  // Claims [offset, offset+size) of an allocation for `owner`: segments are [start, end) -> owner.
  void Write(const BufferAllocation::Slice& s, int64_t owner) {
    auto& segs = owners_[s.index];
    int64_t a = s.offset, b = s.offset + s.size;
    std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> keep;
    auto it = segs.upper_bound(a);
    if (it != segs.begin()) --it;
    while (it != segs.end() && it->first < b) {
      int64_t st = it->first, en = it->second.first, ow = it->second.second;
      if (en > a) {
        if (st < a) keep.push_back({st, {a, ow}});
        if (en > b) keep.push_back({b, {en, ow}});
        it = segs.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& k : keep) segs[k.first] = k.second;
    segs[a] = {b, owner};
  }

  const HloModule& module_;
  const BufferAssignment& ba_;
  const HloAliasAnalysis& alias_;
  const HloDataflowAnalysis& df_;
  // Every write makes a new token; a value's token is what its readers must find in its bytes.
  std::map<int64_t, std::map<int64_t, std::pair<int64_t, int64_t>>> owners_;
  absl::flat_hash_map<int64_t, int64_t> token_of_value_;
  int64_t next_token_ = 0;
};

}  // namespace

absl::Status CheckBufferAssignment(const HloModule& module, const BufferAssignment& assignment) {
  absl::StatusOr<std::unique_ptr<HloAliasAnalysis>> alias = HloAliasAnalysis::Run(module);
  if (!alias.ok()) return alias.status();
  return Replayer(module, assignment, **alias).Run();
}

}  // namespace hloc
