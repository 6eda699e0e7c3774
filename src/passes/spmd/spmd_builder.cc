#include "passes/spmd/spmd_builder.h"

#include "ir/primitive_type.h"

namespace hloc::spmd {

using expanders::MakeShape;
using expanders::ScalarLiteral;
using O = HloOpcode;

namespace {

std::unique_ptr<HloInstruction> NewInst(O op, const Shape& shape, std::vector<HloInstruction*> operands) {
  auto inst = std::make_unique<HloInstruction>(op, shape, std::string(HloOpcodeString(op)));
  for (HloInstruction* x : operands) inst->AppendOperand(x);
  return inst;
}

Shape WithDim(const Shape& s, int64_t dim, int64_t size) {
  Shape out = MakeShape(s.element_type(), s.dimensions());
  out.mutable_dimensions()[dim] = size;
  return out;
}

}  // namespace

HloInstruction* SpmdBuilder::PartitionId() {
  if (partition_id_ == nullptr) partition_id_ = b_.Add(NewInst(O::kPartitionId, MakeShape(PrimitiveType::U32, {}), {}));
  return partition_id_;
}

HloInstruction* SpmdBuilder::TableLookup(const std::vector<int64_t>& table) {
  if (auto it = tables_.find(table); it != tables_.end()) return it->second;
  HloInstruction* v = MakeTableLookup(table);
  if (v != nullptr) tables_[table] = v;
  return v;
}

HloInstruction* SpmdBuilder::MakeTableLookup(const std::vector<int64_t>& table) {
  bool uniform = true;
  for (int64_t v : table) uniform &= v == table[0];
  if (uniform) return b_.ScalarConstant(PrimitiveType::S32, static_cast<double>(table.empty() ? 0 : table[0]));
  Literal lit(MakeShape(PrimitiveType::S32, {static_cast<int64_t>(table.size())}));
  for (size_t i = 0; i < table.size(); ++i) lit.SetInt(static_cast<int64_t>(i), table[i]);
  HloInstruction* t = b_.Constant(std::move(lit));
  HloInstruction* at = DynamicSlice(t, {PartitionId()}, {1});
  return b_.Reshape(at, {});
}

HloInstruction* SpmdBuilder::DynamicSlice(HloInstruction* x, std::vector<HloInstruction*> starts,
                                          std::vector<int64_t> sizes) {
  if (!b_.ok() || x == nullptr) return nullptr;
  auto inst = NewInst(O::kDynamicSlice, MakeShape(x->shape().element_type(), sizes), {x});
  for (HloInstruction* s : starts) inst->AppendOperand(s);
  inst->mutable_attrs().dynamic_slice_sizes = std::move(sizes);
  return b_.Add(std::move(inst));
}

HloInstruction* SpmdBuilder::DynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                                std::vector<HloInstruction*> starts) {
  if (!b_.ok() || x == nullptr || update == nullptr) return nullptr;
  auto inst = NewInst(O::kDynamicUpdateSlice, MakeShape(x->shape().element_type(), x->shape().dimensions()), {x, update});
  for (HloInstruction* s : starts) inst->AppendOperand(s);
  return b_.Add(std::move(inst));
}

HloInstruction* SpmdBuilder::Zero(PrimitiveType t) { return b_.Constant(ScalarLiteral(t, 0)); }

HloInstruction* SpmdBuilder::PadHigh(HloInstruction* x, int64_t dim, int64_t size) {
  if (!b_.ok() || x == nullptr) return nullptr;
  if (x->shape().dimensions(dim) == size) return x;
  PaddingConfig config;
  config.dimensions.resize(x->shape().rank());
  config.dimensions[dim].edge_padding_high = size - x->shape().dimensions(dim);
  auto inst = NewInst(O::kPad, WithDim(x->shape(), dim, size), {x, Zero(x->shape().element_type())});
  inst->mutable_attrs().padding_config = config;
  return b_.Add(std::move(inst));
}

HloInstruction* SpmdBuilder::PadDim(HloInstruction* x, int64_t dim, int64_t low, int64_t high) {
  if (!b_.ok() || x == nullptr) return nullptr;
  if (low == 0 && high == 0) return x;
  PaddingConfig config;
  config.dimensions.resize(x->shape().rank());
  config.dimensions[dim].edge_padding_low = low;
  config.dimensions[dim].edge_padding_high = high;
  auto inst = NewInst(O::kPad, WithDim(x->shape(), dim, x->shape().dimensions(dim) + low + high),
                      {x, Zero(x->shape().element_type())});
  inst->mutable_attrs().padding_config = config;
  return b_.Add(std::move(inst));
}

HloInstruction* SpmdBuilder::Collective(std::unique_ptr<HloInstruction> inst,
                                        const std::vector<std::vector<int64_t>>& groups) {
  InstructionAttributes& a = inst->mutable_attrs();
  a.replica_groups.groups = groups;
  a.channel_id = ctx_.next_channel_id++;
  a.use_global_device_ids = true;
  a.frontend_attributes["is_spmd_generated"] = "true";
  return b_.Add(std::move(inst));
}

HloInstruction* SpmdBuilder::AllGather(HloInstruction* x, int64_t dim, const std::vector<std::vector<int64_t>>& groups) {
  if (!b_.ok() || x == nullptr) return nullptr;
  int64_t k = groups.empty() ? 1 : static_cast<int64_t>(groups[0].size());
  if (k == 1) return x;
  auto inst = NewInst(O::kAllGather, WithDim(x->shape(), dim, x->shape().dimensions(dim) * k), {x});
  inst->mutable_attrs().dimensions = {dim};
  ctx_.bytes_sent += static_cast<double>(x->shape().byte_size()) * (k - 1);
  return Collective(std::move(inst), groups);
}

HloInstruction* SpmdBuilder::AllReduce(HloInstruction* x, HloComputation* reduction,
                                       const std::vector<std::vector<int64_t>>& groups) {
  if (!b_.ok() || x == nullptr) return nullptr;
  int64_t k = groups.empty() ? 1 : static_cast<int64_t>(groups[0].size());
  if (k == 1) return x;
  auto inst = NewInst(O::kAllReduce, MakeShape(x->shape().element_type(), x->shape().dimensions()), {x});
  inst->mutable_called_computations().push_back(reduction);
  // A ring all-reduce sends 2(k-1)/k of the buffer.
  ctx_.bytes_sent += 2.0 * static_cast<double>(x->shape().byte_size()) * (k - 1) / k;
  return Collective(std::move(inst), groups);
}

HloInstruction* SpmdBuilder::AllToAll(HloInstruction* x, int64_t dim, const std::vector<std::vector<int64_t>>& groups) {
  if (!b_.ok() || x == nullptr) return nullptr;
  int64_t k = groups.empty() ? 1 : static_cast<int64_t>(groups[0].size());
  if (k == 1) return x;
  auto inst = NewInst(O::kAllToAll, MakeShape(x->shape().element_type(), x->shape().dimensions()), {x});
  inst->mutable_attrs().dimensions = {dim};
  ctx_.bytes_sent += static_cast<double>(x->shape().byte_size()) * (k - 1) / k;
  return Collective(std::move(inst), groups);
}

HloInstruction* SpmdBuilder::CollectivePermute(HloInstruction* x, const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  if (!b_.ok() || x == nullptr) return nullptr;
  auto inst = NewInst(O::kCollectivePermute, MakeShape(x->shape().element_type(), x->shape().dimensions()), {x});
  inst->mutable_attrs().source_target_pairs = pairs;
  inst->mutable_attrs().channel_id = ctx_.next_channel_id++;
  inst->mutable_attrs().frontend_attributes["is_spmd_generated"] = "true";
  ctx_.bytes_sent += static_cast<double>(x->shape().byte_size());
  return b_.Add(std::move(inst));
}

HloComputation* SpmdBuilder::AddComputation(PrimitiveType t) {
  auto it = ctx_.add_computations.find(t);
  if (it != ctx_.add_computations.end()) return it->second;
  HloComputation* c = expanders::MakeScalarAddComputation(*ctx_.module, *ctx_.computation_names,
                                                          *ctx_.instruction_names, t, "add.clone");
  ctx_.add_computations[t] = c;
  return c;
}

}  // namespace hloc::spmd
