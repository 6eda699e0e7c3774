// Shared GPU kernel pieces (see gpu_kernel_util.h).
#include "codegen/gpu/gpu_kernel_util.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/math_functions.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace hloc::codegen::gpu {

std::string GpuDeviceInfo::sm_name() const {
  return absl::StrCat("sm_", compute_capability_major, compute_capability_minor);
}

namespace {

// Calls a libdevice function on float/double values; narrower floats go through f32 (libdevice
// has no f16/bf16 transcendentals, and XLA computes them in f32 too).
llvm::Value* CallLibdevice(llvm::Module* module, llvm::IRBuilderBase& b, const std::string& libm_name,
                           const std::vector<llvm::Value*>& args) {
  llvm::Type* orig = args[0]->getType();
  const bool narrow = orig->isHalfTy() || orig->isBFloatTy();
  std::vector<llvm::Value*> a;
  for (llvm::Value* v : args) a.push_back(narrow ? b.CreateFPExt(v, b.getFloatTy()) : v);
  llvm::Type* t = a[0]->getType();
  std::string name = libm_name;
  if (narrow && !name.empty() && name.back() != 'f') name += "f";
  std::vector<llvm::Type*> types(a.size(), t);
  auto* fty = llvm::FunctionType::get(t, types, false);
  llvm::FunctionCallee callee = module->getOrInsertFunction(LibdeviceName(name), fty);
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setMemoryEffects(llvm::MemoryEffects::none());
  }
  llvm::CallInst* call = b.CreateCall(callee, a);
  call->setDoesNotThrow();
  return narrow ? b.CreateFPTrunc(call, orig) : static_cast<llvm::Value*>(call);
}

}  // namespace

llvm::Value* GpuElementalIrEmitter::EmitMathCall(const std::string& libm_name, const std::vector<llvm::Value*>& args) {
  return CallLibdevice(module(), *builder(), libm_name, args);
}

llvm::Value* GpuElementalIrEmitter::EmitMathIntrinsic(llvm::Intrinsic::ID id, const std::vector<llvm::Value*>& args) {
  const char* base = nullptr;
  switch (id) {
    case llvm::Intrinsic::exp: base = "exp"; break;
    case llvm::Intrinsic::exp2: base = "exp2"; break;
    case llvm::Intrinsic::log: base = "log"; break;
    case llvm::Intrinsic::log2: base = "log2"; break;
    case llvm::Intrinsic::log10: base = "log10"; break;
    case llvm::Intrinsic::sin: base = "sin"; break;
    case llvm::Intrinsic::cos: base = "cos"; break;
    case llvm::Intrinsic::pow: base = "pow"; break;
    default:
      return ElementalIrEmitter::EmitMathIntrinsic(id, args);
  }
  const bool is_f64 = args[0]->getType()->isDoubleTy();
  return CallLibdevice(module(), *builder(), is_f64 ? std::string(base) : std::string(base) + "f", args);
}

namespace {
llvm::Value* ReadSreg(llvm::IRBuilderBase& b, llvm::Intrinsic::ID id) {
  llvm::Value* v = b.CreateIntrinsic(id, {}, {});
  return b.CreateZExt(v, b.getInt64Ty());
}
}  // namespace

llvm::Value* GpuKernel::ThreadIdX() { return ReadSreg(*b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x); }
llvm::Value* GpuKernel::ThreadIdY() { return ReadSreg(*b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y); }
llvm::Value* GpuKernel::BlockIdX() { return ReadSreg(*b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x); }
llvm::Value* GpuKernel::GridDimX() { return ReadSreg(*b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x); }

void GpuKernel::Barrier() { b->CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

llvm::Value* GpuKernel::SharedArray(llvm::Type* type, int64_t count, const std::string& base_name) {
  auto* array_ty = llvm::ArrayType::get(type, static_cast<uint64_t>(std::max<int64_t>(1, count)));
  // Shared memory cannot carry an initializer: it holds garbage until written.
  auto* gv = new llvm::GlobalVariable(*module, array_ty, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
                                      llvm::UndefValue::get(array_ty), absl::StrCat(name, ".", base_name), nullptr,
                                      llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/3);
  gv->setAlignment(llvm::Align(16));
  return gv;
}

llvm::Value* GpuKernel::ActiveMask() { return b->CreateIntrinsic(llvm::Intrinsic::nvvm_activemask, {}, {}); }

llvm::Value* GpuKernel::MatchAnySync(llvm::Value* mask, llvm::Value* value) {
  return b->CreateIntrinsic(llvm::Intrinsic::nvvm_match_any_sync_i32, {}, {mask, value});
}

llvm::Value* GpuKernel::LaneMaskLt() { return b->CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_lanemask_lt, {}, {}); }

llvm::Value* GpuKernel::ShuffleXor(llvm::Value* value, int offset, llvm::Value* mask) {
  return ShuffleXor(value, b->getInt32(static_cast<uint32_t>(offset)), mask);
}

llvm::Value* GpuKernel::ShuffleXor(llvm::Value* value, llvm::Value* offset, llvm::Value* mask) {
  llvm::IRBuilderBase& B = *b;
  llvm::Type* t = value->getType();
  if (t->isStructTy()) {
    llvm::Value* out = llvm::UndefValue::get(t);
    for (unsigned i = 0; i < t->getStructNumElements(); ++i)
      out = B.CreateInsertValue(out, ShuffleXor(B.CreateExtractValue(value, {i}), offset, mask), {i});
    return out;
  }
  const unsigned bits = static_cast<unsigned>(t->getPrimitiveSizeInBits());
  llvm::Value* as_int = t->isIntegerTy() ? value : B.CreateBitCast(value, B.getIntNTy(bits));
  auto shfl32 = [&](llvm::Value* v32) {
    return B.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                             {mask != nullptr ? mask : B.getInt32(0xffffffffu), v32, offset, B.getInt32(0x1f)});
  };
  llvm::Value* r;
  if (bits <= 32) {
    r = B.CreateTrunc(shfl32(B.CreateZExt(as_int, B.getInt32Ty())), B.getIntNTy(bits));
  } else {
    // Wider values move as 32-bit pieces.
    const unsigned pieces = (bits + 31) / 32;
    llvm::Type* wide = B.getIntNTy(pieces * 32);
    llvm::Value* w = B.CreateZExt(as_int, wide);
    llvm::Value* acc = llvm::ConstantInt::get(wide, 0);
    for (unsigned p = 0; p < pieces; ++p) {
      llvm::Value* piece = B.CreateTrunc(B.CreateLShr(w, p * 32), B.getInt32Ty());
      llvm::Value* s = B.CreateZExt(shfl32(piece), wide);
      acc = B.CreateOr(acc, B.CreateShl(s, p * 32));
    }
    r = B.CreateTrunc(acc, B.getIntNTy(bits));
  }
  return t->isIntegerTy() ? r : B.CreateBitCast(r, t);
}

bool GpuKernel::OutputAliasesOperand(size_t o, size_t i) const {
  if (o >= output_slices.size() || i >= operand_slices.size()) return false;
  const runtime::BufferSlice& a = output_slices[o];
  const runtime::BufferSlice& c = operand_slices[i];
  return a.allocation == c.allocation && a.offset == c.offset;
}

IrArray::Index DelinearizeRowMajor(llvm::Value* linear, const std::vector<int64_t>& dims, llvm::IRBuilderBase& b) {
  std::vector<llvm::Value*> idx(dims.size());
  llvm::Value* rest = linear;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      idx[d] = rest;
      break;
    }
    llvm::Value* size = b.getInt64(std::max<int64_t>(1, dims[d]));
    idx[d] = b.CreateURem(rest, size);
    rest = b.CreateUDiv(rest, size);
  }
  return IrArray::Index(idx);
}

namespace {

// The GPU's own generators for float conversions and f16/bf16 arithmetic (hardware cvt), or
// null where the elemental emitter's serve.
ElementGenerator GpuFloatGenerator(const HloInstruction* inst, const GeneratorMap& gens, llvm::IRBuilderBase* b) {
  switch (inst->opcode()) {
      case HloOpcode::kConvert: {
        // f32 <-> f16/bf16 with the hardware's cvt (round to nearest even, like the software
        // codec the elemental emitter uses for every target, which costs ~40 instructions an
        // element and made bf16 softmax/layernorm kernels compute-bound).
        const PrimitiveType from = inst->operand(0)->shape().element_type(), to = inst->shape().element_type();
        llvm::Type* to_ty = nullptr;
        bool narrow = false;
        if (from == PrimitiveType::F32 && (to == PrimitiveType::BF16 || to == PrimitiveType::F16)) {
          to_ty = to == PrimitiveType::BF16 ? b->getBFloatTy() : b->getHalfTy();
          narrow = true;
        } else if (from == PrimitiveType::F16 && to == PrimitiveType::F32) {
          to_ty = b->getFloatTy();
        }
        auto it = gens.find(inst->operand(0));
        if (to_ty == nullptr || it == gens.end()) return nullptr;
        ElementGenerator op = it->second;
        return [op, to_ty, narrow, b](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
          absl::StatusOr<llvm::Value*> v = op(index);
          if (!v.ok()) return v;
          return narrow ? b->CreateFPTrunc(*v, to_ty) : b->CreateFPExt(*v, to_ty);
        };
      }
      case HloOpcode::kAdd:
      case HloOpcode::kSubtract:
      case HloOpcode::kMultiply:
      case HloOpcode::kDivide: {
        // f16/bf16 arithmetic: in f32, rounded once with cvt (what the elemental emitter
        // computes, without its software rounding).
        const PrimitiveType t = inst->shape().element_type();
        if ((t != PrimitiveType::BF16 && t != PrimitiveType::F16) || inst->operand_count() != 2 ||
            inst->operand(0)->shape().element_type() != t || inst->operand(1)->shape().element_type() != t)
          return nullptr;
        auto x = gens.find(inst->operand(0));
        auto y = gens.find(inst->operand(1));
        if (x == gens.end() || y == gens.end()) return nullptr;
        ElementGenerator gx = x->second, gy = y->second;
        llvm::Type* ty = t == PrimitiveType::BF16 ? b->getBFloatTy() : b->getHalfTy();
        const HloOpcode opc = inst->opcode();
        return [gx, gy, ty, opc, b](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
          absl::StatusOr<llvm::Value*> u = gx(index);
          if (!u.ok()) return u;
          absl::StatusOr<llvm::Value*> v = gy(index);
          if (!v.ok()) return v;
          llvm::Value* p = b->CreateFPExt(*u, b->getFloatTy());
          llvm::Value* q = b->CreateFPExt(*v, b->getFloatTy());
          llvm::Value* r = opc == HloOpcode::kAdd        ? b->CreateFAdd(p, q)
                           : opc == HloOpcode::kSubtract ? b->CreateFSub(p, q)
                           : opc == HloOpcode::kMultiply ? b->CreateFMul(p, q)
                                                         : b->CreateFDiv(p, q);
          return b->CreateFPTrunc(r, ty);
        };
      }
      default:
        return nullptr;
  }
}

}  // namespace

absl::StatusOr<ElementGenerator> GeneratorOf(const GeneratorMap& gens, const HloInstruction* inst) {
  auto it = gens.find(inst);
  if (it == gens.end()) return absl::InternalError(absl::StrCat("no generator for %", inst->name()));
  return it->second;
}

ElementGenerator AccumulatorGenerator(std::vector<llvm::AllocaInst*> slots, llvm::Type* value_type,
                                      llvm::IRBuilderBase* b) {
  return [slots, value_type, b](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
    // One slot holding the whole value: a non-variadic reduce, whose value may itself be a struct
    // (a complex number is {float, float}); only a variadic reduce's members are packed.
    if (slots.size() == 1 && slots[0]->getAllocatedType() == value_type)
      return b->CreateLoad(slots[0]->getAllocatedType(), slots[0]);
    llvm::Value* v = llvm::UndefValue::get(value_type);
    for (size_t i = 0; i < slots.size(); ++i)
      v = b->CreateInsertValue(v, b->CreateLoad(slots[i]->getAllocatedType(), slots[i]), {static_cast<unsigned>(i)});
    return v;
  };
}

absl::StatusOr<std::shared_ptr<GeneratorMap>> MakeFusionGenerators(
    ElementalIrEmitter& emitter, const HloComputation& computation,
    const std::function<ElementGenerator(int64_t)>& parameter, const GeneratorOverride& override_gen,
    const std::function<ElementGenerator(int64_t, int64_t)>& tuple_leaf) {
  ComputationGeneratorOptions options;
  options.override_gen = override_gen;
  options.tuple_parameter_leaf = tuple_leaf;
  llvm::IRBuilderBase* b = emitter.builder();
  options.special = [b](const HloInstruction* inst, const GeneratorMap& gens) { return GpuFloatGenerator(inst, gens, b); };
  return MakeComputationGenerators(emitter, computation, parameter, options);
}
absl::StatusOr<std::vector<llvm::Value*>> ApplyReducer(ElementalIrEmitter& e, const HloComputation& reducer,
                                                       const std::vector<llvm::Value*>& acc,
                                                       const std::vector<llvm::Value*>& values) {
  std::vector<llvm::Value*> args = acc;
  args.insert(args.end(), values.begin(), values.end());
  absl::StatusOr<std::vector<llvm::Value*>> r = e.EmitThreadLocalCall(reducer, args, "reducer");
  if (!r.ok()) return r.status();
  if (r->size() != acc.size())
    return absl::InvalidArgumentError(absl::StrCat("reducer %", reducer.name(), " returns ", r->size(),
                                                   " values for ", acc.size(), " accumulators"));
  return r;
}

runtime::LaunchDimensions GridStrideLaunch(int64_t work_items, int64_t block, const GpuDeviceInfo& device) {
  runtime::LaunchDimensions l;
  block = std::max<int64_t>(32, std::min(block, device.max_threads_per_block));
  // Small problems: one block of just enough (whole-warp) threads.
  if (work_items < block) block = std::max<int64_t>(32, (work_items + 31) / 32 * 32);
  int64_t blocks = std::max<int64_t>(1, (work_items + block - 1) / block);
  const int64_t resident = std::max<int64_t>(1, device.max_threads_per_sm / block) * device.sm_count;
  blocks = std::min(blocks, resident * std::max<int64_t>(1, device.waves));
  l.block_x = block;
  l.grid_x = blocks;
  return l;
}

void AnnotateKernel(llvm::Module* module, llvm::Function* function, const char* key, int64_t value) {
  llvm::LLVMContext& ctx = module->getContext();
  module->getOrInsertNamedMetadata("nvvm.annotations")
      ->addOperand(llvm::MDNode::get(
          ctx, {llvm::ValueAsMetadata::get(function), llvm::MDString::get(ctx, key),
                llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))}));
}

int64_t ElementCount(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& t : shape.tuple_shapes()) n += ElementCount(t);
    return n;
  }
  if (!shape.IsArray()) return 0;
  return shape.num_elements();
}

std::vector<int64_t> MinorToMajorOf(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank())
    return s.layout().minor_to_major;
  std::vector<int64_t> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

bool IsRowMajorLayout(const Shape& s) {
  std::vector<int64_t> m = MinorToMajorOf(s);
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i] != static_cast<int64_t>(m.size() - 1 - i)) return false;
  return true;
}

}  // namespace hloc::codegen::gpu
