// Loop kernels (XLA's LoopFusion, xla/backends/gpu/codegen/emitters/loop.cc): each thread
// computes one element, or a vector of 2-8 consecutive elements (physical order) stored with one
// access of up to 16 bytes when the minor dimension allows it (XLA's unroll factor), in a
// grid-stride loop so the grid stays a few waves of resident blocks. Outputs of different
// dimensions (multi-output fusions) get one loop each, one after another.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/gpu/gpu_emitter_conditions.h"
#include "codegen/gpu/gpu_emitters.h"

namespace hloc::codegen::gpu {
namespace {

// Elements per thread for a group of outputs sharing dimensions (indices into `shapes`).
int64_t VectorWidth(const std::vector<Shape>& shapes, const std::vector<int64_t>& offsets,
                    const std::vector<size_t>& group) {
  const Shape& s0 = shapes[group[0]];
  const int64_t n = s0.num_elements();
  if (s0.rank() == 0 || n < 1024) return 1;
  const std::vector<int64_t> m2m = MinorToMajorOf(s0);
  const int64_t minor = s0.dimensions(m2m[0]);
  int64_t widest = 1;
  for (size_t o : group) {
    const Shape& s = shapes[o];
    if (MinorToMajorOf(s) != m2m) return 1;
    const PrimitiveType t = s.element_type();
    if (IsComplex(t) || BitWidth(t) < 8) return 1;
    widest = std::max<int64_t>(widest, ByteWidth(t));
  }
  for (int64_t v : {8, 4, 2}) {
    if (v * widest > 16) continue;
    if (minor % v != 0 || n % v != 0) continue;
    bool aligned = true;
    for (size_t o : group) {
      const int64_t offset = o < offsets.size() ? offsets[o] : 0;
      if (offset % (v * ByteWidth(shapes[o].element_type())) != 0) aligned = false;
    }
    if (aligned) return v;
  }
  return 1;
}

absl::StatusOr<llvm::Value*> Member(llvm::IRBuilderBase& b, llvm::Value* v, int member) {
  if (member < 0) return v;
  if (!v->getType()->isStructTy() || static_cast<unsigned>(member) >= v->getType()->getStructNumElements())
    return absl::UnimplementedError("a multi-result element the kernel cannot split");
  return b.CreateExtractValue(v, {static_cast<unsigned>(member)});
}

absl::Status EmitGroup(GpuKernel& k, const std::vector<LoopOutput>& group, int64_t vec, llvm::Value* thread,
                       llvm::Value* stride) {
  llvm::IRBuilderBase& b = *k.b;
  const Shape& shape = k.outputs[group[0].output].shape();
  const int64_t n = shape.num_elements();
  const int64_t items = n / vec;
  const int64_t minor_dim = shape.rank() > 0 ? MinorToMajorOf(shape)[0] : 0;
  return EmitStridedLoop(b, thread, b.getInt64(items), stride, "loop", [&](llvm::Value* item) -> absl::Status {
    llvm::Value* linear = vec == 1 ? item : b.CreateMul(item, b.getInt64(vec), "linear", true, true);
    IrArray::Index base = IrArray::Delinearize(linear, shape, b);
    // All values first, then the stores: loads of one element stay together.
    std::vector<std::vector<llvm::Value*>> values(group.size());
    for (int64_t j = 0; j < vec; ++j) {
      IrArray::Index index = base;
      if (j > 0) index.multidim[minor_dim] = b.CreateAdd(base[minor_dim], b.getInt64(j), "", true, true);
      for (size_t o = 0; o < group.size(); ++o) {
        absl::StatusOr<llvm::Value*> v = group[o].gen(index);
        if (!v.ok()) return v.status();
        absl::StatusOr<llvm::Value*> m = Member(b, *v, group[o].member);
        if (!m.ok()) return m.status();
        values[o].push_back(*m);
      }
    }
    for (size_t o = 0; o < group.size(); ++o) {
      const IrArray& out = k.outputs[group[o].output];
      const PrimitiveType t = out.shape().element_type();
      llvm::Type* storage = PrimitiveTypeToStorageIrType(t, b.getContext());
      const bool direct = vec > 1 && storage == PrimitiveTypeToIrType(t, b.getContext()) &&
                          values[o][0]->getType() == storage;
      if (!direct) {
        for (int64_t j = 0; j < vec; ++j) {
          IrArray::Index index = base;
          if (j > 0) index.multidim[minor_dim] = b.CreateAdd(base[minor_dim], b.getInt64(j), "", true, true);
          out.EmitWriteArrayElement(index, values[o][j], b);
        }
        continue;
      }
      // One vector store of vec consecutive elements (16 bytes at most, aligned to its size).
      llvm::Type* vty = llvm::FixedVectorType::get(storage, static_cast<unsigned>(vec));
      llvm::Value* packed = llvm::UndefValue::get(vty);
      for (int64_t j = 0; j < vec; ++j) packed = b.CreateInsertElement(packed, values[o][j], b.getInt64(j));
      llvm::Value* addr = out.EmitArrayElementAddress(base, b);
      b.CreateAlignedStore(packed, addr, llvm::Align(vec * ByteWidth(t)));
    }
    return absl::OkStatus();
  });
}

}  // namespace

LoopKernelPlan PlanLoopKernel(const std::vector<Shape>& outputs, const std::vector<int64_t>& output_offsets,
                              const GpuDeviceInfo& dev) {
  LoopKernelPlan plan;
  // Outputs of equal dimensions (and layout) share a loop.
  for (size_t o = 0; o < outputs.size(); ++o) {
    bool placed = false;
    for (auto& g : plan.groups) {
      if (outputs[g[0]].dimensions() == outputs[o].dimensions() &&
          MinorToMajorOf(outputs[g[0]]) == MinorToMajorOf(outputs[o])) {
        g.push_back(o);
        placed = true;
        break;
      }
    }
    if (!placed) plan.groups.push_back({o});
  }
  plan.vec.resize(plan.groups.size());
  int64_t work = 1;
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    plan.vec[g] = VectorWidth(outputs, output_offsets, plan.groups[g]);
    work = std::max(work, outputs[plan.groups[g][0]].num_elements() / plan.vec[g]);
  }
  plan.launch = GridStrideLaunch(work, dev.threads_per_block, dev);
  return plan;
}

absl::Status EmitLoopKernel(GpuKernel& k, const std::vector<LoopOutput>& outputs) {
  if (outputs.empty()) return absl::InternalError("a loop kernel without outputs");
  llvm::IRBuilderBase& b = *k.b;
  std::vector<Shape> shapes;
  std::vector<int64_t> offsets;
  for (const LoopOutput& o : outputs) {
    shapes.push_back(k.outputs[o.output].shape());
    offsets.push_back(k.output_slices[o.output].offset);
  }
  const LoopKernelPlan plan = PlanLoopKernel(shapes, offsets, *k.device);
  k.launch = plan.launch;
  llvm::Value* thread = b.CreateAdd(b.CreateMul(k.BlockIdX(), b.getInt64(k.launch.block_x)), k.ThreadIdX(), "thread",
                                    true, true);
  llvm::Value* stride = b.getInt64(k.launch.block_x * k.launch.grid_x);
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    std::vector<LoopOutput> group;
    for (size_t i : plan.groups[g]) group.push_back(outputs[i]);
    if (absl::Status s = EmitGroup(k, group, plan.vec[g], thread, stride); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace hloc::codegen::gpu
