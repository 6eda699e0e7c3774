// The CPU kernel emitter: one LLVM function per kernel thunk (see cpu_kernel_emitter.h).
#include "codegen/cpu/cpu_kernel_emitter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/cpu/kernel_util.h"
#include "codegen/linalg_thunks.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "llvm/IR/Function.h"

namespace hloc::codegen::cpu {
namespace {

int64_t Elements(const Shape& s) {
  if (!s.IsArray()) {
    int64_t n = 0;
    for (const Shape& t : s.tuple_shapes()) n += Elements(t);
    return n;
  }
  return s.num_elements();
}

// The extent of the outermost (most major) dimension, which EmitLoopNest splits into parts.
int64_t OutermostExtent(const Shape& s) {
  if (!s.IsArray() || s.rank() == 0) return 1;
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank())
    return s.dimensions(s.layout().minor_to_major.back());
  return s.dimensions(0);
}

bool HasElementalRoot(const HloInstruction& root) {
  switch (root.opcode()) {
    case HloOpcode::kSort:
    case HloOpcode::kTopK:
    case HloOpcode::kScan:
    case HloOpcode::kScatter:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kCustomCall:
    case HloOpcode::kTuple:
      return false;
    default:
      return true;
  }
}

// Kernel parts: enough work per part, never more parts than the outermost loop has iterations.
int64_t ChoosePartitions(const HloInstruction& hlo, const Shape& loop_shape, const CpuKernelOptions& o) {
  int64_t work = Elements(hlo.shape());
  for (const HloInstruction* op : hlo.operands()) work = std::max(work, Elements(op->shape()));
  int64_t parts = work / std::max<int64_t>(1, o.min_work_per_partition);
  parts = std::min({parts, o.max_partitions, OutermostExtent(loop_shape)});
  return std::max<int64_t>(1, parts);
}

class KernelBuilder {
 public:
  KernelBuilder(llvm::Module* module, const CpuKernelOptions& options, const std::string& name,
                const HloInstruction& hlo, const std::vector<KernelArgument>& args)
      : hlo_(hlo), options_(options), b_(module->getContext()), emitter_(module, &b_) {
    llvm::LLVMContext& ctx = module->getContext();
    llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
    llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64}, false);
    llvm::Function* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, module);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->getArg(0)->setName("args");
    f->getArg(1)->setName("part");
    f->getArg(2)->setName("num_parts");
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", f);
    b_.SetInsertPoint(entry);
    k_.module = module;
    k_.function = f;
    k_.b = &b_;
    k_.emitter = &emitter_;
    k_.name = name;
    k_.part = f->getArg(1);
    k_.num_parts = f->getArg(2);
    for (size_t i = 0; i < args.size(); ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, f->getArg(0), i);
      llvm::LoadInst* base = b_.CreateLoad(ptr, slot, absl::StrCat("arg", i));
      base->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx, {}));
      IrArray array(base, args[i].shape);
      if (args[i].is_output) {
        k_.outputs.push_back(array);
      } else {
        k_.operands.push_back(array);
      }
    }
    // Operand leaves per operand (operands may be tuples only for the ops handled elsewhere).
    int64_t next = 0;
    for (const HloInstruction* op : hlo.operands()) {
      first_leaf_.push_back(next);
      next += static_cast<int64_t>(ArrayLeaves(op->shape()).size());
    }
  }

  // Operand i's array when it is a single array leaf.
  const IrArray* OperandArray(int64_t i) const {
    if (i < 0 || i >= static_cast<int64_t>(first_leaf_.size())) return nullptr;
    if (!hlo_.operand(i)->shape().IsArray()) return nullptr;
    return &k_.operands[first_leaf_[i]];
  }

  ElementGenerator ReadOperand(int64_t i) {
    const IrArray* a = OperandArray(i);
    if (a == nullptr) {
      return [](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
        return absl::UnimplementedError("a tuple-shaped kernel operand");
      };
    }
    return ReadArray(*a);
  }

  // Array leaf `leaf` of operand i, a tuple.
  ElementGenerator ReadOperandLeaf(int64_t i, int64_t leaf) {
    const int64_t at = i >= 0 && i < static_cast<int64_t>(first_leaf_.size()) ? first_leaf_[i] + leaf : -1;
    const int64_t end = i + 1 < static_cast<int64_t>(first_leaf_.size()) ? first_leaf_[i + 1]
                                                                        : static_cast<int64_t>(k_.operands.size());
    if (at < 0 || leaf < 0 || at >= end) {
      return [](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
        return absl::InternalError("a tuple operand's element out of range");
      };
    }
    return ReadArray(k_.operands[at]);
  }

  ElementGenerator ReadArray(const IrArray& a) {
    IrArray array = a;
    llvm::IRBuilderBase* b = &b_;
    return [array, b](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      return array.EmitReadArrayElement(index, *b);
    };
  }

  absl::StatusOr<runtime::Thunk> Build() {
    absl::Status s = EmitBody();
    if (!s.ok()) {
      k_.function->eraseFromParent();
      return s;
    }
    b_.CreateRetVoid();
    runtime::Thunk t;
    t.kind = runtime::ThunkKind::kKernel;
    t.name = hlo_.name();
    t.kernel_name = k_.name;
    t.launch.partitions = k_.partitions;
    return t;
  }

 private:
  absl::Status EmitBody() {
    switch (hlo_.opcode()) {
      case HloOpcode::kSort:
        return Sequential([&] { return EmitSortKernel(k_, hlo_); });
      case HloOpcode::kTopK:
        return Sequential([&] { return EmitTopKKernel(k_, hlo_); });
      case HloOpcode::kScan: {
        // Each position of the scanned slice is an independent recurrence: split those.
        const Shape& in = hlo_.operand(0)->shape();
        Shape slice = in;
        if (in.IsArray() && hlo_.attrs().dimensions.size() == 1 && hlo_.attrs().dimensions[0] >= 0 &&
            hlo_.attrs().dimensions[0] < in.rank()) {
          std::vector<int64_t> dims = in.dimensions();
          dims.erase(dims.begin() + hlo_.attrs().dimensions[0]);
          slice = Shape(in.element_type(), dims);
          slice.SetDefaultLayout();
        }
        k_.partitions = ChoosePartitions(hlo_, slice, options_);
        return EmitScanKernel(k_, hlo_);
      }
      case HloOpcode::kSelectAndScatter:
        k_.partitions = ChoosePartitions(hlo_, hlo_.shape(), options_);
        return EmitSelectAndScatterKernel(k_, hlo_);
      case HloOpcode::kCustomCall:
        return absl::UnimplementedError(absl::StrCat("custom-call target \"", hlo_.attrs().custom_call_target,
                                                     "\" is not supported by the CPU backend"));
      case HloOpcode::kFusion:
        return EmitFusion();
      default:
        break;
    }
    // An unfused instruction: its operands are the kernel's operand arrays.
    GeneratorMap operands;
    for (int64_t i = 0; i < hlo_.operand_count(); ++i) operands[hlo_.operand(i)] = ReadOperand(i);
    return EmitRoot(hlo_, operands, [&](int64_t i) { return OperandArray(i); });
  }

  absl::Status Sequential(const std::function<absl::Status()>& body) {
    // Work that is not split: only part 0 does it.
    k_.partitions = 1;
    return EmitIf(b_, b_.CreateICmpEQ(k_.part, b_.getInt64(0)), "part0", body);
  }

  absl::Status EmitFusion() {
    const HloComputation* fused = hlo_.fused_instructions_computation();
    if (fused == nullptr) return absl::InvalidArgumentError("fusion without a fused computation");
    const HloInstruction* root = fused->root_instruction();
    ComputationGeneratorOptions options;
    // The root is emitted by EmitRoot (it may not be elemental).
    options.stop_at = root->opcode() == HloOpcode::kTuple || root->opcode() == HloOpcode::kParameter ? nullptr : root;
    options.tuple_parameter_leaf = [&](int64_t p, int64_t leaf) { return ReadOperandLeaf(p, leaf); };
    absl::StatusOr<std::shared_ptr<GeneratorMap>> gens =
        MakeComputationGenerators(emitter_, *fused, [&](int64_t p) { return ReadOperand(p); }, options);
    if (!gens.ok()) return gens.status();
    // Fused parameters map to the fusion's operands (for in-place checks).
    auto param_array = [&](const HloInstruction* op) -> const IrArray* {
      if (op->opcode() != HloOpcode::kParameter) return nullptr;
      return OperandArray(op->attrs().parameter_number);
    };
    if (root->opcode() == HloOpcode::kTuple) {
      if (static_cast<int64_t>(root->operand_count()) != static_cast<int64_t>(k_.outputs.size()))
        return absl::UnimplementedError("a multi-output fusion with nested tuple outputs");
      return EmitMultiOutput(*root, **gens);
    }
    return EmitRoot(*root, **gens, [&](int64_t i) { return param_array(root->operand(i)); });
  }

  // The root of a kernel: `operands` has generators for root's operands.
  absl::Status EmitRoot(const HloInstruction& root, const GeneratorMap& operands,
                        const std::function<const IrArray*(int64_t)>& operand_array) {
    switch (root.opcode()) {
      case HloOpcode::kDynamicUpdateSlice:
        k_.partitions = ChoosePartitions(hlo_, root.operand(1)->shape(), options_);
        return EmitDynamicUpdateSliceKernel(k_, root, operands, operand_array);
      case HloOpcode::kScatter:
        return Sequential([&] {
          return EmitSerialScatter(
              *k_.b, *k_.emitter, root, k_.outputs,
              [&](int64_t i) {
                auto it = operands.find(root.operand(i));
                return it == operands.end() ? ElementGenerator() : it->second;
              },
              operand_array);
        });
      case HloOpcode::kSort:
      case HloOpcode::kTopK:
      case HloOpcode::kScan:
      case HloOpcode::kSelectAndScatter:
        return absl::UnimplementedError(absl::StrCat(std::string(HloOpcodeString(root.opcode())), " inside a fusion"));
      case HloOpcode::kCustomCall:
        return absl::UnimplementedError(absl::StrCat("custom-call target \"", root.attrs().custom_call_target,
                                                     "\" is not supported by the CPU backend"));
      default:
        break;
    }
    ElementGenerator gen;
    if (root.opcode() == HloOpcode::kCopy || root.opcode() == HloOpcode::kParameter) {
      auto it = root.opcode() == HloOpcode::kCopy ? operands.find(root.operand(0)) : operands.find(&root);
      if (it == operands.end()) return absl::InternalError("no generator for the copied value");
      gen = it->second;
    } else {
      absl::StatusOr<ElementGenerator> g = emitter_.MakeElementGenerator(&root, operands);
      if (!g.ok()) return g.status();
      gen = std::move(*g);
    }
    if (root.shape().IsTuple()) {
      // A multi-result op (variadic reduce, reduce-window): one struct value per element.
      if (k_.outputs.empty()) return absl::InternalError("no outputs");
      const Shape& loop = k_.outputs[0].shape();
      k_.partitions = ChoosePartitions(hlo_, loop, options_);
      return EmitLoopNest(loop, b_, k_.part, k_.num_parts, [&](const IrArray::Index& index) -> absl::Status {
        absl::StatusOr<llvm::Value*> v = gen(index);
        if (!v.ok()) return v.status();
        for (size_t o = 0; o < k_.outputs.size(); ++o) {
          llvm::Value* e = (*v)->getType()->isStructTy() && (*v)->getType()->getStructNumElements() ==
                                                                k_.outputs.size()
                               ? b_.CreateExtractValue(*v, {static_cast<unsigned>(o)})
                               : nullptr;
          if (e == nullptr) return absl::UnimplementedError("a multi-result element the kernel cannot split");
          k_.outputs[o].EmitWriteArrayElement(index, e, b_);
        }
        return absl::OkStatus();
      });
    }
    if (k_.outputs.size() != 1) return absl::InternalError("expected one output");
    const IrArray& out = k_.outputs[0];
    k_.partitions = ChoosePartitions(hlo_, out.shape(), options_);
    return EmitLoopNest(out.shape(), b_, k_.part, k_.num_parts, [&](const IrArray::Index& index) -> absl::Status {
      absl::StatusOr<llvm::Value*> v = gen(index);
      if (!v.ok()) return v.status();
      out.EmitWriteArrayElement(index, *v, b_);
      return absl::OkStatus();
    });
  }

  // A tuple root: each element written by its own generator; elements of one shape share a loop.
  absl::Status EmitMultiOutput(const HloInstruction& root, const GeneratorMap& gens) {
    std::vector<ElementGenerator> outs;
    for (const HloInstruction* op : root.operands()) {
      if (!HasElementalRoot(*op))
        return absl::UnimplementedError(absl::StrCat("a multi-output fusion with a ",
                                                     std::string(HloOpcodeString(op->opcode())), " output"));
      auto it = gens.find(op);
      if (it == gens.end()) return absl::InternalError(absl::StrCat("no generator for %", op->name()));
      outs.push_back(it->second);
    }
    std::vector<bool> done(outs.size(), false);
    int64_t parts = 1;
    for (size_t o = 0; o < outs.size(); ++o)
      parts = std::max(parts, ChoosePartitions(hlo_, k_.outputs[o].shape(), options_));
    k_.partitions = parts;
    for (size_t o = 0; o < outs.size(); ++o) {
      if (done[o]) continue;
      std::vector<size_t> group;
      for (size_t p = o; p < outs.size(); ++p)
        if (!done[p] && k_.outputs[p].shape().dimensions() == k_.outputs[o].shape().dimensions()) {
          group.push_back(p);
          done[p] = true;
        }
      absl::Status s = EmitLoopNest(k_.outputs[o].shape(), b_, k_.part, k_.num_parts,
                                    [&](const IrArray::Index& index) -> absl::Status {
                                      // All values first: an output may share a buffer with nothing
                                      // we read, but computing before storing keeps loads together.
                                      std::vector<llvm::Value*> values;
                                      for (size_t p : group) {
                                        absl::StatusOr<llvm::Value*> v = outs[p](index);
                                        if (!v.ok()) return v.status();
                                        values.push_back(*v);
                                      }
                                      for (size_t j = 0; j < group.size(); ++j)
                                        k_.outputs[group[j]].EmitWriteArrayElement(index, values[j], b_);
                                      return absl::OkStatus();
                                    });
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  const HloInstruction& hlo_;
  const CpuKernelOptions& options_;
  llvm::IRBuilder<> b_;
  ElementalIrEmitter emitter_;
  KernelContext k_;
  std::vector<int64_t> first_leaf_;
};

}  // namespace

std::string SanitizeKernelName(const std::string& name) { return KernelSymbolName(name, /*allow_dot=*/true); }

std::string CpuKernelEmitter::UniqueName(const std::string& hlo_name) {
  return UniqueSymbolName(SanitizeKernelName(hlo_name), names_, *module_);
}

absl::StatusOr<runtime::Thunk> CpuKernelEmitter::EmitKernel(const HloInstruction& hlo,
                                                            const std::vector<KernelArgument>& arguments) {
  const std::string name = UniqueName(hlo.name());
  const size_t first_function = module_->getFunctionList().size();
  KernelBuilder builder(module_, options_, name, hlo, arguments);
  absl::StatusOr<runtime::Thunk> t = builder.Build();
  if (t.ok()) {
    if (absl::Status s = VerifyEmittedFunctions(*module_, first_function); !s.ok()) t = s;
  }
  if (!t.ok()) names_.erase(name);
  return t;
}

std::optional<GemmPlan> CpuKernelEmitter::GemmFor(const HloInstruction& dot) { return CpuGemmPlan(dot); }

absl::StatusOr<std::optional<runtime::Thunk>> CpuKernelEmitter::EmitLibraryCall(
    const HloInstruction& hlo, const std::vector<KernelArgument>& arguments) {
  absl::StatusOr<std::optional<runtime::Thunk>> conv = OneDnnConvThunk(hlo, arguments);
  if (!conv.ok() || conv->has_value()) return conv;
  return LinalgThunk(hlo, arguments);
}

absl::Status CpuKernelEmitter::FinishFft(const HloInstruction& fft, runtime::Thunk& thunk) {
  // The batch (the leading, untransformed dimensions) is what splits: each part one FFTW plan.
  const Shape& in = fft.operand(0)->shape();
  const int64_t lead = in.rank() - static_cast<int64_t>(fft.attrs().fft_length.size());
  int64_t batch = 1;
  for (int64_t d = 0; d < lead; ++d) batch *= in.dimensions(d);
  const int64_t work = std::max(Elements(in), Elements(fft.shape()));
  const int64_t parts = std::min({work / std::max<int64_t>(1, options_.min_work_per_partition),
                                  options_.max_partitions, batch});
  thunk.launch.partitions = std::max<int64_t>(1, parts);
  return absl::OkStatus();
}

}  // namespace hloc::codegen::cpu
