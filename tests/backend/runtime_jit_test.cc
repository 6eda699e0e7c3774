// CpuExecutable end to end without the compiler: tiny kernels written as LLVM IR, compiled to an
// ELF object here with LLVM's TargetMachine, put into a hand-built Executable with copies,
// memsets, a while loop, a conditional, a GEMM, a sort through __hloc_cpu_sort and a custom
// call, then loaded with the JIT linker and run (also after a Serialize/Deserialize trip).
#include <algorithm>
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "runtime/cpu/cpu_executable.h"

namespace hloc::runtime {
namespace {

constexpr char kKernelsIr[] = R"IR(
declare float @expf(float)
declare void @__hloc_cpu_sort(i64, i64, i64, i32, ptr, ptr, i8, ptr)

; c[i] = a[i] + expf(b[i]) for i in [0, 1000), the share `part` of `nparts` (strided).
define void @add_exp(ptr %args, i64 %part, i64 %nparts) {
entry:
  %a = load ptr, ptr %args
  %bp = getelementptr ptr, ptr %args, i64 1
  %b = load ptr, ptr %bp
  %cp = getelementptr ptr, ptr %args, i64 2
  %c = load ptr, ptr %cp
  %empty = icmp sge i64 %part, 1000
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ %part, %entry ], [ %next, %loop ]
  %pa = getelementptr float, ptr %a, i64 %i
  %va = load float, ptr %pa
  %pb = getelementptr float, ptr %b, i64 %i
  %vb = load float, ptr %pb
  %e = call float @expf(float %vb)
  %s = fadd float %va, %e
  %pc = getelementptr float, ptr %c, i64 %i
  store float %s, ptr %pc
  %next = add i64 %i, %nparts
  %done = icmp sge i64 %next, 1000
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; pred = counter < 5
define void @loop_compare(ptr %args, i64 %part, i64 %nparts) {
  %cnt = load ptr, ptr %args
  %pp = getelementptr ptr, ptr %args, i64 1
  %pred = load ptr, ptr %pp
  %v = load i32, ptr %cnt
  %lt = icmp slt i32 %v, 5
  %z = zext i1 %lt to i8
  store i8 %z, ptr %pred
  ret void
}

; counter += 1; acc += 2.5
define void @loop_body(ptr %args, i64 %part, i64 %nparts) {
  %cnt = load ptr, ptr %args
  %ap = getelementptr ptr, ptr %args, i64 1
  %acc = load ptr, ptr %ap
  %v = load i32, ptr %cnt
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %cnt
  %f = load float, ptr %acc
  %f1 = fadd float %f, 2.5
  store float %f1, ptr %acc
  ret void
}

define void @set10(ptr %args, i64 %part, i64 %nparts) {
  %o = load ptr, ptr %args
  store i32 10, ptr %o
  ret void
}
define void @set20(ptr %args, i64 %part, i64 %nparts) {
  %o = load ptr, ptr %args
  store i32 20, ptr %o
  ret void
}
define void @set30(ptr %args, i64 %part, i64 %nparts) {
  %o = load ptr, ptr %args
  store i32 30, ptr %o
  ret void
}

define internal void @less_f32(ptr %result, ptr %ops) {
  %p0 = load ptr, ptr %ops
  %q = getelementptr ptr, ptr %ops, i64 1
  %p1 = load ptr, ptr %q
  %a = load float, ptr %p0
  %b = load float, ptr %p1
  %lt = fcmp olt float %a, %b
  %z = zext i1 %lt to i8
  store i8 %z, ptr %result
  ret void
}

; Sorts the 16 floats of args[0] in place through the runtime.
define void @sort16(ptr %args, i64 %part, i64 %nparts) {
  %buf = load ptr, ptr %args
  %arrays = alloca ptr
  store ptr %buf, ptr %arrays
  %sizes = alloca i32
  store i32 4, ptr %sizes
  call void @__hloc_cpu_sort(i64 1, i64 16, i64 1, i32 1, ptr %arrays, ptr %sizes, i8 1, ptr @less_f32)
  ret void
}
)IR";

std::vector<uint8_t> CompileIr(const std::string& ir) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(ir, diagnostic, context);
  if (!module) {
    std::string message;
    llvm::raw_string_ostream os(message);
    diagnostic.print("kernels.ll", os);
    FAIL(message);
  }
  const std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  REQUIRE(target != nullptr);
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(triple);
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager passes;
  REQUIRE_FALSE(machine->addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::ObjectFile));
  passes.run(*module);
  return std::vector<uint8_t>(object.begin(), object.end());
}

Thunk Kernel(const std::string& name, std::vector<BufferSlice> args, int64_t parts = 1) {
  Thunk t;
  t.kind = ThunkKind::kKernel;
  t.name = name + ".fusion";
  t.kernel_name = name;
  t.arguments = std::move(args);
  t.launch.partitions = parts;
  return t;
}

ArrayShape Shape(const std::string& type, int64_t size, std::vector<int64_t> dims) {
  ArrayShape s{type, size, std::move(dims), {}};
  for (size_t i = 0; i < s.dimensions.size(); ++i) s.minor_to_major.push_back(s.dimensions.size() - 1 - i);
  return s;
}

// Allocations: 0..6 parameters, 7 temps {counter@0, pred@4, acc@8, branch@12}, 8 c, 9 sorted,
// 10 gemm output, 11 custom-call output.
Executable BuildExecutable(const std::vector<uint8_t>& code) {
  Executable e;
  e.module_name = "jit_test";
  e.platform = "cpu";
  e.code = code;
  e.parameter_shapes = {Shape("f32", 4, {1000}), Shape("f32", 4, {1000}),  Shape("s32", 4, {}),
                        Shape("s32", 4, {}),     Shape("f32", 4, {16}),    Shape("f32", 4, {2, 3}),
                        Shape("f32", 4, {3, 2})};
  for (size_t i = 0; i < e.parameter_shapes.size(); ++i) {
    BufferAllocation a;
    a.index = static_cast<int64_t>(i);
    a.size = e.parameter_shapes[i].byte_size();
    a.is_entry_parameter = true;
    a.parameter_number = static_cast<int64_t>(i);
    e.allocations.push_back(a);
    e.parameter_slices.push_back({a.index, 0, a.size});
  }
  for (int64_t size : {16, 4000, 64, 16, 8}) {
    BufferAllocation a;
    a.index = static_cast<int64_t>(e.allocations.size());
    a.size = size;
    a.maybe_live_out = true;
    e.allocations.push_back(a);
  }
  e.result_shapes = {Shape("f32", 4, {1000}), Shape("s32", 4, {}), Shape("f32", 4, {}), Shape("s32", 4, {}),
                     Shape("f32", 4, {16}),   Shape("f32", 4, {2, 2}), Shape("s32", 4, {2})};
  e.result_slices = {{8, 0, 4000}, {7, 0, 4}, {7, 8, 4}, {7, 12, 4}, {9, 0, 64}, {10, 0, 16}, {11, 0, 8}};
  e.result_is_tuple = true;

  Thunk add = Kernel("add_exp", {{0, 0, 4000}, {1, 0, 4000}, {8, 0, 4000}}, 8);
  Thunk init;
  init.kind = ThunkKind::kCopy;
  init.name = "copy.counter";
  init.arguments = {{2, 0, 4}, {7, 0, 4}};
  init.size = 4;
  Thunk zero;
  zero.kind = ThunkKind::kMemset;
  zero.name = "zero.acc";
  zero.arguments = {{7, 8, 4}};
  zero.memset_value = 0;
  Thunk loop;
  loop.kind = ThunkKind::kWhile;
  loop.name = "while";
  loop.predicate = {7, 4, 1};
  loop.condition = {Kernel("loop_compare", {{7, 0, 4}, {7, 4, 1}})};
  loop.body = {Kernel("loop_body", {{7, 0, 4}, {7, 8, 4}})};
  Thunk cond;
  cond.kind = ThunkKind::kConditional;
  cond.name = "conditional";
  cond.predicate = {3, 0, 4};
  cond.branches = {{Kernel("set10", {{7, 12, 4}})}, {Kernel("set20", {{7, 12, 4}})}, {Kernel("set30", {{7, 12, 4}})}};
  Thunk copy_sort;
  copy_sort.kind = ThunkKind::kCopy;
  copy_sort.name = "copy.sort";
  copy_sort.arguments = {{4, 0, 64}, {9, 0, 64}};
  copy_sort.size = 64;
  Thunk gemm;
  gemm.kind = ThunkKind::kGemm;
  gemm.name = "dot";
  gemm.arguments = {{5, 0, 24}, {6, 0, 24}, {10, 0, 16}};
  gemm.gemm.lhs_type = gemm.gemm.rhs_type = gemm.gemm.output_type = "f32";
  gemm.gemm.m = 2;
  gemm.gemm.n = 2;
  gemm.gemm.k = 3;
  Thunk custom;
  custom.kind = ThunkKind::kCustomCall;
  custom.name = "custom-call";
  custom.target = "hloc_test_fill";
  custom.backend_config = "7";
  custom.arguments = {{11, 0, 8}};
  Thunk seq;
  seq.kind = ThunkKind::kSequential;
  seq.name = "seq";
  seq.body = {copy_sort, Kernel("sort16", {{9, 0, 64}})};
  Thunk graph;  // a GPU command buffer runs its body in order on the host
  graph.kind = ThunkKind::kCommandBuffer;
  graph.name = "command_buffer";
  graph.body = {gemm};
  e.thunks = {add, init, zero, loop, cond, seq, graph, custom};
  return e;
}

template <typename T>
HostBuffer Buffer(const ArrayShape& shape, const std::vector<T>& values) {
  HostBuffer b;
  b.shape = shape;
  b.data.resize(values.size() * sizeof(T));
  std::memcpy(b.data.data(), values.data(), b.data.size());
  return b;
}

template <typename T>
std::vector<T> Values(const HostBuffer& b) {
  std::vector<T> v(b.data.size() / sizeof(T));
  std::memcpy(v.data(), b.data.data(), b.data.size());
  return v;
}

std::vector<HostBuffer> Arguments(const Executable& e, int32_t counter, int32_t branch) {
  std::vector<float> a(1000), b(1000), s(16);
  for (int i = 0; i < 1000; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(i % 7) * 0.25f;
  }
  for (int i = 0; i < 16; ++i) s[i] = static_cast<float>((i * 7) % 16) - 3.f;
  return {Buffer(e.parameter_shapes[0], a),
          Buffer(e.parameter_shapes[1], b),
          Buffer(e.parameter_shapes[2], std::vector<int32_t>{counter}),
          Buffer(e.parameter_shapes[3], std::vector<int32_t>{branch}),
          Buffer(e.parameter_shapes[4], s),
          Buffer(e.parameter_shapes[5], std::vector<float>{1, 2, 3, 4, 5, 6}),
          Buffer(e.parameter_shapes[6], std::vector<float>{1, 0, 0, 1, 1, 1})};
}

void CheckRun(CpuExecutable& exe, int32_t counter, int32_t branch, int32_t want_branch) {
  auto results = exe.Run(Arguments(exe.executable(), counter, branch));
  REQUIRE(results.ok());
  REQUIRE(results->size() == 7);
  std::vector<float> c = Values<float>((*results)[0]);
  for (int i = 0; i < 1000; ++i) {
    INFO(i);
    REQUIRE(c[i] == Approx(i + std::exp((i % 7) * 0.25f)).epsilon(1e-6));
  }
  const int32_t iterations = std::max(0, 5 - counter);
  CHECK(Values<int32_t>((*results)[1])[0] == std::max(counter, 5));
  CHECK(Values<float>((*results)[2])[0] == 2.5f * iterations);
  CHECK(Values<int32_t>((*results)[3])[0] == want_branch);
  std::vector<float> sorted = Values<float>((*results)[4]);
  CHECK(std::is_sorted(sorted.begin(), sorted.end()));
  CHECK(sorted.front() == -3.f);
  CHECK(Values<float>((*results)[5]) == std::vector<float>{4, 5, 10, 11});
  CHECK(Values<int32_t>((*results)[6]) == std::vector<int32_t>{7, 7});
}

void RegisterFill() {
  RegisterCpuCustomCall("hloc_test_fill",
                        [](void** args, const std::vector<int64_t>& sizes, const std::string& config) {
                          const int32_t v = std::stoi(config);
                          for (int64_t i = 0; i < sizes[0] / 4; ++i) static_cast<int32_t*>(args[0])[i] = v;
                          return absl::OkStatus();
                        });
}

TEST_CASE("CpuExecutable runs JIT-linked kernels, control flow, GEMM, sort and custom calls", "[runtime][jit]") {
  RegisterFill();
  Executable e = BuildExecutable(CompileIr(kKernelsIr));
  auto exe = CpuExecutable::Load(e, CpuRunOptions{4});
  REQUIRE(exe.ok());
  CheckRun(**exe, 0, 1, 20);
  CheckRun(**exe, 3, 0, 10);
  CheckRun(**exe, 9, 2, 30);
  CheckRun(**exe, 0, -4, 30);  // out of range: the last branch, as XLA
  CheckRun(**exe, 0, 17, 30);

  // The same after the .hlox round trip.
  auto back = Executable::Deserialize(e.Serialize(), "jit_test.hlox");
  REQUIRE(back.ok());
  auto exe2 = CpuExecutable::Load(std::move(*back), CpuRunOptions{1});
  REQUIRE(exe2.ok());
  CheckRun(**exe2, 2, 1, 20);
}

TEST_CASE("CpuExecutable: clear errors at load and run time", "[runtime][jit]") {
  RegisterFill();
  const std::vector<uint8_t> code = CompileIr(kKernelsIr);
  Executable e = BuildExecutable(code);
  e.thunks[3].body[0].kernel_name = "no_such_kernel";
  auto missing = CpuExecutable::Load(e, {});
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find("kernel 'no_such_kernel'") != std::string::npos);

  e = BuildExecutable(code);
  e.thunks[7].target = "unregistered_target";
  auto custom = CpuExecutable::Load(e, {});
  REQUIRE_FALSE(custom.ok());
  CHECK(std::string(custom.status().message()).find("'unregistered_target' has no CPU implementation") !=
        std::string::npos);

  e = BuildExecutable({1, 2, 3, 4});
  auto garbage = CpuExecutable::Load(e, {});
  REQUIRE_FALSE(garbage.ok());
  CHECK(std::string(garbage.status().message()).find("object code cannot be loaded") != std::string::npos);

  e = BuildExecutable(code);
  e.thunks[0].arguments[2].size = 5000;  // past its 4000-byte allocation
  CHECK_FALSE(CpuExecutable::Load(e, {}).ok());

  e = BuildExecutable(code);
  e.thunks[6].body[0].gemm.k = 4;  // reads past A
  auto gemm = CpuExecutable::Load(e, {});
  REQUIRE_FALSE(gemm.ok());
  CHECK(std::string(gemm.status().message()).find("GEMM lhs") != std::string::npos);

  auto exe = CpuExecutable::Load(BuildExecutable(code), {});
  REQUIRE(exe.ok());
  std::vector<HostBuffer> args = Arguments((*exe)->executable(), 0, 0);
  args[5].shape.dimensions = {3, 2};
  auto r = (*exe)->Run(args);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("argument 5 is f32[3,2] but parameter 5 is f32[2,3]") !=
        std::string::npos);
  args.pop_back();
  CHECK_FALSE((*exe)->Run(args).ok());
}

TEST_CASE("ToLayout transposes between layouts", "[runtime][jit]") {
  HostBuffer b = Buffer(Shape("s32", 4, {2, 3}), std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  auto t = ToLayout(b, {0, 1});  // column-major
  REQUIRE(t.ok());
  CHECK(Values<int32_t>(*t) == std::vector<int32_t>{0, 3, 1, 4, 2, 5});
  auto back = ToLayout(*t, {});
  REQUIRE(back.ok());
  CHECK(Values<int32_t>(*back) == std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  CHECK_FALSE(ToLayout(b, {0, 0}).ok());
}

}  // namespace
}  // namespace hloc::runtime
