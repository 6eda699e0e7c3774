// The small-GEMM kernel (see gpu_small_gemm.h). XLA reference for the role: its Triton GEMM
// fusions with split-K for small dots (xla/service/gpu/transforms/gemm_fusion.cc,
// xla/backends/gpu/codegen/triton/); the kernel itself is ours: CUDA-core FMAs, no tensor cores.
#include "codegen/gpu/gpu_small_gemm.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"

namespace hloc::codegen::gpu {
namespace {

// Which GEMMs take the kernel (sizes, types) is decided by small-gemm-selector
// (passes/library/small_gemm_selector.h), with the measurements behind its limits; codegen
// only reads the marking.
constexpr int64_t kCols = 32;    // output columns per block: one per lane
constexpr int64_t kKStep = 4;    // K values per vector load / inner step
constexpr int64_t kMaxWarps = 16;
// Vector steps (4 K values each) per pipelined batch of loads; see PlanSmallGemm.
constexpr int64_t kDefaultDepth = 2;

bool FloatType(const std::string& t) { return t == "f32" || t == "bf16" || t == "f16"; }
int64_t TypeBytes(const std::string& t) { return t == "f32" ? 4 : 2; }

struct Epilogue {
  bool bias = false, relu = false, gelu = false;
};
bool KnownEpilogue(const std::string& e, Epilogue* out) {
  out->bias = e == "BIAS" || e == "BIAS_RELU" || e == "BIAS_GELU";
  out->relu = e == "RELU" || e == "BIAS_RELU";
  out->gelu = e == "GELU" || e == "BIAS_GELU";
  return e == "DEFAULT" || out->bias || out->relu || out->gelu;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Elements a [batch, rows, cols] view with row stride ld and batch stride bs touches.
int64_t Extent(int64_t batch, int64_t rows, int64_t cols, int64_t ld, int64_t bs) {
  if (batch == 0 || rows == 0 || cols == 0) return 0;
  return (batch - 1) * bs + (rows - 1) * ld + cols;
}

bool Overlaps(const runtime::BufferSlice& a, const runtime::BufferSlice& b) {
  if (a.allocation != b.allocation) return false;
  return a.offset < b.offset + std::max<int64_t>(1, b.size) && b.offset < a.offset + std::max<int64_t>(1, a.size);
}

llvm::Type* ElemType(llvm::LLVMContext& ctx, const std::string& t) {
  if (t == "bf16") return llvm::Type::getBFloatTy(ctx);
  if (t == "f16") return llvm::Type::getHalfTy(ctx);
  return llvm::Type::getFloatTy(ctx);
}

class Emitter {
 public:
  Emitter(llvm::Module* module, const std::string& name, const SmallGemmPlan& plan)
      : module_(module), ctx_(module->getContext()), b_(ctx_), p_(plan), g_(plan.config), name_(name) {}

  absl::StatusOr<runtime::LaunchDimensions> Emit() {
    CreateFunction();
    EmitBody();
    runtime::LaunchDimensions l;
    l.block_x = p_.warps * 32;
    l.grid_x = g_.batch * p_.m_tiles * p_.n_tiles;
    return l;
  }

 private:
  void CreateFunction() {
    llvm::Type* ptr = llvm::PointerType::getUnqual(ctx_);
    std::vector<llvm::Type*> params(p_.params.size(), ptr);
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), params, false);
    f_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name_, module_);
    f_->setCallingConv(llvm::CallingConv::PTX_Kernel);
    f_->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::NamedMDNode* annotations = module_->getOrInsertNamedMetadata("nvvm.annotations");
    auto i32 = [&](int64_t v) {
      return llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx_), v));
    };
    annotations->addOperand(
        llvm::MDNode::get(ctx_, {llvm::ValueAsMetadata::get(f_), llvm::MDString::get(ctx_, "kernel"), i32(1)}));
    annotations->addOperand(llvm::MDNode::get(
        ctx_, {llvm::ValueAsMetadata::get(f_), llvm::MDString::get(ctx_, "maxntidx"), i32(p_.warps * 32)}));
    const int n = static_cast<int>(p_.params.size());
    invariant_.assign(n, false);
    for (int i = 0; i < n; ++i) {
      llvm::Argument* a = f_->getArg(i);
      const bool written = i == p_.roles.d;
      a->setName(absl::StrCat(written ? "out" : "in", i));
      bool shared = false, shares_written = false;
      for (int j = 0; j < n; ++j) {
        if (j == i || !Overlaps(p_.params[i], p_.params[j])) continue;
        shared = true;
        if (written || j == p_.roles.d) shares_written = true;
      }
      if (!shared) a->addAttr(llvm::Attribute::NoAlias);
      if (p_.params[i].offset % 16 == 0) a->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(16)));
      if (p_.params[i].size > 0)
        a->addAttr(llvm::Attribute::getWithDereferenceableBytes(ctx_, p_.params[i].size));
      // Data nobody writes during the kernel goes through the non-coherent (texture) cache.
      invariant_[i] = !written && !shares_written;
    }
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f_));
  }

  llvm::Value* I64(int64_t v) { return b_.getInt64(v); }
  llvm::Value* Min(llvm::Value* a, llvm::Value* b) { return b_.CreateSelect(b_.CreateICmpSLT(a, b), a, b); }
  llvm::Value* Max(llvm::Value* a, llvm::Value* b) { return b_.CreateSelect(b_.CreateICmpSGT(a, b), a, b); }
  llvm::Value* Sreg(llvm::Intrinsic::ID id) { return b_.CreateZExt(b_.CreateIntrinsic(id, {}, {}), b_.getInt64Ty()); }

  // A load of `type` (a scalar or a vector) at element `index` of parameter `param` (element
  // type `elem`), converted to f32 (per vector lane).
  std::vector<llvm::Value*> Load(int param, llvm::Type* elem, llvm::Value* index, int64_t count) {
    llvm::Value* p = b_.CreateInBoundsGEP(elem, f_->getArg(param), index);
    llvm::Type* t = count == 1 ? elem : static_cast<llvm::Type*>(llvm::FixedVectorType::get(elem, count));
    const uint64_t bytes = elem->getPrimitiveSizeInBits() / 8;
    llvm::LoadInst* ld = b_.CreateAlignedLoad(t, p, llvm::Align(bytes * count));
    if (invariant_[param]) ld->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx_, {}));
    std::vector<llvm::Value*> out;
    for (int64_t i = 0; i < count; ++i) {
      llvm::Value* v = count == 1 ? static_cast<llvm::Value*>(ld) : b_.CreateExtractElement(ld, i);
      out.push_back(v->getType()->isFloatTy() ? v : b_.CreateFPExt(v, b_.getFloatTy()));
    }
    return out;
  }

  // for (k = start; k < end; k += step) with the accumulators carried in phis; `body` maps
  // (k, accumulators) to the new accumulators. `unroll`: llvm.loop.unroll.count (0: no hint,
  // -1: llvm.loop.unroll.disable).
  std::vector<llvm::Value*> Loop(llvm::Value* start, llvm::Value* end, int64_t step, std::vector<llvm::Value*> acc,
                                 int unroll, const std::string& name,
                                 const std::function<std::vector<llvm::Value*>(llvm::Value*,
                                                                               const std::vector<llvm::Value*>&)>& body) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, name + ".header", f_);
    llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_, name + ".body", f_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", f_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* k = b_.CreatePHI(b_.getInt64Ty(), 2, name + ".k");
    k->addIncoming(start, pre);
    std::vector<llvm::PHINode*> phis;
    for (llvm::Value* a : acc) {
      phis.push_back(b_.CreatePHI(a->getType(), 2));
      phis.back()->addIncoming(a, pre);
    }
    b_.CreateCondBr(b_.CreateICmpSLT(k, end), body_bb, exit);
    b_.SetInsertPoint(body_bb);
    std::vector<llvm::Value*> in(phis.begin(), phis.end());
    std::vector<llvm::Value*> out = body(k, in);
    llvm::Value* next = b_.CreateAdd(k, I64(step), name + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
    k->addIncoming(next, b_.GetInsertBlock());
    for (size_t i = 0; i < phis.size(); ++i) phis[i]->addIncoming(out[i], b_.GetInsertBlock());
    llvm::BranchInst* br = b_.CreateBr(header);
    if (unroll != 0) {
      // unroll < 0: never unrolled (a pipelined loop unrolled would let ptxas sink its loads).
      llvm::MDNode* what =
          unroll < 0 ? llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")})
                     : llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.count"),
                                                llvm::ConstantAsMetadata::get(b_.getInt32(unroll))});
      llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, {nullptr, what});
      loop->replaceOperandWith(0, loop);
      br->setMetadata(llvm::LLVMContext::MD_loop, loop);
    }
    b_.SetInsertPoint(exit);
    return in;  // the phis: their values on exit
  }

  // `v` through an empty inline asm: the value is unchanged, but LLVM cannot see that it is a
  // load. Without it InstCombine folds the pipelined loop's phi(prologue load, next load) into
  // one load of a phi'd address inside the loop, undoing the pipelining. (An empty asm with a
  // tied 32-bit integer register works for NVPTX and for the host in the CPU emulation.)
  llvm::Value* Opaque(llvm::Value* v) {
    llvm::Type* i32 = b_.getInt32Ty();
    auto* fty = llvm::FunctionType::get(i32, {i32}, false);
    llvm::InlineAsm* asm_ = llvm::InlineAsm::get(fty, "", "=r,0", /*hasSideEffects=*/false);
    return b_.CreateBitCast(b_.CreateCall(asm_, {b_.CreateBitCast(v, i32)}), v->getType());
  }

  // cuBLASLt's GELU (the tanh approximation): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  llvm::Value* Gelu(llvm::Value* x) {
    llvm::Type* f32 = b_.getFloatTy();
    auto c = [&](double v) { return llvm::ConstantFP::get(f32, v); };
    llvm::Value* x3 = b_.CreateFMul(b_.CreateFMul(x, x), x);
    llvm::Value* inner = b_.CreateFMul(c(0.7978845608028654), b_.CreateFAdd(x, b_.CreateFMul(c(0.044715), x3)));
    llvm::FunctionCallee tanhf =
        module_->getOrInsertFunction("__nv_tanhf", llvm::FunctionType::get(f32, {f32}, false));
    if (auto* fn = llvm::dyn_cast<llvm::Function>(tanhf.getCallee())) {
      fn->setDoesNotThrow();
      fn->setMemoryEffects(llvm::MemoryEffects::none());
    }
    llvm::Value* t = b_.CreateCall(tanhf, {inner});
    return b_.CreateFMul(b_.CreateFMul(c(0.5), x), b_.CreateFAdd(c(1.0), t));
  }

  void EmitBody() {
    const int64_t R = p_.rows, W = p_.warps, T = W * 32;
    llvm::Type* f32 = b_.getFloatTy();
    llvm::Type* a_elem = ElemType(ctx_, g_.lhs_type);
    llvm::Type* b_elem = ElemType(ctx_, g_.rhs_type);
    llvm::Type* d_elem = ElemType(ctx_, g_.output_type);

    llvm::Value* tid = Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    llvm::Value* bid = Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    llvm::Value* lane = b_.CreateAnd(tid, I64(31));
    llvm::Value* warp = b_.CreateLShr(tid, I64(5));
    // Blocks: n tiles fastest (neighbouring blocks share A rows), then m tiles, then batches.
    llvm::Value* n_tile = b_.CreateURem(bid, I64(p_.n_tiles));
    llvm::Value* rest = b_.CreateUDiv(bid, I64(p_.n_tiles));
    llvm::Value* m_tile = b_.CreateURem(rest, I64(p_.m_tiles));
    llvm::Value* batch = b_.CreateUDiv(rest, I64(p_.m_tiles));
    llvm::Value* row0 = b_.CreateMul(m_tile, I64(R));
    llvm::Value* col0 = b_.CreateMul(n_tile, I64(kCols));
    // Out-of-range rows and columns read the last valid one (no branches in the K loop) and
    // are not stored.
    llvm::Value* col = Min(b_.CreateAdd(col0, lane), I64(g_.n - 1));
    std::vector<llvm::Value*> rows;
    for (int64_t i = 0; i < R; ++i) rows.push_back(Min(b_.CreateAdd(row0, I64(i)), I64(g_.m - 1)));
    llvm::Value* a_base = b_.CreateMul(batch, I64(g_.lhs_batch_stride));
    llvm::Value* b_base = b_.CreateMul(batch, I64(g_.rhs_batch_stride));

    // This warp's K range: chunks of a multiple of kKStep, so vector loads stay aligned.
    const int64_t chunk = CeilDiv(CeilDiv(g_.k, W), kKStep) * kKStep;
    llvm::Value* k_begin = b_.CreateMul(warp, I64(chunk));
    llvm::Value* k_end = Max(k_begin, Min(I64(g_.k), b_.CreateAdd(k_begin, I64(chunk))));
    llvm::Value* k_vec_end =
        b_.CreateAdd(k_begin, b_.CreateMul(b_.CreateUDiv(b_.CreateSub(k_end, k_begin), I64(kKStep)), I64(kKStep)));

    const int64_t lda = g_.lhs_leading_dim, ldb = g_.rhs_leading_dim;
    const bool a_t = g_.lhs_transposed, b_t = g_.rhs_transposed;
    // Vector loads along K need K contiguous (A row-major, B transposed) and 4-element alignment.
    auto vec_ok = [&](int param, bool k_contiguous, int64_t ld, int64_t batch_stride, const std::string& type) {
      const int64_t align = kKStep * TypeBytes(type);
      return k_contiguous && ld % kKStep == 0 && (g_.batch == 1 || batch_stride % kKStep == 0) &&
             p_.params[param].offset % align == 0;
    };
    const bool a_vec = vec_ok(p_.roles.a, !a_t, lda, g_.lhs_batch_stride, g_.lhs_type);
    const bool b_vec = vec_ok(p_.roles.b, b_t, ldb, g_.rhs_batch_stride, g_.rhs_type);

    // A(r, k..k+count-1) and B(k..k+count-1, col) as f32.
    auto load_a = [&](int64_t i, llvm::Value* k, int64_t count) {
      if (count > 1 && a_vec)
        return Load(p_.roles.a, a_elem, b_.CreateAdd(a_base, b_.CreateAdd(b_.CreateMul(rows[i], I64(lda)), k)), count);
      std::vector<llvm::Value*> out;
      for (int64_t j = 0; j < count; ++j) {
        llvm::Value* kj = b_.CreateAdd(k, I64(j));
        llvm::Value* idx = a_t ? b_.CreateAdd(b_.CreateMul(kj, I64(lda)), rows[i])
                               : b_.CreateAdd(b_.CreateMul(rows[i], I64(lda)), kj);
        out.push_back(Load(p_.roles.a, a_elem, b_.CreateAdd(a_base, idx), 1)[0]);
      }
      return out;
    };
    auto load_b = [&](llvm::Value* k, int64_t count) {
      if (count > 1 && b_vec)
        return Load(p_.roles.b, b_elem, b_.CreateAdd(b_base, b_.CreateAdd(b_.CreateMul(col, I64(ldb)), k)), count);
      std::vector<llvm::Value*> out;
      for (int64_t j = 0; j < count; ++j) {
        llvm::Value* kj = b_.CreateAdd(k, I64(j));
        llvm::Value* idx = b_t ? b_.CreateAdd(b_.CreateMul(col, I64(ldb)), kj)
                               : b_.CreateAdd(b_.CreateMul(kj, I64(ldb)), col);
        out.push_back(Load(p_.roles.b, b_elem, b_.CreateAdd(b_base, idx), 1)[0]);
      }
      return out;
    };
    // acc[i] += A(r_i, k + j) * B(k + j, col) for j in order: one FMA chain per output.
    // A batch: `steps` loads of `count` K values each, as one flat list (per step: B's `count`
    // values, then each row's `count` A values).
    auto load_batch = [&](llvm::Value* k, int64_t count, int64_t steps) {
      std::vector<llvm::Value*> v;
      for (int64_t s = 0; s < steps; ++s) {
        llvm::Value* ks = b_.CreateAdd(k, I64(s * count));
        for (llvm::Value* x : load_b(ks, count)) v.push_back(x);
        for (int64_t i = 0; i < R; ++i)
          for (llvm::Value* x : load_a(i, ks, count)) v.push_back(x);
      }
      return v;
    };
    auto fma_batch = [&](const std::vector<llvm::Value*>& v, int64_t count, int64_t steps, std::vector<llvm::Value*> acc) {
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t base = s * count * (R + 1);
        for (int64_t j = 0; j < count; ++j)
          for (int64_t i = 0; i < R; ++i)
            acc[i] = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32},
                                        {v[base + count * (i + 1) + j], v[base + j], acc[i]});
      }
      return acc;
    };
    auto step = [&](int64_t count, int64_t steps) {
      return [&, count, steps](llvm::Value* k, const std::vector<llvm::Value*>& acc) {
        return fma_batch(load_batch(k, count, steps), count, steps, acc);
      };
    };
    std::vector<llvm::Value*> acc(R, llvm::ConstantFP::get(f32, 0.0));
    // Batches of `depth` vector steps, software-pipelined: the loop carries the loaded batch and
    // issues the next batch's loads before this batch's FMAs. The loop is latency-bound (few
    // warps per scheduler); without the pipelining ptxas moves each load next to its first use
    // and the steps' latencies add up. The last iteration reloads the last batch (in bounds).
    // Then single vector steps, then single K values.
    const int64_t depth = p_.depth, batch_k = kKStep * depth;
    llvm::Value* k_batch_end = b_.CreateAdd(
        k_begin, b_.CreateMul(b_.CreateUDiv(b_.CreateSub(k_end, k_begin), I64(batch_k)), I64(batch_k)));
    {
      llvm::BasicBlock* pre = b_.GetInsertBlock();
      llvm::BasicBlock* pipe = llvm::BasicBlock::Create(ctx_, "kpipe", f_);
      llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx_, "kpipe.after", f_);
      b_.CreateCondBr(b_.CreateICmpSLT(k_begin, k_batch_end), pipe, after);
      b_.SetInsertPoint(pipe);
      std::vector<llvm::Value*> carried = acc;
      for (llvm::Value* v : load_batch(k_begin, kKStep, depth)) carried.push_back(Opaque(v));
      llvm::Value* k_last = b_.CreateSub(k_batch_end, I64(batch_k));
      carried = Loop(k_begin, k_batch_end, batch_k, carried, -1, "kbatch",
                     [&](llvm::Value* k, const std::vector<llvm::Value*>& in) {
                       std::vector<llvm::Value*> next = load_batch(Min(b_.CreateAdd(k, I64(batch_k)), k_last), kKStep, depth);
                       std::vector<llvm::Value*> cur(in.begin() + R, in.end());
                       std::vector<llvm::Value*> out =
                           fma_batch(cur, kKStep, depth, std::vector<llvm::Value*>(in.begin(), in.begin() + R));
                       out.insert(out.end(), next.begin(), next.end());
                       return out;
                     });
      llvm::BasicBlock* pipe_end = b_.GetInsertBlock();
      b_.CreateBr(after);
      b_.SetInsertPoint(after);
      for (int64_t i = 0; i < R; ++i) {
        llvm::PHINode* phi = b_.CreatePHI(f32, 2);
        phi->addIncoming(acc[i], pre);
        phi->addIncoming(carried[i], pipe_end);
        acc[i] = phi;
      }
    }
    acc = Loop(k_batch_end, k_vec_end, kKStep, acc, 0, "kvec", step(kKStep, 1));
    acc = Loop(k_vec_end, k_end, 1, acc, 0, "ktail", step(1, 1));

    // Partial sums through shared memory: [warp][row][lane].
    auto* parts_ty = llvm::ArrayType::get(f32, static_cast<uint64_t>(W * R * kCols));
    auto* parts = new llvm::GlobalVariable(*module_, parts_ty, false, llvm::GlobalValue::InternalLinkage,
                                           llvm::UndefValue::get(parts_ty), absl::StrCat(name_, ".partials"), nullptr,
                                           llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/3);
    parts->setAlignment(llvm::Align(16));
    auto part_ptr = [&](llvm::Value* index) { return b_.CreateInBoundsGEP(parts_ty, parts, {I64(0), index}); };
    for (int64_t i = 0; i < R; ++i) {
      llvm::Value* idx = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(warp, I64(R)), I64(i)), I64(kCols)), lane);
      b_.CreateAlignedStore(acc[i], part_ptr(idx), llvm::Align(4));
    }
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});

    // Epilogue: thread t finishes outputs t, t + T, ... of the block's R x 32 tile.
    Epilogue ep;
    KnownEpilogue(g_.epilogue, &ep);
    const bool bias = ep.bias;
    const bool has_c = !bias && g_.beta != 0;
    const int64_t ldd = g_.output_leading_dim;
    llvm::Value* d_base = b_.CreateMul(batch, I64(g_.output_batch_stride));
    for (int64_t o0 = 0; o0 < R * kCols; o0 += T) {
      llvm::Value* o = b_.CreateAdd(tid, I64(o0));
      llvm::Value* i = b_.CreateLShr(o, I64(5));
      llvm::Value* c = b_.CreateAnd(o, I64(31));
      llvm::Value* r = b_.CreateAdd(row0, i);
      llvm::Value* cc = b_.CreateAdd(col0, c);
      llvm::Value* ok = b_.CreateAnd(b_.CreateICmpSLT(r, I64(g_.m)), b_.CreateICmpSLT(cc, I64(g_.n)));
      if (o0 + T > R * kCols) ok = b_.CreateAnd(ok, b_.CreateICmpSLT(o, I64(R * kCols)));
      llvm::BasicBlock* store_bb = llvm::BasicBlock::Create(ctx_, "store", f_);
      llvm::BasicBlock* next_bb = llvm::BasicBlock::Create(ctx_, "next", f_);
      b_.CreateCondBr(ok, store_bb, next_bb);
      b_.SetInsertPoint(store_bb);
      llvm::Value* v = nullptr;
      for (int64_t w = 0; w < W; ++w) {
        llvm::Value* idx = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(I64(w * R), i), I64(kCols)), c);
        llvm::Value* part = b_.CreateAlignedLoad(f32, part_ptr(idx), llvm::Align(4));
        v = v == nullptr ? part : b_.CreateFAdd(v, part);
      }
      if (g_.alpha != 1.0) v = b_.CreateFMul(v, llvm::ConstantFP::get(f32, g_.alpha));
      llvm::Value* d_index = b_.CreateAdd(d_base, b_.CreateAdd(b_.CreateMul(r, I64(ldd)), cc));
      if (has_c) {
        // C may be D's own buffer: read before this thread writes the element.
        llvm::Value* cv = Load(p_.roles.c, d_elem, d_index, 1)[0];
        v = g_.beta == 1.0 ? b_.CreateFAdd(v, cv)
                           : b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32},
                                                {cv, llvm::ConstantFP::get(f32, g_.beta), v});
      }
      if (bias) v = b_.CreateFAdd(v, Load(p_.roles.c, d_elem, cc, 1)[0]);
      // max(v, 0) with NaN kept (HLO's maximum propagates NaN).
      if (ep.relu) v = b_.CreateSelect(b_.CreateFCmpOLT(v, llvm::ConstantFP::get(f32, 0.0)), llvm::ConstantFP::get(f32, 0.0), v);
      if (ep.gelu) v = Gelu(v);
      if (!d_elem->isFloatTy()) v = b_.CreateFPTrunc(v, d_elem);
      b_.CreateAlignedStore(v, b_.CreateInBoundsGEP(d_elem, f_->getArg(p_.roles.d), d_index),
                            llvm::Align(TypeBytes(g_.output_type)));
      b_.CreateBr(next_bb);
      b_.SetInsertPoint(next_bb);
    }
    b_.CreateRetVoid();
  }

  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  const SmallGemmPlan& p_;
  const runtime::GemmConfig& g_;
  std::string name_;
  llvm::Function* f_ = nullptr;
  std::vector<bool> invariant_;
};

}  // namespace

absl::StatusOr<SmallGemmOptions> ParseSmallGemmOptions(const std::string& text) {
  SmallGemmOptions o;
  auto bad = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(
        "small GEMM kernels: expected on, off, ROWSxWARPS[xDEPTH] (rows 1-32, warps 1-", kMaxWarps,
        ", depth 1-8) and/or max=MACS (batch*m*n*k at most, 1 to 2^40), comma-separated, got '", text, "'"));
  };
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    if (part == "on") continue;
    if (part == "off") {
      o.enabled = false;
      continue;
    }
    if (absl::ConsumePrefix(&part, "max=")) {
      if (!absl::SimpleAtoi(part, &o.max_macs) || o.max_macs < 1 || o.max_macs > (int64_t{1} << 40)) return bad();
      continue;
    }
    std::vector<std::string> tile = absl::StrSplit(part, 'x');
    int64_t v[3] = {0, 0, 0};
    bool ok = tile.size() == 2 || tile.size() == 3;
    for (size_t i = 0; ok && i < tile.size(); ++i) ok = absl::SimpleAtoi(tile[i], &v[i]);
    if (!ok || v[0] < 1 || v[0] > 32 || v[1] < 1 || v[1] > kMaxWarps || (tile.size() == 3 && (v[2] < 1 || v[2] > 8)))
      return bad();
    o.rows = v[0];
    o.warps = v[1];
    o.depth = v[2];
  }
  return o;
}

std::optional<SmallGemmPlan> PlanSmallGemm(const runtime::GemmConfig& config, const SmallGemmRoles& roles,
                                           const std::vector<runtime::BufferSlice>& params,
                                           const GpuDeviceInfo& device, const SmallGemmOptions& options) {
  // What the kernel can compute at all (not whether it should: small-gemm-selector decided).
  if (!FloatType(config.lhs_type) || config.lhs_type != config.rhs_type || !FloatType(config.output_type) ||
      config.compute_type != "f32")
    return std::nullopt;
  if (!std::isfinite(config.alpha) || !std::isfinite(config.beta)) return std::nullopt;
  if (config.batch < 1 || config.m < 1 || config.n < 1 || config.k < 1) return std::nullopt;
  {
    Epilogue known;
    if (!KnownEpilogue(config.epilogue, &known)) return std::nullopt;
  }
  SmallGemmPlan p;
  p.config = config;
  p.roles = roles;
  p.params = params;
  runtime::GemmConfig& g = p.config;
  Epilogue ep;
  KnownEpilogue(g.epilogue, &ep);
  const bool bias = ep.bias;
  const bool needs_c = bias || g.beta != 0;
  const int n = static_cast<int>(params.size());
  auto valid = [&](int i) { return i >= 0 && i < n && params[i].valid(); };
  if (!valid(roles.a) || !valid(roles.b) || !valid(roles.d) || (needs_c && !valid(roles.c))) return std::nullopt;
  // The same normalization as the runtimes (runtime/gpu/cublaslt.cc, runtime/cpu/gemm.cc).
  const int64_t a_rows = g.lhs_transposed ? g.k : g.m, a_cols = g.lhs_transposed ? g.m : g.k;
  const int64_t b_rows = g.rhs_transposed ? g.n : g.k, b_cols = g.rhs_transposed ? g.k : g.n;
  if (g.lhs_leading_dim <= 0) g.lhs_leading_dim = a_cols;
  if (g.rhs_leading_dim <= 0) g.rhs_leading_dim = b_cols;
  if (g.output_leading_dim <= 0) g.output_leading_dim = g.n;
  if (g.lhs_leading_dim < a_cols || g.rhs_leading_dim < b_cols || g.output_leading_dim < g.n) return std::nullopt;
  if (g.batch == 1) {
    g.lhs_batch_stride = g.rhs_batch_stride = g.output_batch_stride = 0;
  } else {
    if (g.lhs_batch_stride <= 0) g.lhs_batch_stride = a_rows * g.lhs_leading_dim;
    if (g.rhs_batch_stride <= 0) g.rhs_batch_stride = b_rows * g.rhs_leading_dim;
    if (g.output_batch_stride <= 0) g.output_batch_stride = g.m * g.output_leading_dim;
    if (g.output_batch_stride < g.m * g.output_leading_dim) return std::nullopt;  // overlapping outputs
  }
  // Every element the kernel touches lies inside its slice (sizes are small: no overflow).
  auto fits = [&](int i, int64_t elements, const std::string& type) {
    return elements * TypeBytes(type) <= params[i].size;
  };
  const int64_t d_extent = Extent(g.batch, g.m, g.n, g.output_leading_dim, g.output_batch_stride);
  if (!fits(roles.a, Extent(g.batch, a_rows, a_cols, g.lhs_leading_dim, g.lhs_batch_stride), g.lhs_type) ||
      !fits(roles.b, Extent(g.batch, b_rows, b_cols, g.rhs_leading_dim, g.rhs_batch_stride), g.rhs_type) ||
      !fits(roles.d, d_extent, g.output_type))
    return std::nullopt;
  if (bias && !fits(roles.c, g.n, g.output_type)) return std::nullopt;
  if (!bias && g.beta != 0 && !fits(roles.c, d_extent, g.output_type)) return std::nullopt;
  if (!needs_c) p.roles.c = -1;
  // A and B must not be written by the kernel (C may be D).
  if (Overlaps(params[roles.a], params[roles.d]) || Overlaps(params[roles.b], params[roles.d])) return std::nullopt;

  // The tile (measured on the H200 with scan_rnn.large's 64x512 GEMMs, k 256 and 512; ms per
  // call of the whole module, cuBLAS 2.39): rows x warps x depth 4x8x2 1.79, 8x8x2 1.84,
  // 8x16x2 1.85, 8x8x4 1.88, 8x8x1 1.90, 4x16x2 1.91, 2x8x4 2.17, 2x16x2 2.18.
  // Warps split K into chunks of >= 32 (fewer warps for short K); rows per block from 8 down
  // while the grid has fewer blocks than SMs (latency-bound: more blocks, each with less work).
  p.warps = options.warps > 0 ? options.warps : std::clamp<int64_t>(CeilDiv(g.k, 32), 1, 8);
  if (options.rows > 0) {
    p.rows = options.rows;
  } else {
    p.rows = 1;
    while (p.rows < 8 && p.rows < g.m) p.rows *= 2;
    while (p.rows > 1 && g.batch * CeilDiv(g.m, p.rows) * CeilDiv(g.n, kCols) < device.sm_count) p.rows /= 2;
  }
  // Vector steps per pipelined batch: 2 (deeper batches measured slower), when the warp has at
  // least two batches (one batch has nothing to overlap its loads with), they divide its steps
  // (steps left over run unpipelined, each paying the full load latency), and the registers
  // (about 5 (rows + 1) depth + 40 per thread, from ptxas) still let every block be resident.
  const int64_t chunk_steps = CeilDiv(CeilDiv(g.k, p.warps), kKStep);
  if (options.depth > 0) {
    p.depth = options.depth;
  } else {
    const int64_t blocks = g.batch * CeilDiv(g.m, p.rows) * CeilDiv(g.n, kCols);
    const int64_t per_sm = std::max<int64_t>(1, CeilDiv(blocks, std::max<int64_t>(1, device.sm_count)));
    const int64_t budget = std::min<int64_t>(255, 65536 / (32 * p.warps * per_sm));
    p.depth = 1;
    for (int64_t d = kDefaultDepth; d > 1; --d) {
      if (chunk_steps % d == 0 && chunk_steps >= 2 * d && 5 * (p.rows + 1) * d + 40 <= budget) {
        p.depth = d;
        break;
      }
    }
  }
  p.m_tiles = CeilDiv(g.m, p.rows);
  p.n_tiles = CeilDiv(g.n, kCols);
  if (g.batch * p.m_tiles * p.n_tiles > (int64_t{1} << 31) - 1) return std::nullopt;
  // Shared memory for the partial sums.
  if (p.warps * p.rows * kCols * 4 > device.shared_memory_per_block) return std::nullopt;
  return p;
}

absl::StatusOr<runtime::LaunchDimensions> EmitSmallGemmKernel(llvm::Module* module, const std::string& name,
                                                             const SmallGemmPlan& plan) {
  if (module->getNamedValue(name) != nullptr) return absl::InternalError(absl::StrCat("kernel ", name, " exists"));
  Emitter e(module, name, plan);
  return e.Emit();
}

}  // namespace hloc::codegen::gpu
