// The row-reduction plan (see gpu_reduction_row_plan.h): the analysis of a fusion as rows, and
// the launch (threads per row, rows per block, register rows) the profile's tuning gives them.
#include "codegen/gpu/gpu_reduction_row_plan.h"

#include <algorithm>

#include "codegen/gpu/gpu_reduction_split.h"
#include "llvm/Support/MathExtras.h"

namespace hloc::codegen::gpu {
namespace {

using Dims = std::vector<int64_t>;

bool SameDims(const Shape& s, const Dims& dims) { return s.IsArray() && s.dimensions() == dims; }

int64_t Count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Threads per row: a warp for short rows (several rows per block), a block for long ones, and
// for rows shorter than a warp the next power of two (several rows per warp: numpyro's
// [4194304, 2] sums left 30 of 32 lanes idle with a warp each; XLA packs such rows too).
void ChooseThreadsPerRow(const RowPlan& plan, const HloComputation& fused, const GpuDeviceInfo& dev,
                         RowLaunchPlan& lp) {
  const int64_t rows = plan.rows, row_len = plan.row_len;
  if (row_len < 32) {
    // A long chain's reduced-shape epilogue runs on a row's first lane only: with several lanes
    // a row, the others would idle through it (numpyro's lgamma epilogues over [4194304, 2]).
    const bool long_chain = fused.instruction_count() > kLongChainInstructions;
    lp.per_row = long_chain ? 1 : static_cast<int64_t>(llvm::PowerOf2Ceil(static_cast<uint64_t>(row_len)));
    lp.rows_per_block = std::min<int64_t>(256 / lp.per_row, rows);
  } else if (row_len <= dev.row_warp_row_max_elements) {
    lp.rows_per_block = std::min<int64_t>(dev.row_warp_rows_per_block, rows);
  } else {
    lp.per_row = lp.long_rows && rows < 4 * dev.sm_count ? 1024 : row_len >= 2048 ? 512 : 256;
  }
}

// The narrowest element (in bytes, at most 16) a register row loads or stores: its row-shaped
// parameters and outputs. It sets the vector width (16-byte accesses).
int MinRowElementBytes(const RowPlan& plan, const HloComputation& fused) {
  int min_bytes = 16;
  for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
    if (inst->opcode() == HloOpcode::kParameter && inst->shape().IsArray() &&
        Count(inst->shape().dimensions()) == plan.rows * plan.row_len)
      min_bytes = std::min(min_bytes, std::max(1, ByteWidth(inst->shape().element_type())));
  for (size_t o = 0; o < plan.outputs.size(); ++o)
    if (plan.output_is_row[o])
      min_bytes = std::min(min_bytes, std::max(1, ByteWidth(plan.outputs[o]->shape().element_type())));
  return min_bytes;
}

// Register rows: V consecutive elements per vector access; per_row shrinks so that every
// thread owns a few vectors (latency: more loads in flight per thread, fewer warps per
// barrier).
void ChooseRegisterRows(const RowPlan& plan, const HloComputation& fused, const GpuDeviceInfo& dev,
                        RowLaunchPlan& lp) {
  const int64_t row_len = plan.row_len;
  lp.vec = 16 / MinRowElementBytes(plan, fused);
  if (lp.rows_per_block == 1)
    while (lp.per_row > 64 && row_len < lp.per_row * lp.vec * dev.row_vectors_per_thread) lp.per_row /= 2;
  while (lp.vec > 1 && row_len % (lp.per_row * lp.vec) != 0) lp.vec /= 2;
  if (row_len % (lp.per_row * lp.vec) == 0 && row_len / lp.per_row <= 32) lp.per_thread = row_len / lp.per_row;
  if (lp.per_thread == 0) lp.vec = 1;
}

}  // namespace

// A reshape, or a bitcast that is one (row-major layouts on both sides, one element type).
bool IsReshapeLike(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kReshape) return true;
  if (inst->opcode() != HloOpcode::kBitcast) return false;
  const Shape& a = inst->shape();
  const Shape& b = inst->operand(0)->shape();
  return a.IsArray() && b.IsArray() && a.element_type() == b.element_type() && IsRowMajorLayout(a) &&
         IsRowMajorLayout(b);
}

std::optional<RowPlan> AnalyzeRows(const HloComputation& fused) {
  RowPlan p;
  const auto order = fused.MakeInstructionPostOrder();
  std::optional<ReduceHead> head = AnalyzeReduceHead(fused);
  if (!head) return std::nullopt;
  p.reduces = head->reduces;
  p.in_dims = head->in_dims;
  const int64_t rank = static_cast<int64_t>(p.in_dims.size());
  const std::vector<int64_t>& red = head->reduced;
  for (size_t i = 0; i < red.size(); ++i)
    if (red[i] != rank - static_cast<int64_t>(red.size()) + static_cast<int64_t>(i)) return std::nullopt;
  const int64_t nk = rank - static_cast<int64_t>(red.size());
  p.kept_dims.assign(p.in_dims.begin(), p.in_dims.begin() + nk);
  p.reduced_dims.assign(p.in_dims.begin() + nk, p.in_dims.end());
  p.rows = Count(p.kept_dims);
  p.row_len = Count(p.reduced_dims);
  const int64_t n_all = p.rows * p.row_len;
  // Shapes of the row's element count (or the reduced shape's) that are not in_dims (kept_dims):
  // only when the two counts differ, so that a shape says which one it is.
  auto row_space = [&](const Shape& s) {
    return s.IsArray() && (s.dimensions() == p.in_dims || (p.row_len > 1 && Count(s.dimensions()) == n_all));
  };
  auto kept_space = [&](const Shape& s) {
    return s.IsArray() && (s.dimensions() == p.kept_dims || (p.row_len > 1 && Count(s.dimensions()) == p.rows));
  };
  for (const HloInstruction* r : p.reduces) {
    std::vector<int64_t> d = r->attrs().dimensions;
    std::sort(d.begin(), d.end());
    if (d != red || r->to_apply() == nullptr) return std::nullopt;
    const int64_t n = r->operand_count() / 2;
    for (int64_t i = 0; i < n; ++i)
      if (!SameDims(r->operand(i)->shape(), p.in_dims)) return std::nullopt;
  }
  auto note_shape = [&](const Shape& s) {
    if (!s.IsArray()) return;
    if (s.dimensions() != p.in_dims && row_space(s)) p.row_shapes.insert(s.dimensions());
    if (s.dimensions() != p.kept_dims && kept_space(s)) p.kept_shapes.insert(s.dimensions());
  };
  // What depends on a reduce must keep rows apart: elementwise ops over row- or kept-shaped
  // values, broadcasts of kept-shaped values along the row, reshapes within the row's (or the
  // reduced) element count, tuple pieces of variadic reduces.
  std::set<const HloInstruction*> dep;
  for (const HloInstruction* inst : order) {
    if (inst->opcode() == HloOpcode::kParameter) note_shape(inst->shape());
    if (IsReshapeLike(inst)) {
      note_shape(inst->shape());
      note_shape(inst->operand(0)->shape());
    }
    bool d = inst->opcode() == HloOpcode::kReduce;
    for (const HloInstruction* op : inst->operands()) d = d || dep.count(op) > 0;
    if (!d) continue;
    dep.insert(inst);
    const Shape& s = inst->shape();
    switch (inst->opcode()) {
      case HloOpcode::kReduce:
        for (int64_t i = inst->operand_count() / 2; i < inst->operand_count(); ++i)
          if (dep.count(inst->operand(i))) return std::nullopt;  // an init value computed from a row
        continue;
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kTuple:
        continue;
      case HloOpcode::kBroadcast: {
        const Shape& os = inst->operand(0)->shape();
        if (!SameDims(os, p.kept_dims)) return std::nullopt;
        std::vector<int64_t> ident;
        for (int64_t i = 0; i < nk; ++i) ident.push_back(i);
        if (inst->attrs().dimensions != ident) return std::nullopt;
        if (!SameDims(s, p.in_dims) && !SameDims(s, p.kept_dims)) return std::nullopt;
        continue;
      }
      case HloOpcode::kBitcast:
      case HloOpcode::kReshape:
      case HloOpcode::kCopy: {
        const Shape& os = inst->operand(0)->shape();
        if (inst->opcode() == HloOpcode::kBitcast && !IsReshapeLike(inst) &&
            !(s.IsArray() && os.IsArray() && s.dimensions() == os.dimensions() &&
              MinorToMajorOf(s) == MinorToMajorOf(os)))
          return std::nullopt;
        if (SameDims(s, os.dimensions())) continue;
        if (inst->opcode() == HloOpcode::kCopy) return std::nullopt;
        if ((row_space(s) && row_space(os)) || (kept_space(s) && kept_space(os))) continue;
        return std::nullopt;
      }
      default:
        if (!inst->IsElementwise()) return std::nullopt;
        if (!row_space(s) && !kept_space(s)) return std::nullopt;
        for (const HloInstruction* op : inst->operands())
          if (!SameDims(op->shape(), s.dimensions()) && op->shape().rank() != 0) return std::nullopt;
        continue;
    }
  }
  const HloInstruction* root = fused.root_instruction();
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* op : root->operands()) p.outputs.push_back(op);
  } else if (root->shape().IsTuple()) {
    return std::nullopt;  // a variadic reduce root: the loop kernel splits its struct
  } else {
    p.outputs.push_back(root);
  }
  for (const HloInstruction* o : p.outputs) {
    if (!o->shape().IsArray()) return std::nullopt;
    note_shape(o->shape());
    if (row_space(o->shape())) {
      p.output_is_row.push_back(true);
    } else if (kept_space(o->shape())) {
      p.output_is_row.push_back(false);
    } else {
      return std::nullopt;
    }
  }
  return p;
}

RowLaunchPlan ComputeRowLaunchPlan(const RowPlan& plan, const HloComputation& fused, const GpuDeviceInfo& dev) {
  RowLaunchPlan lp;
  lp.long_rows = plan.row_len >= dev.row_long_row_elements;
  ChooseThreadsPerRow(plan, fused, dev, lp);
  ChooseRegisterRows(plan, fused, dev, lp);
  // A chain over long rows that are not kept in registers (logsumexp's max then exp-sum over
  // 32000 logits) reads each row again in every pass after the first. Those re-reads come from
  // L1/L2 only while the rows of all resident blocks fit there: 1024-thread blocks (two per SM)
  // hold half the rows 512-thread blocks would (multi_output_fusion's cost model assumes this
  // when it puts a row max into such a chain).
  // Measured on the H200 (logsumexp_xent.large, 8192 x 32000 f32): 1024 threads 394-399 us,
  // 512 threads 398 us; walking the later passes backwards (for L1 hits) gained nothing.
  lp.rereads = lp.per_thread == 0 && lp.rows_per_block == 1 && plan.reduces.size() >= 2;
  if (lp.rereads && lp.long_rows) lp.per_row = 1024;
  // Such rows fold U elements per loop trip (the same order as one at a time), so that each
  // warp has U loads in flight instead of waiting on every load before issuing the next.
  // (row_reduction_fold_unroll: H200, logsumexp_xent.large: U=1 429 us, U=4 399 us, U=8 400 us.)
  lp.fold_unroll = lp.rereads && lp.long_rows ? dev.row_fold_unroll : 1;
  lp.block = lp.per_row * lp.rows_per_block;
  lp.groups = (plan.rows + lp.rows_per_block - 1) / lp.rows_per_block;
  const int64_t resident = std::max<int64_t>(1, dev.max_threads_per_sm / lp.block) * dev.sm_count;
  lp.grid = std::max<int64_t>(1, std::min(lp.groups, resident * dev.waves));
  return lp;
}

bool RowDefersToSplit(const RowPlan& plan, const RowLaunchPlan& launch, const HloComputation& fused,
                      const GpuDeviceInfo& dev) {
  return plan.rows < 2 * dev.sm_count && launch.long_rows && SplitReductionApplies(fused);
}

std::optional<RowPlan> RowReductionFor(const HloComputation& fused, size_t num_outputs, const GpuDeviceInfo& dev) {
  std::optional<RowPlan> plan = AnalyzeRows(fused);
  if (!plan || plan->outputs.size() != num_outputs) return std::nullopt;
  if (plan->rows == 0 || plan->row_len == 0) return std::nullopt;  // nothing to reduce: the loop kernel writes inits
  if (RowDefersToSplit(*plan, ComputeRowLaunchPlan(*plan, fused, dev), fused, dev)) return std::nullopt;
  return plan;
}

}  // namespace hloc::codegen::gpu
