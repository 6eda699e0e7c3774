// The elemental emitter's IR is target-neutral: the same generators, with the math calls mapped
// to libdevice names (as the GPU backend will), compile with LLVM's NVPTX backend for sm_90, and
// ptxas (when the CUDA toolkit is installed) assembles the PTX.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>

#include "absl/strings/str_cat.h"
#include "backend/elemental_harness.h"
#include "codegen/elemental/math_functions.h"
#include "ir/hlo_parser.h"
#include "ir/verifier.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

namespace hloc::elemental_test {
namespace {

using P = PrimitiveType;

// What the GPU emitter does with math: libdevice functions instead of libm and intrinsics.
class LibdeviceEmitter : public codegen::ElementalIrEmitter {
 public:
  using ElementalIrEmitter::ElementalIrEmitter;
  llvm::Value* EmitMathCall(const std::string& libm_name, const std::vector<llvm::Value*>& args) override {
    return ElementalIrEmitter::EmitMathCall(codegen::LibdeviceName(libm_name), args);
  }
  llvm::Value* EmitMathIntrinsic(llvm::Intrinsic::ID id, const std::vector<llvm::Value*>& args) override {
    std::optional<codegen::MathFunction> fn = codegen::IntrinsicMathFunction(id);
    if (!fn) return ElementalIrEmitter::EmitMathIntrinsic(id, args);
    return EmitMathCall(codegen::LibmName(*fn, args[0]->getType()->isDoubleTy()), args);
  }
};

std::string N(P t) { return std::string(PrimitiveTypeName(t)); }

std::vector<std::string> Modules() {
  std::vector<std::string> v;
  const std::vector<P> types = {P::PRED, P::S4, P::S8, P::S32, P::S64, P::U8, P::U32, P::F16, P::BF16, P::F32,
                                P::F64, P::F8E4M3FN, P::F8E5M2, P::F8E4M3FNUZ, P::F4E2M1FN, P::F8E8M0FNU, P::C64};
  for (const char* op : {"abs", "cbrt", "ceil", "count-leading-zeros", "cosine", "erf", "exponential",
                         "exponential-minus-one", "floor", "is-finite", "log", "log-plus-one", "logistic", "negate",
                         "not", "popcnt", "round-nearest-afz", "round-nearest-even", "rsqrt", "sign", "sine", "sqrt",
                         "tan", "tanh"})
    for (P t : types) {
      P rt = std::string(op) == "is-finite" ? P::PRED : (t == P::C64 && std::string(op) == "abs") ? P::F32 : t;
      v.push_back(absl::StrCat("HloModule m\nENTRY e {\n p = ", N(t), "[16] parameter(0)\n ROOT r = ", N(rt), "[16] ", op,
                               "(p)\n}\n"));
    }
  for (const char* op : {"add", "and", "atan2", "divide", "maximum", "minimum", "multiply", "or", "power",
                         "remainder", "shift-left", "shift-right-arithmetic", "shift-right-logical", "subtract", "xor"})
    for (P t : types)
      v.push_back(absl::StrCat("HloModule m\nENTRY e {\n a = ", N(t), "[16] parameter(0)\n b = ", N(t),
                               "[16] parameter(1)\n ROOT r = ", N(t), "[16] ", op, "(a, b)\n}\n"));
  for (P from : types)
    for (P to : types)
      v.push_back(absl::StrCat("HloModule m\nENTRY e {\n p = ", N(from), "[16] parameter(0)\n ROOT r = ", N(to),
                               "[16] convert(p)\n}\n"));
  v.push_back(R"(HloModule m
add {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
ENTRY e {
  p = bf16[4,6]{0,1} parameter(0)
  i = s32[3] parameter(1)
  c = bf16[] constant(0)
  r = bf16[4] reduce(p, c), dimensions={1}, to_apply=add
  g = bf16[3,6] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
  w = bf16[2,3] reduce-window(g, c), window={size=2x2 stride=1x2}, to_apply=add
  pd = bf16[6,7] pad(w, c), padding=1_3_0x-1_2_2
  k = bf16[6,3] slice(pd), slice={[0:6], [1:7:2]}
  ROOT o = bf16[6,4] concatenate(k, k), dimensions={1}, metadata={op_name="x"}
})");
  v.push_back(R"(HloModule m
ENTRY e {
  a = bf16[1,5,5,2] parameter(0)
  k = bf16[3,3,1,4] parameter(1)
  cv = f32[1,3,3,4] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2
  d = f32[1,3,3,4] dot(cv, cv), lhs_batch_dims={0,1,2}, rhs_batch_dims={0,1,2}, lhs_contracting_dims={3}, rhs_contracting_dims={3}
  ROOT t = f32[1,3,3,4] tanh(cv)
})");
  return v;
}

TEST_CASE("elemental: generated IR compiles for NVPTX sm_90 (and ptxas accepts it)", "[elemental][ptx]") {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  const std::string triple = "nvptx64-nvidia-cuda";
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  REQUIRE(target != nullptr);
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(triple, "sm_90", "+ptx80", llvm::TargetOptions(),
                                                                      std::nullopt));
  REQUIRE(tm != nullptr);
  llvm::LLVMContext ctx;
  llvm::Module m("elemental_ptx", ctx);
  m.setTargetTriple(triple);
  m.setDataLayout(tm->createDataLayout());
  int emitted = 0, index = 0, unimplemented = 0;
  std::set<std::string> unimplemented_ops;
  for (const std::string& text : Modules()) {
    auto module = ParseHloModule(text);
    REQUIRE(module.ok());
    if (!VerifyModule(**module).ok()) continue;  // an op x type combination HLO does not have
    const std::string name = absl::StrCat("kernel", index++);
    absl::Status s = EmitCaseFunction(m, **module, name, [](llvm::Module* mod, llvm::IRBuilderBase* b) {
      return std::make_unique<LibdeviceEmitter>(mod, b);
    });
    INFO(text);
    if (absl::IsUnimplemented(s)) {  // e.g. maximum of complex numbers, which the evaluator rejects too
      ++unimplemented;
      unimplemented_ops.insert(std::string(s.message()).substr(0, std::string(s.message()).find(" (")));
      continue;
    }
    REQUIRE(s.ok());
    m.getFunction(name)->setCallingConv(llvm::CallingConv::PTX_Kernel);
    ++emitted;
  }
  REQUIRE_FALSE(llvm::verifyModule(m, &llvm::errs()));
  // The O2 pipeline first, as the GPU backend will run it.
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
  }
  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream os(ptx);
    llvm::legacy::PassManager pm;
    REQUIRE_FALSE(tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile));
    pm.run(m);
  }
  std::cout << "NVPTX: " << emitted << " kernels, " << ptx.size() << " bytes of PTX (" << unimplemented
            << " op x type combinations the emitter does not implement)\n";
  for (const std::string& u : unimplemented_ops) std::cout << "  " << u << "\n";
  CHECK(unimplemented <= 40);
  REQUIRE(emitted > 400);
  REQUIRE(ptx.str().contains(".entry kernel0"));
  REQUIRE(ptx.str().contains("__nv_erff"));
  const char* ptxas = "/usr/local/cuda/bin/ptxas";
  if (std::FILE* f = std::fopen(ptxas, "r")) {
    std::fclose(f);
    const std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    const std::string path = dir + "/hloc_elemental_test.ptx";
    std::ofstream(path) << ptx.str().str();
    // -c: libdevice functions stay external (the GPU backend links libdevice first).
    const std::string cmd = std::string(ptxas) + " -arch=sm_90 -c " + path + " -o " + path + ".o 2>&1";
    const int rc = std::system(cmd.c_str());
    INFO(cmd);
    CHECK(rc == 0);
    if (rc == 0) std::cout << "ptxas -arch=sm_90 assembled the PTX\n";
    std::remove(path.c_str());
    std::remove((path + ".o").c_str());
  } else {
    WARN("ptxas not found at /usr/local/cuda/bin/ptxas: PTX generated but not assembled");
  }
}

}  // namespace
}  // namespace hloc::elemental_test
