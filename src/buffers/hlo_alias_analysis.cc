// HloAliasAnalysis: a union-find over the dataflow's values (XLA's hlo_alias_analysis.cc).
#include "buffers/hlo_alias_analysis.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {

namespace {

class UnionFind {
 public:
  explicit UnionFind(int64_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int64_t Find(int64_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void Union(int64_t a, int64_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int64_t> parent_;
};

}  // namespace

std::vector<HloPosition> HloBuffer::ComputePositions() const {
  std::vector<HloPosition> out;
  for (const HloValue* v : values_) out.insert(out.end(), v->positions().begin(), v->positions().end());
  return out;
}

absl::StatusOr<std::unique_ptr<HloAliasAnalysis>> HloAliasAnalysis::Run(const HloModule& module) {
  absl::StatusOr<std::unique_ptr<HloDataflowAnalysis>> df = HloDataflowAnalysis::Run(module);
  if (!df.ok()) return df.status();
  auto a = std::make_unique<HloAliasAnalysis>();
  a->dataflow_ = std::move(*df);
  const HloDataflowAnalysis& dataflow = *a->dataflow_;
  const int64_t n = static_cast<int64_t>(dataflow.values().size());
  UnionFind uf(n);

  // Unites every value at (b, b_index) with every value at (a, a_index).
  auto unite_at = [&](const HloInstruction* x, const ShapeIndex& xi, const HloInstruction* y, const ShapeIndex& yi) {
    const std::vector<int64_t>& xs = dataflow.GetValueSet(x, xi);
    const std::vector<int64_t>& ys = dataflow.GetValueSet(y, yi);
    if (xs.empty()) return;
    for (int64_t v : xs) uf.Union(xs[0], v);
    for (int64_t v : ys) uf.Union(xs[0], v);
  };

  for (const auto& comp : module.computations()) {
    if (dataflow.context(comp.get()) == ComputationKind::kFused) continue;
    for (const auto& inst_ptr : comp->instructions()) {
      const HloInstruction* inst = inst_ptr.get();
      const auto* sets = dataflow.GetInstructionValueSet(inst);
      if (sets == nullptr) continue;
      // A position that may hold several values (a call site's parameter fed from more than one
      // place) needs them all in one buffer.
      for (const auto& [i, s] : *sets)
        for (int64_t v : s) uf.Union(s[0], v);
      switch (inst->opcode()) {
        case HloOpcode::kWhile: {
          const HloComputation* body = inst->while_body();
          const HloComputation* cond = inst->while_condition();
          for (const auto& [i, s] : *sets) {
            unite_at(inst, i, inst->operand(0), i);
            if (body->root_instruction()) unite_at(inst, i, body->root_instruction(), i);
            if (body->num_parameters() > 0) unite_at(inst, i, body->parameter_instruction(0), i);
            if (cond->num_parameters() > 0) unite_at(inst, i, cond->parameter_instruction(0), i);
          }
          break;
        }
        case HloOpcode::kConditional:
          for (const auto& [i, s] : *sets)
            for (const HloComputation* branch : inst->called_computations())
              if (branch->root_instruction()) unite_at(inst, i, branch->root_instruction(), i);
          break;
        default:
          break;
      }
      if (dataflow.context(comp.get()) != ComputationKind::kSequential) continue;
      for (const auto& [in, out_index] : GetInPlaceInputOutputPairs(inst))
        if (in.first < inst->operand_count()) unite_at(inst, out_index, inst->operand(in.first), in.second);
    }
  }
  // Donated parameters: the output reuses the parameter's buffer.
  const HloComputation* entry = module.entry_computation();
  for (const InputOutputAlias& alias : module.config().input_output_alias) {
    if (alias.parameter_number < 0 || alias.parameter_number >= entry->num_parameters()) continue;
    unite_at(entry->root_instruction(), alias.output_index, entry->parameter_instruction(alias.parameter_number),
             alias.parameter_index);
  }

  // Buffers numbered by their smallest value id.
  a->value_to_buffer_.assign(n, -1);
  std::vector<int64_t> root_to_buffer(n, -1);
  for (int64_t v = 0; v < n; ++v) {
    int64_t r = uf.Find(v);
    if (root_to_buffer[r] < 0) {
      root_to_buffer[r] = static_cast<int64_t>(a->buffers_.size());
      a->buffers_.emplace_back();
      a->buffers_.back().id_ = root_to_buffer[r];
    }
    a->value_to_buffer_[v] = root_to_buffer[r];
    a->buffers_[root_to_buffer[r]].values_.push_back(&dataflow.GetValue(v));
  }
  return a;
}

std::vector<const HloBuffer*> HloAliasAnalysis::ComputeBuffersAt(const HloInstruction* instruction,
                                                                  const ShapeIndex& index) const {
  std::vector<const HloBuffer*> out;
  for (int64_t v : dataflow_->GetValueSet(instruction, index)) {
    const HloBuffer* b = &buffers_[value_to_buffer_[v]];
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  }
  return out;
}

std::string HloAliasAnalysis::ToString() const {
  std::string out = absl::StrCat("HloAliasAnalysis, module ", dataflow_->module().name(), "\n");
  for (const HloBuffer& b : buffers_) {
    std::vector<std::string> vs;
    for (const HloValue* v : b.values()) vs.push_back(v->ToShortString());
    absl::StrAppend(&out, "  buffer ", b.id(), ": ", absl::StrJoin(vs, ", "), "\n");
  }
  return out;
}

}  // namespace hloc
