// GpuKernelEmitter: one `ptx_kernel` function per kernel thunk, the emitter chosen by what the
// kernel computes (see gpu_emitters.h). XLA reference: xla/service/gpu/ir_emitter_unnested.cc,
// xla/backends/gpu/codegen/fusions.cc (the fusion-kind dispatch).
#include "codegen/gpu/gpu_kernel_emitter.h"

#include "passes/fusion/fusion_analysis.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/fusion_emitter_kind.h"
#include "codegen/gpu/gpu_emitters.h"
#include "codegen/gpu/gpu_library_calls.h"
#include "ir/fusion_backend_config.h"
#include "ir/custom_calls/library_calls.h"
#include "ir/custom_calls/sort_calls.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Metadata.h"

namespace hloc::codegen::gpu {
namespace {

bool Overlaps(const runtime::BufferSlice& a, const runtime::BufferSlice& b) {
  if (a.allocation != b.allocation) return false;
  return a.offset < b.offset + std::max<int64_t>(1, b.size) && b.offset < a.offset + std::max<int64_t>(1, a.size);
}

class KernelBuilder {
 public:
  KernelBuilder(llvm::Module* module, const GpuDeviceInfo& device, bool deterministic_ops, const std::string& name,
                const HloInstruction& hlo, const std::vector<KernelArgument>& args)
      : hlo_(hlo), b_(module->getContext()), emitter_(module, &b_) {
    llvm::LLVMContext& ctx = module->getContext();
    llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
    std::vector<llvm::Type*> params(args.size(), ptr);
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
    llvm::Function* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, module);
    f->setCallingConv(llvm::CallingConv::PTX_Kernel);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    // Older NVPTX readers look for the kernel annotation rather than the calling convention.
    llvm::NamedMDNode* annotations = module->getOrInsertNamedMetadata("nvvm.annotations");
    annotations->addOperand(llvm::MDNode::get(
        ctx, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "kernel"),
              llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))}));
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", f);
    b_.SetInsertPoint(entry);
    k_.module = module;
    k_.function = f;
    k_.b = &b_;
    k_.emitter = &emitter_;
    k_.name = name;
    k_.device = &device;
    k_.deterministic_ops = deterministic_ops;
    for (size_t i = 0; i < args.size(); ++i) {
      llvm::Argument* a = f->getArg(static_cast<unsigned>(i));
      a->setName(absl::StrCat(args[i].is_output ? "out" : "in", i));
      bool shared = false;
      bool written_shared = false;
      for (size_t j = 0; j < args.size(); ++j) {
        if (j == i || !Overlaps(args[i].slice, args[j].slice)) continue;
        shared = true;
        if (args[i].is_output || args[j].is_output) written_shared = true;
      }
      // noalias only where no other argument points into the same bytes.
      if (!shared) a->addAttr(llvm::Attribute::NoAlias);
      if (args[i].slice.offset % 16 == 0) a->addAttr(llvm::Attribute::getWithAlignment(ctx, llvm::Align(16)));
      if (args[i].slice.size > 0) a->addAttr(llvm::Attribute::getWithDereferenceableBytes(ctx, args[i].slice.size));
      IrArray array(a, args[i].shape);
      if (args[i].is_output) {
        k_.outputs.push_back(array);
        k_.output_slices.push_back(args[i].slice);
      } else {
        // Read-only data the kernel never writes goes through the non-coherent cache.
        if (!written_shared) array.MarkInvariantLoads(true);
        k_.operands.push_back(array);
        k_.operand_slices.push_back(args[i].slice);
      }
    }
    int64_t next = 0;
    for (const HloInstruction* op : hlo.operands()) {
      first_leaf_.push_back(next);
      next += static_cast<int64_t>(ArrayLeaves(op->shape()).size());
    }
  }

  absl::StatusOr<runtime::Thunk> Build() {
    absl::Status s = EmitBody();
    if (!s.ok()) {
      k_.function->eraseFromParent();
      return s;
    }
    b_.CreateRetVoid();
    // Block size hint for ptxas (fewer registers reserved).
    const int64_t threads = k_.launch.block_x * k_.launch.block_y * k_.launch.block_z;
    if (k_.min_blocks_per_sm > 0) AnnotateKernel(k_.module, k_.function, "minctasm", k_.min_blocks_per_sm);
    AnnotateKernel(k_.module, k_.function, "maxntidx", threads);
    runtime::Thunk t;
    t.kind = runtime::ThunkKind::kKernel;
    t.name = hlo_.name();
    t.kernel_name = k_.name;
    t.launch = k_.launch;
    t.emitter = k_.emitter_name.empty() ? std::string("loop") : k_.emitter_name;
    t.serial_reason = k_.serial_reason;
    t.bytes_touched = BytesTouched(hlo_);
    return t;
  }

 private:
  int64_t OperandLeaf(int64_t i) const {
    if (i < 0 || i >= static_cast<int64_t>(first_leaf_.size())) return -1;
    if (!hlo_.operand(i)->shape().IsArray()) return -1;
    return first_leaf_[i];
  }

  ElementGenerator ReadOperand(int64_t i) {
    const int64_t leaf = OperandLeaf(i);
    if (leaf < 0) {
      return [](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
        return absl::UnimplementedError("a tuple-shaped kernel operand");
      };
    }
    return ReadLeaf(leaf);
  }

  // Array leaf `leaf` of operand i, a tuple (a get-tuple-element chain inside the fusion).
  ElementGenerator ReadOperandLeaf(int64_t i, int64_t leaf) {
    const int64_t n = static_cast<int64_t>(first_leaf_.size());
    const int64_t at = i >= 0 && i < n ? first_leaf_[i] + leaf : -1;
    const int64_t end = i + 1 < n ? first_leaf_[i + 1] : static_cast<int64_t>(k_.operands.size());
    if (at < 0 || leaf < 0 || at >= end) {
      return [](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
        return absl::InternalError("a tuple operand's element out of range");
      };
    }
    return ReadLeaf(at);
  }

  ElementGenerator ReadLeaf(int64_t leaf) {
    IrArray array = k_.operands[leaf];
    llvm::IRBuilderBase* b = &b_;
    return [array, b](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      return array.EmitReadArrayElement(index, *b);
    };
  }

  absl::Status EmitBody() {
    switch (hlo_.opcode()) {
      case HloOpcode::kSort:
        k_.emitter_name = "sort";
        return EmitSortKernel(k_, hlo_);
      case HloOpcode::kTopK:
        k_.emitter_name = "top-k";
        return EmitTopKKernel(k_, hlo_);
      case HloOpcode::kScan:
        k_.emitter_name = "scan";
        return EmitScanKernel(k_, hlo_);
      case HloOpcode::kSelectAndScatter:
        k_.emitter_name = "select-and-scatter";
        return EmitSelectAndScatterKernel(k_, hlo_);
      case HloOpcode::kCustomCall:
        // Custom calls that are our own kernels (the library ones became thunks before this).
        if (IsRadixSortCallTarget(hlo_.attrs().custom_call_target)) {
          k_.emitter_name = "radix-sort";
          return EmitRadixSortKernel(k_, hlo_);
        }
        return absl::UnimplementedError(absl::StrCat("custom-call target \"", hlo_.attrs().custom_call_target,
                                                     "\" is not supported by the GPU backend"));
      case HloOpcode::kFusion:
        return EmitFusion();
      default:
        break;
    }
    GeneratorMap operands;
    for (int64_t i = 0; i < hlo_.operand_count(); ++i) operands[hlo_.operand(i)] = ReadOperand(i);
    // An unfused instruction: no kind is recorded for it; its opcode's emitters by the analysis.
    return EmitRoot(hlo_, operands, [&](int64_t i) { return OperandLeaf(i); },
                    ChooseFusionEmitter(hlo_, *k_.device).kind);
  }

  // The fusion's emitter: the kind fusion-emitter-assignment recorded in its backend_config,
  // else (no passes ran, an .hlox from before the pass) the same analysis now.
  absl::StatusOr<FusionEmitterKind> KindOf(const HloInstruction& fusion) {
    absl::StatusOr<std::optional<FusionEmitterKind>> recorded = RecordedFusionEmitterKind(fusion);
    if (!recorded.ok()) return recorded.status();
    kind_recorded_ = recorded->has_value();
    if (kind_recorded_) return **recorded;
    return ChooseFusionEmitter(fusion, *k_.device).kind;
  }

  // A kind whose emitter does not take the fusion. From the analysis (recorded by
  // fusion-emitter-assignment or computed here) that is a bug: the analysis and the emitter
  // disagree (fusion_emitter_kind.h). A hand-written record can also say so.
  absl::Status NotEmitted(FusionEmitterKind kind) const {
    return absl::InternalError(absl::StrCat(
        "%", hlo_.name(), ": the emitter kind ", std::string(FusionEmitterKindName(kind)),
        kind_recorded_ ? " recorded in its backend_config (fusion_backend_config.kind)" : " the fusion emitter analysis chose",
        " names an emitter that does not take this fusion; fusion-emitter-assignment's analysis never chooses such a "
        "kind (where it did, that is a bug in codegen/gpu/fusion_emitter_kind.cc)"));
  }

  // The launch plan recorded with the kind (row and split reductions, the loop kernel, the
  // transpose tiles, the cumulative reduce-window scan, the multi-output dynamic-update-slice)
  // is the one the emitter planned: both come from the same plan functions, so a difference is
  // a bug (or a hand edit).
  absl::Status CheckRecordedLaunch() const {
    if (!kind_recorded_) return absl::OkStatus();
    const FusionLaunchRecord rec = FusionBackendConfigLaunch(hlo_.attrs().backend_config);
    const runtime::LaunchDimensions& l = k_.launch;
    const std::vector<int64_t> block = {l.block_x, l.block_y, l.block_z}, grid = {l.grid_x, l.grid_y, l.grid_z};
    if ((rec.block.empty() || rec.block == block) && (rec.grid.empty() || rec.grid == grid)) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("%", hlo_.name(), ": its backend_config records the launch block [",
                                            absl::StrJoin(rec.block, ","), "] grid [", absl::StrJoin(rec.grid, ","),
                                            "] but its emitter planned block [", absl::StrJoin(block, ","), "] grid [",
                                            absl::StrJoin(grid, ","), "]"));
  }

  absl::Status Emitted(FusionEmitterKind kind) {
    k_.emitter_name = std::string(FusionEmitterThunkName(kind));
    return absl::OkStatus();
  }

  // Kinds that end in the loop kernel: the loop itself, and the transposes when buffer
  // assignment gave outputs that share bytes with operands (decided after the kind was).
  static bool EndsInLoop(FusionEmitterKind kind) {
    return kind == FusionEmitterKind::kLoop || kind == FusionEmitterKind::kTranspose ||
           kind == FusionEmitterKind::kTiledTranspose;
  }

  absl::Status EmitFusion() {
    const HloComputation* fused = hlo_.fused_instructions_computation();
    if (fused == nullptr) return absl::InvalidArgumentError("fusion without a fused computation");
    const HloInstruction* root = fused->root_instruction();
    auto parameter = [&](int64_t p) { return ReadOperand(p); };
    absl::StatusOr<FusionEmitterKind> recorded = KindOf(hlo_);
    if (!recorded.ok()) return recorded.status();
    const FusionEmitterKind kind = *recorded;
    // A reduce the row and split emitters leave to the loop kernel: warn where that is quadratic.
    if (kind != FusionEmitterKind::kRowReduction && kind != FusionEmitterKind::kSplitReduction)
      WarnLoopReduction(k_, *fused);
    switch (kind) {
      case FusionEmitterKind::kRowReduction:
      case FusionEmitterKind::kSplitReduction: {
        absl::StatusOr<bool> reduction = kind == FusionEmitterKind::kRowReduction
                                             ? TryEmitRowReduction(k_, *fused, parameter)
                                             : TryEmitSplitReduction(k_, *fused, parameter);
        if (!reduction.ok()) return reduction.status();
        if (!*reduction) return NotEmitted(kind);
        if (absl::Status s = CheckRecordedLaunch(); !s.ok()) return s;
        return Emitted(kind);
      }
      case FusionEmitterKind::kTranspose: {
        // False: outputs sharing bytes with operands, or a generator the loop path reports.
        absl::StatusOr<bool> transpose = TryEmitTransposeFusion(k_, *fused, parameter);
        if (!transpose.ok()) return transpose.status();
        if (!*transpose) break;
        if (absl::Status s = CheckRecordedLaunch(); !s.ok()) return s;
        return Emitted(kind);
      }
      default:
        break;
    }
    // Roots without an elemental form are emitted by EmitRoot from their operands' generators.
    const bool root_has_no_elemental_form =
        root->opcode() == HloOpcode::kScatter || root->opcode() == HloOpcode::kSort ||
        root->opcode() == HloOpcode::kTopK || root->opcode() == HloOpcode::kScan ||
        root->opcode() == HloOpcode::kSelectAndScatter || root->opcode() == HloOpcode::kCustomCall;
    absl::StatusOr<std::shared_ptr<GeneratorMap>> gens =
        MakeFusionGenerators(
            emitter_, *fused, parameter,
            [&](const HloInstruction* inst) -> ElementGenerator {
              if (inst != root || !root_has_no_elemental_form) return ElementGenerator();
              return [](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
                return absl::InternalError("the root of a non-elemental fusion read as an element");
              };
            },
            [&](int64_t p, int64_t leaf) { return ReadOperandLeaf(p, leaf); });
    if (!gens.ok()) return gens.status();
    auto param_leaf = [&](const HloInstruction* op) -> int64_t {
      if (op->opcode() != HloOpcode::kParameter) return -1;
      return OperandLeaf(op->attrs().parameter_number);
    };
    if (root->opcode() == HloOpcode::kTuple && kind == FusionEmitterKind::kDynamicUpdateSlice) {
      if (root->operand_count() == 0 ||
          !std::all_of(root->operands().begin(), root->operands().end(),
                       [](const HloInstruction* o) { return o->opcode() == HloOpcode::kDynamicUpdateSlice; }))
        return NotEmitted(kind);
      k_.emitter_name = "dynamic-update-slice";
      const GeneratorMap& g = **gens;
      if (absl::Status s = EmitMultiDynamicUpdateSliceKernel(
              k_, std::vector<const HloInstruction*>(root->operands().begin(), root->operands().end()),
              [&](const HloInstruction* i) {
                auto it = g.find(i);
                return it == g.end() ? ElementGenerator() : it->second;
              },
              param_leaf);
          !s.ok())
        return s;
      return CheckRecordedLaunch();
    }
    absl::Status emitted;
    if (root->opcode() == HloOpcode::kTuple) {
      if (!EndsInLoop(kind)) return NotEmitted(kind);
      emitted = EmitMultiOutput(*root, **gens);
    } else {
      emitted = EmitRoot(*root, **gens, [&](int64_t i) { return param_leaf(root->operand(i)); }, kind);
    }
    if (!emitted.ok()) return emitted;
    // The recorded plan is the recorded kind's: checked where that emitter ran (a transpose whose
    // outputs buffer assignment made share bytes with its operands ran as the loop kernel).
    const bool ran_recorded_kind = kind == FusionEmitterKind::kLoop
                                       ? k_.emitter_name.empty()
                                       : k_.emitter_name == FusionEmitterThunkName(kind);
    return ran_recorded_kind ? CheckRecordedLaunch() : absl::OkStatus();
  }

  // The fusion's root, or an unfused instruction, by the emitter `kind` names.
  absl::Status EmitRoot(const HloInstruction& root, const GeneratorMap& operands,
                        const std::function<int64_t(int64_t)>& operand_leaf, FusionEmitterKind kind) {
    auto operand_gen = [&](int64_t i) -> ElementGenerator {
      auto it = operands.find(root.operand(i));
      return it == operands.end() ? ElementGenerator() : it->second;
    };
    switch (root.opcode()) {
      case HloOpcode::kDynamicUpdateSlice:
        if (kind != FusionEmitterKind::kDynamicUpdateSlice) return NotEmitted(kind);
        k_.emitter_name = "dynamic-update-slice";
        return EmitDynamicUpdateSliceKernel(k_, root, operand_gen, operand_leaf);
      case HloOpcode::kScatter:
        if (kind != FusionEmitterKind::kScatter) return NotEmitted(kind);
        k_.emitter_name = "scatter";
        return EmitScatterKernel(k_, root, operand_gen, operand_leaf);
      case HloOpcode::kSort:
      case HloOpcode::kTopK:
      case HloOpcode::kScan:
      case HloOpcode::kSelectAndScatter:
        return absl::UnimplementedError(absl::StrCat(std::string(HloOpcodeString(root.opcode())), " inside a fusion"));
      case HloOpcode::kCustomCall:
        return absl::UnimplementedError(absl::StrCat("custom-call target \"", root.attrs().custom_call_target,
                                                     "\" is not supported by the GPU backend"));
      case HloOpcode::kReduceWindow: {
        // Cumulative reduce-windows (JAX's cumprod/cummax) as parallel scans (gpu_scan_emitter.cc).
        if (kind != FusionEmitterKind::kCumulativeReduceWindow) break;
        absl::StatusOr<bool> cumulative = TryEmitCumulativeReduceWindow(k_, root, operand_gen(0), operand_gen(1));
        if (!cumulative.ok()) return cumulative.status();
        return *cumulative ? Emitted(kind) : NotEmitted(kind);
      }
      case HloOpcode::kTranspose: {
        if (kind != FusionEmitterKind::kTiledTranspose) break;
        // False: outputs sharing bytes with operands (buffer assignment): the loop kernel.
        if (ElementGenerator g = operand_gen(0)) {
          absl::StatusOr<bool> tiled = TryEmitTiledTranspose(k_, root, g);
          if (!tiled.ok()) return tiled.status();
          if (*tiled) return Emitted(kind);
        }
        break;
      }
      default:
        break;
    }
    if (!EndsInLoop(kind)) return NotEmitted(kind);
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
    std::vector<LoopOutput> outs;
    if (root.shape().IsTuple()) {
      // A multi-result op (variadic reduce, reduce-window): one struct value per element.
      for (size_t o = 0; o < k_.outputs.size(); ++o) outs.push_back({o, gen, static_cast<int>(o)});
    } else {
      if (k_.outputs.size() != 1) return absl::InternalError("expected one output");
      outs.push_back({0, gen, -1});
    }
    return EmitLoopKernel(k_, outs);
  }

  absl::Status EmitMultiOutput(const HloInstruction& root, const GeneratorMap& gens) {
    if (static_cast<size_t>(root.operand_count()) != k_.outputs.size())
      return absl::UnimplementedError("a multi-output fusion with nested tuple outputs");
    std::vector<LoopOutput> outs;
    for (int64_t o = 0; o < root.operand_count(); ++o) {
      const HloInstruction* op = root.operand(o);
      switch (op->opcode()) {
        case HloOpcode::kSort: case HloOpcode::kTopK: case HloOpcode::kScan: case HloOpcode::kScatter:
        case HloOpcode::kSelectAndScatter: case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kCustomCall:
        case HloOpcode::kTuple:
          return absl::UnimplementedError(absl::StrCat("a multi-output fusion with a ",
                                                       std::string(HloOpcodeString(op->opcode())), " output"));
        default:
          break;
      }
      auto it = gens.find(op);
      if (it == gens.end()) return absl::InternalError(absl::StrCat("no generator for %", op->name()));
      outs.push_back({static_cast<size_t>(o), it->second, -1});
    }
    return EmitLoopKernel(k_, outs);
  }

  const HloInstruction& hlo_;
  llvm::IRBuilder<> b_;
  GpuElementalIrEmitter emitter_;
  GpuKernel k_;
  std::vector<int64_t> first_leaf_;
  bool kind_recorded_ = false;  // the fusion's emitter kind came from its backend_config
};

}  // namespace

int64_t BytesTouched(const HloInstruction& hlo) {
  // The fusion analysis's operand utilization: the fraction of each operand the kernel reads.
  const std::vector<double> util = fusion::OperandUtilization(&hlo);
  double bytes = static_cast<double>(fusion::ByteSize(hlo.shape()));
  for (int64_t i = 0; i < hlo.operand_count(); ++i)
    bytes += std::min(1.0, i < static_cast<int64_t>(util.size()) ? util[i] : 1.0) *
             static_cast<double>(fusion::ByteSize(hlo.operand(i)->shape()));
  return static_cast<int64_t>(bytes);
}

std::string PtxKernelName(const std::string& name) { return KernelSymbolName(name, /*allow_dot=*/false); }

std::string GpuKernelEmitter::UniqueName(const std::string& hlo_name) {
  // Unique among all kernels: the chunks they are compiled in are linked and joined.
  const std::string base = PtxKernelName(hlo_name);
  std::string name = base;
  for (int i = 1; names_.count(name); ++i) name = absl::StrCat(base, "_", i);
  names_.insert(name);
  return name;
}

absl::StatusOr<runtime::Thunk> GpuKernelEmitter::EmitKernel(const HloInstruction& hlo,
                                                            const std::vector<KernelArgument>& arguments) {
  // A dot small-gemm-selector marked (GemmFor left it to us): the small-GEMM kernel over (lhs,
  // rhs, result). When the kernel cannot take its buffers (PlanSmallGemm: an operand sharing the
  // result's bytes, which buffer assignment decides after the pass), the dot's elemental kernel
  // computes it instead, as before the decision moved upstream.
  if (hlo.opcode() == HloOpcode::kDot && arguments.size() == 3 && IsSmallGemmMarked(hlo)) {
    if (std::optional<GemmPlan> gemm = GpuGemmPlanForDot(hlo)) {
      SmallGemmRoles roles;
      roles.a = gemm->swap_operands ? 1 : 0;
      roles.b = gemm->swap_operands ? 0 : 1;
      std::vector<runtime::BufferSlice> slices;
      for (const KernelArgument& a : arguments) slices.push_back(a.slice);
      if (std::optional<SmallGemmPlan> plan = PlanSmallGemm(gemm->config, roles, slices, device_, small_gemm_))
        return SmallGemmThunk(hlo, *plan);
    }
  }
  const std::string name = UniqueName(hlo.name());
  llvm::Module* module = modules_->Begin(name);
  KernelBuilder builder(module, device_, deterministic_ops_, name, hlo, arguments);
  absl::StatusOr<runtime::Thunk> t = builder.Build();
  if (t.ok()) {
    if (absl::Status s = VerifyEmittedFunctions(*module, 0); !s.ok()) t = s;
  }
  if (!t.ok()) {
    names_.erase(name);
    modules_->Abandon();
    return t;
  }
  t->kernel_name = modules_->Finish();
  return t;
}

std::optional<GemmPlan> GpuKernelEmitter::GemmFor(const HloInstruction& dot) {
  // Dots small-gemm-selector marked become kernels (EmitKernel above); no second decision here.
  if (IsSmallGemmMarked(dot)) return std::nullopt;
  return GpuGemmPlanForDot(dot);
}

absl::StatusOr<std::optional<runtime::Thunk>> GpuKernelEmitter::EmitLibraryCall(
    const HloInstruction& hlo, const std::vector<KernelArgument>& arguments) {
  absl::StatusOr<std::optional<runtime::Thunk>> library = LibraryCallThunk(hlo, arguments);
  if (!library.ok() || !library->has_value() || !IsSmallGemmMarked(hlo)) return library;
  // A GEMM small-gemm-selector marked (custom_call_target="__hloc$small_gemm"; LibraryCallThunk
  // made its cuBLAS thunk): the same arguments {A, B, (C or bias), D} through our kernel.
  // Fallback: when PlanSmallGemm refuses the buffers (A or B sharing D's bytes, which buffer
  // assignment decides after the pass; or a hand-written marking the kernel cannot compute),
  // the cuBLAS thunk runs it, which computes the same GEMM, rather than failing the compile.
  runtime::Thunk& gemm = **library;
  SmallGemmRoles roles;
  roles.c = gemm.arguments.size() == 4 ? 2 : -1;
  roles.d = static_cast<int>(gemm.arguments.size()) - 1;
  std::optional<SmallGemmPlan> plan = PlanSmallGemm(gemm.gemm, roles, gemm.arguments, device_, small_gemm_);
  if (!plan) return library;
  absl::StatusOr<runtime::Thunk> t = SmallGemmThunk(hlo, *plan);
  if (!t.ok()) return t.status();
  t->arguments = gemm.arguments;
  t->written = gemm.written;
  return std::optional<runtime::Thunk>(std::move(*t));
}

absl::StatusOr<runtime::Thunk> GpuKernelEmitter::SmallGemmThunk(const HloInstruction& hlo, const SmallGemmPlan& plan) {
  const std::string name = UniqueName(hlo.name());
  absl::StatusOr<runtime::LaunchDimensions> launch = EmitSmallGemmKernel(modules_->Begin(name), name, plan);
  if (!launch.ok()) {
    modules_->Abandon();
    return launch.status();
  }
  runtime::Thunk t;
  t.kind = runtime::ThunkKind::kKernel;
  t.name = hlo.name();
  t.kernel_name = modules_->Finish();
  t.launch = *launch;
  t.emitter = "small-gemm";
  return t;
}

}  // namespace hloc::codegen::gpu
