// The split-reduction plan (see gpu_reduction_split.h): the [B, R, C] view of a fusion's reduce
// input, the parameters read along elementwise/transpose paths, and 32-bit index arithmetic.
#include "codegen/gpu/gpu_reduction_split.h"

#include <algorithm>
#include <set>

namespace hloc::codegen::gpu {
namespace {

bool Dims(const Shape& s, const std::vector<int64_t>& d) { return s.IsArray() && s.dimensions() == d; }
int64_t Product(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

}  // namespace

// The row-major index of `linear` into `dims`, with 32-bit division when the dimensions' product
// allows (64-bit division by a constant costs several times more on the GPU).
IrArray::Index DelinearizeNarrow(llvm::Value* linear, const std::vector<int64_t>& dims, llvm::IRBuilderBase& b) {
  int64_t total = 1;
  for (int64_t d : dims) total *= std::max<int64_t>(1, d);
  if (dims.size() <= 1 || total >= (int64_t{1} << 31)) return DelinearizeRowMajor(linear, dims, b);
  llvm::Value* rest = b.CreateTrunc(linear, b.getInt32Ty());
  std::vector<llvm::Value*> idx(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      idx[d] = b.CreateZExt(rest, b.getInt64Ty());
      break;
    }
    llvm::Value* size = b.getInt32(static_cast<uint32_t>(std::max<int64_t>(1, dims[d])));
    idx[d] = b.CreateZExt(b.CreateURem(rest, size), b.getInt64Ty());
    rest = b.CreateUDiv(rest, size);
  }
  return IrArray::Index(idx);
}

// Parameters whose elements a reduce reads through elementwise ops, copies and transposes only:
// param index[i] = reduce input index[map[i]]. A parameter reached along two different paths
// (or through anything else as well) is left out.
std::map<int64_t, std::vector<int64_t>> TraceParameters(const SplitPlan& p) {
  std::map<int64_t, std::vector<int64_t>> found;
  std::set<int64_t> bad;
  std::vector<std::pair<const HloInstruction*, std::vector<int64_t>>> work;
  std::vector<int64_t> ident;
  for (size_t i = 0; i < p.in_dims.size(); ++i) ident.push_back(static_cast<int64_t>(i));
  for (const HloInstruction* r : p.reduces)
    for (int64_t i = 0; i < r->operand_count() / 2; ++i) work.push_back({r->operand(i), ident});
  int64_t budget = 4096;  // a DAG walked as a tree: bounded
  while (!work.empty() && budget-- > 0) {
    auto [inst, map] = work.back();
    work.pop_back();
    switch (inst->opcode()) {
      case HloOpcode::kParameter: {
        const int64_t pn = inst->attrs().parameter_number;
        auto it = found.find(pn);
        if (it != found.end() && it->second != map) bad.insert(pn);
        found[pn] = map;
        continue;
      }
      case HloOpcode::kCopy:
        work.push_back({inst->operand(0), map});
        continue;
      case HloOpcode::kTranspose: {
        const std::vector<int64_t>& perm = inst->attrs().dimensions;
        if (perm.size() != map.size()) continue;
        std::vector<int64_t> next(map.size());
        for (size_t i = 0; i < perm.size(); ++i) next[perm[i]] = map[i];
        work.push_back({inst->operand(0), next});
        continue;
      }
      default:
        if (!inst->IsElementwise() || !inst->shape().IsArray()) continue;
        for (const HloInstruction* op : inst->operands())
          if (op->shape().IsArray() && op->shape().dimensions() == inst->shape().dimensions())
            work.push_back({op, map});
        continue;
    }
  }
  if (!work.empty()) return {};
  for (int64_t pn : bad) found.erase(pn);
  return found;
}

std::optional<ReduceHead> AnalyzeReduceHead(const HloComputation& fused) {
  ReduceHead h;
  for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
    if (inst->opcode() == HloOpcode::kReduce) h.reduces.push_back(inst);
  if (h.reduces.empty()) return std::nullopt;
  h.in_dims = h.reduces[0]->operand(0)->shape().dimensions();
  h.reduced = h.reduces[0]->attrs().dimensions;
  std::sort(h.reduced.begin(), h.reduced.end());
  if (h.reduced.empty()) return std::nullopt;
  return h;
}

std::optional<SplitPlan> AnalyzeSplit(const HloComputation& fused) {
  SplitPlan p;
  const auto order = fused.MakeInstructionPostOrder();
  std::optional<ReduceHead> head = AnalyzeReduceHead(fused);
  if (!head) return std::nullopt;
  p.reduces = head->reduces;
  p.in_dims = head->in_dims;
  const int64_t rank = static_cast<int64_t>(p.in_dims.size());
  const std::vector<int64_t>& red = head->reduced;
  std::vector<bool> reduced(rank, false);
  for (int64_t d : red) {
    if (d < 0 || d >= rank) return std::nullopt;
    reduced[d] = true;
  }
  // C: the trailing run of kept dimensions.
  int64_t c_start = rank;
  while (c_start > 0 && !reduced[c_start - 1]) --c_start;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      p.r_dims.push_back(d);
      p.R *= p.in_dims[d];
    } else {
      p.kept_dims.push_back(p.in_dims[d]);
      if (d >= c_start) {
        p.c_dims.push_back(d);
        p.C *= p.in_dims[d];
      } else {
        p.b_dims.push_back(d);
        p.B *= p.in_dims[d];
      }
    }
  }
  // Every reduce reduces the same dimensions of operands of one shape, and reads no reduce.
  std::set<const HloInstruction*> dep;
  std::set<const HloInstruction*> reshaped_outputs;  // may only be outputs (read by nothing else)
  for (const HloInstruction* r : p.reduces) {
    std::vector<int64_t> d = r->attrs().dimensions;
    std::sort(d.begin(), d.end());
    if (d != red || r->to_apply() == nullptr) return std::nullopt;
    const int64_t n = r->operand_count() / 2;
    for (int64_t i = 0; i < n; ++i)
      if (!Dims(r->operand(i)->shape(), p.in_dims)) return std::nullopt;
  }
  for (const HloInstruction* inst : order) {
    bool d = false;
    for (const HloInstruction* op : inst->operands()) d = d || dep.count(op) > 0;
    if (inst->opcode() == HloOpcode::kReduce) {
      if (d) return std::nullopt;  // chains are the row emitter's
      dep.insert(inst);
      continue;
    }
    if (!d) continue;
    for (const HloInstruction* op : inst->operands())
      if (reshaped_outputs.count(op) && inst->opcode() != HloOpcode::kTuple) return std::nullopt;
    dep.insert(inst);
    switch (inst->opcode()) {
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kTuple:
        continue;
      case HloOpcode::kReshape:
        // keepdims: a reshape of the reduced value to another shape of its element count (a
        // reduce to f32[64] then f32[1,1,1,64]) may be an output; the row-major order is kept.
        if (Dims(inst->operand(0)->shape(), p.kept_dims) && !Dims(inst->shape(), p.kept_dims) &&
            inst->shape().IsArray() && inst->shape().num_elements() == Product(p.kept_dims)) {
          reshaped_outputs.insert(inst);
          continue;
        }
        [[fallthrough]];
      case HloOpcode::kBitcast:
      case HloOpcode::kCopy:
        if (!Dims(inst->shape(), p.kept_dims) || !Dims(inst->operand(0)->shape(), p.kept_dims)) return std::nullopt;
        continue;
      default:
        if (!inst->IsElementwise() || !Dims(inst->shape(), p.kept_dims)) return std::nullopt;
        for (const HloInstruction* op : inst->operands())
          if (!Dims(op->shape(), p.kept_dims) && op->shape().rank() != 0) return std::nullopt;
        continue;
    }
  }
  const HloInstruction* root = fused.root_instruction();
  auto add_output = [&](const HloInstruction* o) -> bool {
    if (!o->shape().IsArray()) return false;
    if (dep.count(o)) {
      if (reshaped_outputs.count(o)) {
        p.outputs.push_back({o, -1, false, /*reshaped=*/true});
        return true;
      }
      if (!Dims(o->shape(), p.kept_dims)) return false;
      p.outputs.push_back({o, -1, false});
    } else if (Dims(o->shape(), p.in_dims)) {
      p.outputs.push_back({o, -1, true});
    } else {
      return false;
    }
    return true;
  };
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* op : root->operands())
      if (!add_output(op)) return std::nullopt;
  } else if (root->opcode() == HloOpcode::kReduce && root->shape().IsTuple()) {
    for (int64_t i = 0; i < static_cast<int64_t>(root->shape().tuple_shapes().size()); ++i) p.outputs.push_back({root, static_cast<int>(i), false});
  } else if (!add_output(root)) {
    return std::nullopt;
  }
  return p;
}

}  // namespace hloc::codegen::gpu
