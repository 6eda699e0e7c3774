// split-k-gemm-rewriter (split_k_gemm_rewriter.h).
#include "passes/library/split_k_gemm_rewriter.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "passes/expanders/expander_util.h"
#include "passes/library/library_util.h"

namespace hloc {
namespace {

using expanders::ExpanderBuilder;
using O = HloOpcode;

// The dimension stored outermost (the last of minor_to_major); -1 without a layout.
int64_t MostMajorDim(const Shape& s) {
  if (!s.has_layout() || s.layout().minor_to_major.empty()) return -1;
  return s.layout().minor_to_major.back();
}

bool IsF32Array2D(const HloInstruction* x) {
  const Shape& s = x->shape();
  return s.IsArray() && s.is_static() && s.rank() == 2 && s.element_type() == PrimitiveType::F32 && s.has_layout();
}

// A dot this pass may split: no batch dimensions, one contracting dimension stored outermost
// in both 2-D f32 operands, an f32 result.
bool Splittable(const HloInstruction* dot) {
  if (dot->opcode() != O::kDot || dot->operand_count() != 2 || !dot->attrs().dot_dimension_numbers) return false;
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  if (!dn.lhs_batch_dimensions.empty() || !dn.rhs_batch_dimensions.empty() ||
      dn.lhs_contracting_dimensions.size() != 1 || dn.rhs_contracting_dimensions.size() != 1)
    return false;
  if (!IsF32Array2D(dot->operand(0)) || !IsF32Array2D(dot->operand(1)) || !IsF32Array2D(dot)) return false;
  return MostMajorDim(dot->operand(0)->shape()) == dn.lhs_contracting_dimensions[0] &&
         MostMajorDim(dot->operand(1)->shape()) == dn.rhs_contracting_dimensions[0];
}

// [K, X] or [X, K] stored K-major, as [S, K/S, X] (row-major: a bitcast of the operand).
HloInstruction* Sliced(ExpanderBuilder& b, HloInstruction* x, int64_t contracting, int64_t split) {
  HloInstruction* kx = x;
  if (contracting == 1) {  // logically [X, K], stored [K][X]: its transpose [K, X]{1,0} is a bitcast
    kx = b.Transpose(x, {1, 0});
    if (kx != nullptr) kx->mutable_shape().set_layout(Layout{{1, 0}});
  }
  if (kx == nullptr) return nullptr;
  const int64_t k = kx->shape().dimensions(0), other = kx->shape().dimensions(1);
  return b.Reshape(kx, {split, k / split, other});  // default layout {2,1,0}
}

}  // namespace

int64_t ChooseSplitK(int64_t m, int64_t n, int64_t k, int64_t sm_count, int64_t tile, int64_t min_depth,
                     int64_t max_split) {
  if (sm_count <= 0 || tile <= 0) return 1;
  const int64_t tiles = ((m + tile - 1) / tile) * ((n + tile - 1) / tile);
  if (tiles * 2 > sm_count) return 1;  // fills half the GPU or more already
  int64_t best = 1;
  double best_distance = 0;
  for (int64_t s = 2; s <= max_split; s *= 2) {
    if (k % s != 0 || k / s < min_depth) break;
    const double distance = std::abs(std::log(static_cast<double>(tiles * s) / static_cast<double>(sm_count)));
    if (best == 1 || distance < best_distance) best = s, best_distance = distance;
  }
  return best;
}

absl::StatusOr<bool> SplitKGemmRewriter::Run(HloModule& module, PassContext& context) {
  if (context.profile == nullptr || context.profile->kind != "gpu" || context.profile->sm_count <= 0) return false;
  const Tuning& t = context.profile->tuning;
  const int64_t tile = t.Get(TuningKnob::kSplitKTile), min_depth = t.Get(TuningKnob::kSplitKMinDepth),
                max_split = t.Get(TuningKnob::kSplitKMaxSplit);
  NameUniquer names = InstructionNameUniquer(module);
  NameUniquer computation_names = ComputationNameUniquer(module);
  HloComputation* add = nullptr;
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    std::vector<HloInstruction*> dots;
    for (const auto& i : comp->instructions())
      if (Splittable(i.get())) dots.push_back(i.get());
    for (HloInstruction* dot : dots) {
      const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
      const int64_t lc = dn.lhs_contracting_dimensions[0], rc = dn.rhs_contracting_dimensions[0];
      const int64_t k = dot->operand(0)->shape().dimensions(lc);
      const int64_t m = dot->shape().dimensions(0), n = dot->shape().dimensions(1);
      const int64_t split = ChooseSplitK(m, n, k, context.profile->sm_count, tile, min_depth, max_split);
      if (split == 1) continue;
      if (add == nullptr) add = expanders::MakeScalarAddComputation(module, computation_names, names, PrimitiveType::F32);
      ExpanderBuilder b(comp, &names, dot);
      b.set_metadata(&dot->attrs().metadata);
      HloInstruction* lhs = Sliced(b, dot->operand(0), lc, split);
      HloInstruction* rhs = Sliced(b, dot->operand(1), rc, split);
      DotDimensionNumbers batched;
      batched.lhs_batch_dimensions = {0};
      batched.rhs_batch_dimensions = {0};
      batched.lhs_contracting_dimensions = {1};
      batched.rhs_contracting_dimensions = {1};
      HloInstruction* partials = b.Dot(lhs, rhs, batched, dot->attrs().precision_config, PrimitiveType::F32);
      // Each partial product stored as the dot's result is, the slices outermost.
      if (partials != nullptr) {
        const std::vector<int64_t>& out = dot->shape().layout().minor_to_major;
        partials->mutable_shape().set_layout(Layout{{out[0] + 1, out[1] + 1, 0}});
      }
      HloInstruction* sum = b.Reduce(partials, b.ScalarConstant(PrimitiveType::F32, 0), {0}, add);
      if (sum != nullptr) sum->mutable_shape() = dot->shape();  // keep the dot's layout
      if (!b.ok()) {
        absl::Status st = b.status();
        b.Discard();
        return st;
      }
      ReplaceOptions options;
      options.relay_control_dependency = true;
      absl::StatusOr<bool> ok = ReplaceInstruction(dot, sum, options);
      if (!ok.ok()) return ok.status();
      if (!*ok) return absl::InternalError(absl::StrCat("split-k-gemm-rewriter: could not replace ", dot->name()));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
