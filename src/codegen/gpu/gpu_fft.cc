// The GPU half of kFft thunks: cuFFT (runtime/gpu/cufft.h) computes unnormalized transforms, and
// XLA's FftThunk then scales IFFT and IRFFT results by 1/N (with cuBLAS scal). Here that scaling
// is a kernel of the module, emitted once at compile time and named by the thunk
// (Thunk::kernel_name / launch), so the runtime needs no extra library and no PTX of its own.
// It takes the thunk's two arguments {input, output} and multiplies each real number of the
// output by 1/N in the output's precision (1.0f / N for c64 and f32, as XLA).
#include "absl/strings/str_cat.h"
#include "codegen/gpu/gpu_kernel_emitter.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "runtime/executable/fft_config.h"

namespace hloc::codegen::gpu {
namespace {

llvm::Value* Sreg(llvm::IRBuilderBase& b, llvm::Intrinsic::ID id) {
  return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), b.getInt64Ty());
}

absl::StatusOr<runtime::LaunchDimensions> EmitScaleKernel(llvm::Module* module, const std::string& name,
                                                          bool double_precision, int64_t reals, int64_t divisor,
                                                          const GpuDeviceInfo& device) {
  llvm::LLVMContext& ctx = module->getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false);
  llvm::Function* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, module);
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  runtime::LaunchDimensions launch = GridStrideLaunch(reals, device.threads_per_block, device);
  auto i32 = [&](int64_t v) { return llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), v)); };
  llvm::NamedMDNode* annotations = module->getOrInsertNamedMetadata("nvvm.annotations");
  annotations->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "kernel"), i32(1)}));
  annotations->addOperand(
      llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "maxntidx"), i32(launch.block_x)}));
  f->getArg(0)->setName("in");
  f->getArg(1)->setName("out");
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Type* real = double_precision ? b.getDoubleTy() : b.getFloatTy();
  // 1/N rounded once in the output's precision, as XLA's alpha.
  llvm::Value* factor = double_precision ? llvm::ConstantFP::get(real, 1.0 / static_cast<double>(divisor))
                                         : llvm::ConstantFP::get(real, 1.0f / static_cast<float>(divisor));
  llvm::Value* tid = Sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* bid = Sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* ntid = Sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* nctaid = Sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  llvm::Value* start = b.CreateAdd(b.CreateMul(bid, ntid), tid);
  llvm::Value* step = b.CreateMul(ntid, nctaid);
  llvm::Value* out = f->getArg(1);
  absl::Status s = EmitStridedLoop(b, start, b.getInt64(reals), step, "scale", [&](llvm::Value* i) -> absl::Status {
    llvm::Value* p = b.CreateInBoundsGEP(real, out, i);
    b.CreateStore(b.CreateFMul(b.CreateLoad(real, p), factor), p);
    return absl::OkStatus();
  });
  if (!s.ok()) {
    f->eraseFromParent();
    return s;
  }
  b.CreateRetVoid();
  return launch;
}

}  // namespace

absl::Status GpuKernelEmitter::FinishFft(const HloInstruction& fft, runtime::Thunk& thunk) {
  absl::StatusOr<runtime::FftGeometry> g =
      runtime::AnalyzeFft(thunk.fft, thunk.arguments[0].size, thunk.arguments[1].size);
  if (!g.ok()) return g.status();
  if (g->scale_divisor == 1 || g->output_reals() == 0) return absl::OkStatus();
  const std::string name = UniqueName(absl::StrCat(fft.name(), "_scale"));
  absl::StatusOr<runtime::LaunchDimensions> launch =
      EmitScaleKernel(modules_->Begin(name), name, g->double_precision, g->output_reals(), g->scale_divisor, device_);
  if (!launch.ok()) {
    names_.erase(name);
    modules_->Abandon();
    return launch.status();
  }
  thunk.kernel_name = modules_->Finish();
  thunk.launch = *launch;
  return absl::OkStatus();
}

}  // namespace hloc::codegen::gpu
