#include "passes/library/cudnn_layout_legalization.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/custom_calls/library_calls.h"
#include "passes/library/library_util.h"
#include "passes/passes.h"

namespace hloc {
namespace {

using library::DimVec;

enum class Role { kInput, kFilter, kOutput };

// Where each of the convolution's three tensors lives on a cuDNN call: an operand index, or
// (operand == -1) element 0 of the call's result tuple.
struct Roles {
  int64_t input = -1, filter = -1, output = -1;  // operand index, -1 = the result
};

std::optional<Roles> RolesOf(const HloInstruction* call) {
  if (call->opcode() != HloOpcode::kCustomCall || !call->attrs().convolution_dimension_numbers ||
      !call->shape().IsTuple() || call->shape().tuple_shapes().empty() || call->operand_count() < 2)
    return std::nullopt;
  const std::string& t = call->attrs().custom_call_target;
  // Forward: (input, filter[, bias[, side input]]) -> output.
  if (t == kCudnnConvForwardCallTarget || t == kCudnnConvBiasActivationForwardCallTarget) return Roles{0, 1, -1};
  // Backward input: (output gradient, filter) -> input gradient.
  if (t == kCudnnConvBackwardInputCallTarget) return Roles{-1, 1, 0};
  // Backward filter: (input, output gradient) -> filter gradient.
  if (t == kCudnnConvBackwardFilterCallTarget) return Roles{0, -1, 1};
  return std::nullopt;
}

// The tensor's logical dimensions in the order [a, b, spatial...] (NCHW) or [a, spatial..., b]
// (NHWC), major to minor, where a/b are batch/feature (activations) or out/in (filter).
DimVec Order(int64_t a, int64_t b, const DimVec& spatial, bool nhwc) {
  DimVec order = {a};
  if (!nhwc) order.push_back(b);
  order.insert(order.end(), spatial.begin(), spatial.end());
  if (nhwc) order.push_back(b);
  return order;
}

DimVec OrderFor(const ConvolutionDimensionNumbers& d, Role role, bool nhwc) {
  switch (role) {
    case Role::kInput: return Order(d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions, nhwc);
    case Role::kFilter:
      return Order(d.kernel_output_feature_dimension, d.kernel_input_feature_dimension, d.kernel_spatial_dimensions, nhwc);
    case Role::kOutput:
      return Order(d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions, nhwc);
  }
  return {};
}

// Whether `shape`'s physical order (major to minor) is `order`, ignoring size-1 dimensions
// (they can sit anywhere without changing any stride cuDNN sees).
bool PhysicalOrderIs(const Shape& shape, const DimVec& order) {
  const DimVec m2m = library::MinorToMajor(shape);
  DimVec phys, want;
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it)
    if (shape.dimensions(*it) != 1) phys.push_back(*it);
  for (int64_t dim : order)
    if (shape.dimensions(dim) != 1) want.push_back(dim);
  return phys == want;
}

// A layout this pass can reason about: an array with a plain (untiled) layout whose rank the
// dimension numbers describe.
bool Plain(const Shape& shape, const DimVec& order) {
  if (!shape.IsArray() || static_cast<int64_t>(order.size()) != shape.rank()) return false;
  if (shape.has_layout() && (!shape.layout().tiles.empty() || !shape.layout().extra.empty())) return false;
  for (int64_t dim : order)
    if (dim < 0 || dim >= shape.rank()) return false;
  DimVec sorted = order;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

bool Accepted(const Shape& shape, const ConvolutionDimensionNumbers& d, Role role) {
  return PhysicalOrderIs(shape, OrderFor(d, role, false)) || PhysicalOrderIs(shape, OrderFor(d, role, true));
}

// `shape` with the layout whose major-to-minor order is `order`.
Shape WithOrder(const Shape& shape, const DimVec& order) {
  Shape s = shape;
  Layout l = shape.has_layout() ? shape.layout() : Layout{};
  l.minor_to_major.assign(order.rbegin(), order.rend());
  s.set_layout(l);
  return s;
}

HloInstruction* AddCopy(HloComputation& comp, NameUniquer& names, HloInstruction* x, const Shape& shape,
                        const HloInstruction* before, const OpMetadata& metadata) {
  auto copy = std::make_unique<HloInstruction>(HloOpcode::kCopy, shape, "copy");
  copy->AppendOperand(x);
  copy->mutable_attrs().metadata = metadata;
  return AddInstructionWithUniqueName(comp, std::move(copy), names, before);
}

// Operand `i` of `call` through a copy to `shape`'s layout.
void CopyOperand(HloComputation& comp, NameUniquer& names, HloInstruction* call, int64_t i, const Shape& shape) {
  HloInstruction* copy = AddCopy(comp, names, call->operand(i), shape, call, call->attrs().metadata);
  call->ReplaceOperandWith(i, copy);
}

// Legalizes one call; false when it already is legal or cannot be handled.
absl::StatusOr<bool> Legalize(HloComputation& comp, NameUniquer& names, HloInstruction* call) {
  std::optional<Roles> roles = RolesOf(call);
  if (!roles) return false;
  const ConvolutionDimensionNumbers& d = *call->attrs().convolution_dimension_numbers;
  auto shape_of = [&](int64_t operand) -> const Shape& {
    return operand < 0 ? call->shape().tuple_shapes(0) : call->operand(operand)->shape();
  };
  const Role all[] = {Role::kInput, Role::kFilter, Role::kOutput};
  auto where = [&](Role r) { return r == Role::kInput ? roles->input : r == Role::kFilter ? roles->filter : roles->output; };
  for (Role r : all)
    if (!Plain(shape_of(where(r)), OrderFor(d, r, false))) return false;
  bool legal = true;
  for (Role r : all) legal &= Accepted(shape_of(where(r)), d, r);
  if (legal) return false;
  // The result can only be re-laid-out when every user reads it through get-tuple-element.
  for (const HloInstruction* u : call->users())
    if (u->opcode() != HloOpcode::kGetTupleElement) return false;
  if (call->IsRoot()) return false;

  // The format: NHWC when an activation already is NHWC (cuDNN's faster path for the layouts
  // layout assignment chose), else NCHW.
  const bool nhwc = PhysicalOrderIs(shape_of(roles->input), OrderFor(d, Role::kInput, true)) ||
                    PhysicalOrderIs(shape_of(roles->output), OrderFor(d, Role::kOutput, true));
  bool changed = false;
  for (Role r : all) {
    const int64_t at = where(r);
    if (Accepted(shape_of(at), d, r)) continue;
    const Shape want = WithOrder(shape_of(at), OrderFor(d, r, nhwc));
    if (at >= 0) {
      CopyOperand(comp, names, call, at, want);
    } else {
      // The call produces `want`; every get-tuple-element of element 0 is replaced by a new
      // one of the new layout, copied back to the layout its users were built for.
      const Shape old = call->shape().tuple_shapes(0);
      call->mutable_shape().mutable_tuple_shapes()[0] = want;
      std::vector<HloInstruction*> gtes;
      for (HloInstruction* u : call->users())
        if (u->attrs().tuple_index == 0 && std::find(gtes.begin(), gtes.end(), u) == gtes.end()) gtes.push_back(u);
      for (HloInstruction* g : gtes) {
        auto ng = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, want, g->name());
        ng->AppendOperand(call);
        ng->mutable_attrs().tuple_index = 0;
        ng->mutable_attrs().metadata = g->attrs().metadata;
        HloInstruction* new_gte = AddInstructionWithUniqueName(comp, std::move(ng), names, g);
        HloInstruction* back = AddCopy(comp, names, new_gte, old, g, g->attrs().metadata);
        absl::StatusOr<bool> ok = ReplaceInstruction(g, back, ReplaceOptions{.remove_unused_operands = false});
        if (!ok.ok()) return ok.status();
        if (!*ok) return absl::InternalError(absl::StrCat("cudnn-layout-legalization: could not replace ", g->name()));
      }
    }
    changed = true;
  }
  // cuDNN reads a side input with the output's strides.
  const std::string& t = call->attrs().custom_call_target;
  if (t == kCudnnConvBiasActivationForwardCallTarget && call->operand_count() >= 4 && roles->output < 0) {
    const Shape& out = call->shape().tuple_shapes(0);
    const Shape& side = call->operand(3)->shape();
    if (side.IsArray() && side.rank() == out.rank() && library::MinorToMajor(side) != library::MinorToMajor(out)) {
      CopyOperand(comp, names, call, 3, WithOrder(side, DimVec(library::MinorToMajor(out).rbegin(),
                                                                 library::MinorToMajor(out).rend())));
      changed = true;
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> CudnnLayoutLegalization::Run(HloModule& module, PassContext&) {
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    std::vector<HloInstruction*> calls;
    for (const auto& i : comp->instructions())
      if (RolesOf(i.get())) calls.push_back(i.get());
    for (HloInstruction* call : calls) {
      absl::StatusOr<bool> r = Legalize(*comp, names, call);
      if (!r.ok()) return r.status();
      changed |= *r;
    }
  }
  return changed;
}

void RegisterCudnnLayoutLegalizationPass(PassRegistry& registry) {
  registry.Register(PassInfo{
      CudnnLayoutLegalization::kName,
      "copy cuDNN convolution operands/results into layouts cuDNN accepts (filters OIHW/OHWI, activations NCHW/NHWC)",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<CudnnLayoutLegalization>(); }});
}

}  // namespace hloc
