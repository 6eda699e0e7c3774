#include "backend/elemental_harness.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "ir/verifier.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

namespace hloc::elemental_test {
namespace {

using P = PrimitiveType;

struct Rng {
  uint64_t s;
  uint64_t Next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 11;
  }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * (Next() % 1000003) / 1000003.0; }
};

std::vector<double> FloatEdges(P t) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 0.1, -7.25, 100.5, 1e-3,
                           65504, 70000, 448, 240, 57344, 6, 0.75, 1e-6, 6e-8, 1e-30, 1e30, 3.4e38, 1e-40,
                           -3e-39, inf, -inf, std::nan(""), 0.3, -0.7, 12.0};
  if (t == P::F64) {
    v.push_back(1e300);
    v.push_back(-1e-310);
    v.push_back(1.0 / 3);
  }
  return v;
}

std::vector<int64_t> IntEdges(P t) {
  const int w = BitWidth(t);
  std::vector<int64_t> v = {0, 1, -1, 2, -2, 3, 7, -7, 100, -100, w - 1, w, w + 1, 64, 1000, 5, 31, -33};
  if (IsSignedIntegral(t)) {
    const int64_t mx = w >= 64 ? INT64_MAX : (int64_t{1} << (w - 1)) - 1;
    v.push_back(mx);
    v.push_back(-mx - 1);
    v.push_back(mx - 1);
    v.push_back(-mx);
  } else {
    v.push_back(-1);  // all ones
    v.push_back(w >= 64 ? INT64_MIN : (int64_t{1} << (w - 1)));  // top bit
    v.push_back(-2);
  }
  return v;
}

std::vector<std::complex<double>> ComplexEdges() {
  return {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0.5, -0.25}, {2, 3}, {-3, 0.5}, {1.5, -2}, {-0.75, -0.5}, {4, 0},
          {0.1, 0.2}, {-2, -2}};
}

// Physical (layout-order) bytes of a logical literal, and back.
std::vector<uint8_t> ToPhysical(const Literal& lit, const Shape& shape) {
  const int64_t n = lit.element_count();
  const int esize = ByteWidth(lit.element_type());
  std::vector<uint8_t> out(lit.size_bytes());
  if (n == 0) return out;
  Shape s = shape;
  if (!s.has_layout()) s.SetDefaultLayout();
  const auto& dims = s.dimensions();
  const auto& m2m = s.layout().minor_to_major;
  std::vector<int64_t> stride(dims.size(), 1);
  int64_t acc = 1;
  for (int64_t d : m2m) {
    stride[d] = acc;
    acc *= dims[d];
  }
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) off += idx[d] * stride[d];
    std::memcpy(out.data() + off * esize, lit.untyped_data() + i * esize, esize);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

void FromPhysical(const std::vector<uint8_t>& phys, const Shape& shape, Literal& lit) {
  // Transposes through the inverse of ToPhysical: compute each logical element's offset.
  const int64_t n = lit.element_count();
  const int esize = ByteWidth(lit.element_type());
  if (n == 0) return;
  Shape s = shape;
  if (!s.has_layout()) s.SetDefaultLayout();
  const auto& dims = s.dimensions();
  std::vector<int64_t> stride(dims.size(), 1);
  int64_t acc = 1;
  for (int64_t d : s.layout().minor_to_major) {
    stride[d] = acc;
    acc *= dims[d];
  }
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) off += idx[d] * stride[d];
    std::memcpy(lit.untyped_data() + i * esize, phys.data() + off * esize, esize);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

int MantissaBits(P t) {
  switch (t) {
    case P::F64: return 52;
    case P::F32: return 23;
    case P::F16: return 10;
    case P::BF16: return 7;
    case P::F8E3M4: return 4;
    case P::F8E4M3: case P::F8E4M3FN: case P::F8E4M3FNUZ: case P::F8E4M3B11FNUZ: return 3;
    case P::F8E5M2: case P::F8E5M2FNUZ: return 2;
    case P::F4E2M1FN: return 1;
    default: return 0;
  }
}

bool Close(double got, double want, double rel, double abs_floor) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (got == want) return got != 0 || std::signbit(got) == std::signbit(want);
  if (std::isinf(got) || std::isinf(want)) return false;
  return std::fabs(got - want) <= rel * std::max(std::fabs(got), std::fabs(want)) + abs_floor;
}

std::string Fmt(double v) { return absl::StrCat(v); }

// Compares leaf arrays; returns an empty string when they match.
std::string CompareLeaf(const Literal& got, const Literal& want, double extra, bool branch_cut) {
  const P t = want.element_type();
  if (got.element_type() != t || got.element_count() != want.element_count()) return "shape mismatch";
  const double rel = std::ldexp(1.0, -MantissaBits(t)) * 1.01 + extra;
  const double abs_floor = t == P::F64 ? 1e-300 : t == P::F32 || IsComplex(t) ? 1e-37 : 1e-7;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    bool ok;
    std::string g, w;
    if (IsComplex(t)) {
      const std::complex<double> a = got.GetComplex(i), b = want.GetComplex(i);
      const double crel = (t == P::C64 ? 2.4e-7 : 4.5e-16) + extra;
      // With an extra tolerance (transcendental formulas that differ from std::complex's), the
      // error may also be absolute near zero, where both sides are cancellation noise.
      const double mag = std::max({std::abs(a), std::abs(b), extra > 0 ? 1.0 : 0.0});
      auto part = [&](double x, double y) {
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
        if (x == y) return true;
        return std::fabs(x - y) <= crel * mag + abs_floor;
      };
      ok = part(a.real(), b.real()) && part(a.imag(), b.imag());
      if (!ok && branch_cut)
        ok = part(a.imag(), b.imag()) && std::fabs(std::fabs(a.real() - b.real()) - 2 * M_PI) < 1e-4;
      g = absl::StrCat("(", a.real(), ",", a.imag(), ")");
      w = absl::StrCat("(", b.real(), ",", b.imag(), ")");
    } else if (IsFloatingPoint(t)) {
      const double a = got.GetDouble(i), b = want.GetDouble(i);
      ok = Close(a, b, rel, t == P::F8E8M0FNU ? 0 : abs_floor) || (extra > 0 && Close(a, b, rel, extra));
      g = Fmt(a);
      w = Fmt(b);
    } else {
      ok = got.GetRawBits(i) == want.GetRawBits(i);
      g = absl::StrCat(got.GetRawBits(i));
      w = absl::StrCat(want.GetRawBits(i));
    }
    if (!ok) return absl::StrCat("element ", i, ": got ", g, ", want ", w);
  }
  return "";
}

std::vector<const Literal*> Leaves(const Literal& l) {
  if (!l.shape().IsTuple()) return {&l};
  std::vector<const Literal*> v;
  for (const Literal& e : l.tuple_elements()) v.push_back(&e);
  return v;
}

struct Prepared {
  Case* c;
  std::unique_ptr<HloModule> module;
  Literal expected;
  std::string fn_name;
};

}  // namespace

absl::Status EmitCaseFunction(llvm::Module& m, const HloModule& module, const std::string& name,
                              const EmitterFactory& make_emitter, bool partitioned) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* fty = partitioned ? llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64}, false)
                          : llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  auto* fn = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, name, m);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::IRBuilder<> b(entry);
  const HloComputation& comp = *module.entry_computation();
  std::vector<codegen::IrArray> params;
  int64_t slot = 0;
  auto buffer = [&](int64_t i) {
    llvm::Value* p = b.CreateInBoundsGEP(ptr, fn->getArg(0), {b.getInt64(i)});
    return b.CreateLoad(ptr, p);
  };
  for (int64_t i = 0; i < comp.num_parameters(); ++i)
    params.emplace_back(buffer(slot++), comp.parameter_instruction(i)->shape());
  const HloInstruction* root = comp.root_instruction();
  std::vector<codegen::IrArray> outs;
  if (root->shape().IsTuple()) {
    for (const Shape& s : root->shape().tuple_shapes()) outs.emplace_back(buffer(slot++), s);
  } else {
    outs.emplace_back(buffer(slot++), root->shape());
  }
  std::unique_ptr<codegen::ElementalIrEmitter> owned =
      make_emitter ? make_emitter(&m, &b) : std::make_unique<codegen::ElementalIrEmitter>(&m, &b);
  codegen::ElementalIrEmitter& emitter = *owned;
  absl::Status status = [&]() -> absl::Status {
    absl::StatusOr<codegen::ElementGenerator> gen = codegen::MakeFusedGenerator(emitter, comp, params, root);
    if (!gen.ok()) return gen.status();
    return codegen::EmitLoopNest(outs[0].shape(), b, partitioned ? fn->getArg(1) : nullptr,
                                 partitioned ? fn->getArg(2) : nullptr,
                                 [&](const codegen::IrArray::Index& index) -> absl::Status {
                                   absl::StatusOr<llvm::Value*> v = (*gen)(index);
                                   if (!v.ok()) return v.status();
                                   if (!root->shape().IsTuple()) {
                                     outs[0].EmitWriteArrayElement(index, *v, b);
                                     return absl::OkStatus();
                                   }
                                   for (size_t i = 0; i < outs.size(); ++i)
                                     outs[i].EmitWriteArrayElement(index, b.CreateExtractValue(*v, i), b);
                                   return absl::OkStatus();
                                 });
  }();
  if (status.ok()) {
    b.CreateRetVoid();
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyFunction(*fn, &os)) status = absl::InternalError("invalid LLVM IR: " + err);
  }
  if (!status.ok()) fn->eraseFromParent();
  return status;
}

namespace {

void Optimize(llvm::Module& m) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
}

}  // namespace

int64_t EdgeCount(PrimitiveType t) {
  if (t == P::PRED) return 2;
  if (IsComplex(t)) return static_cast<int64_t>(ComplexEdges().size());
  if (IsFloatingPoint(t)) return static_cast<int64_t>(FloatEdges(t).size());
  return static_cast<int64_t>(IntEdges(t).size());
}

Literal EdgeInput(PrimitiveType t, const std::vector<int64_t>& dims, int64_t stride, uint64_t seed) {
  Literal lit(Shape(t, dims));
  const int64_t e = EdgeCount(t);
  Rng rng{seed};
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    const int64_t k = (i / stride) % (e + 6);  // the edges, then a few random values
    const bool random = k >= e;
    if (t == P::PRED) {
      lit.SetInt(i, random ? static_cast<int64_t>(rng.Next() & 1) : k);
    } else if (IsComplex(t)) {
      lit.SetComplex(i, random ? std::complex<double>(rng.Uniform(-3, 3), rng.Uniform(-3, 3)) : ComplexEdges()[k]);
    } else if (IsFloatingPoint(t)) {
      lit.SetDouble(i, random ? rng.Uniform(-20, 20) : FloatEdges(t)[k]);
    } else {
      lit.SetInt(i, random ? static_cast<int64_t>(rng.Next()) : IntEdges(t)[k]);
    }
  }
  return lit;
}

Literal RandomInput(PrimitiveType t, const std::vector<int64_t>& dims, double lo, double hi, uint64_t seed) {
  Literal lit(Shape(t, dims));
  Rng rng{seed};
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (t == P::PRED) lit.SetInt(i, static_cast<int64_t>(rng.Next() & 1));
    else if (IsComplex(t)) lit.SetComplex(i, {rng.Uniform(lo, hi), rng.Uniform(lo, hi)});
    else if (IsFloatingPoint(t)) lit.SetDouble(i, rng.Uniform(lo, hi));
    else lit.SetInt(i, static_cast<int64_t>(std::floor(rng.Uniform(lo, hi + 0.999))));
  }
  return lit;
}

Outcome RunBatch(std::vector<Case>& cases) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  Outcome out;
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("elemental_test", *ctx);
  std::vector<Prepared> prepared;
  for (size_t i = 0; i < cases.size(); ++i) {
    Case& c = cases[i];
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.hlo, c.name);
    absl::Status st = module.ok() ? VerifyModule(**module) : module.status();
    if (!st.ok()) {
      if (c.must_verify) out.failures.push_back(c.name + ": does not verify: " + std::string(st.message()));
      else ++out.rejected_by_verifier, out.rejected.push_back(c.name);
      continue;
    }
    absl::StatusOr<Literal> expected = EvaluateModule(**module, c.args);
    if (!expected.ok()) {
      if (c.must_verify) out.failures.push_back(c.name + ": evaluator: " + std::string(expected.status().message()));
      else ++out.rejected_by_evaluator, out.rejected.push_back(c.name + " (evaluator)");
      continue;
    }
    const std::string fn = absl::StrCat("case", i);
    if (absl::Status e = EmitCaseFunction(*m, **module, fn, nullptr, c.parts > 0); !e.ok()) {
      if (c.allow_unimplemented && absl::IsUnimplemented(e)) {
        out.unimplemented.push_back(c.name + ": " + std::string(e.message()));
        continue;
      }
      out.failures.push_back(c.name + ": emitter: " + std::string(e.message()));
      continue;
    }
    prepared.push_back({&c, std::move(*module), std::move(*expected), fn});
  }
  if (prepared.empty()) return out;
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    out.failures.push_back("LLJIT: " + llvm::toString(jit.takeError()));
    return out;
  }
  m->setDataLayout((*jit)->getDataLayout());
  m->setTargetTriple((*jit)->getTargetTriple().str());
  Optimize(*m);
  (*jit)->getMainJITDylib().addGenerator(llvm::cantFail(
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix())));
  if (llvm::Error e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)))) {
    out.failures.push_back("addIRModule: " + llvm::toString(std::move(e)));
    return out;
  }
  for (Prepared& p : prepared) {
    auto sym = (*jit)->lookup(p.fn_name);
    if (!sym) {
      out.failures.push_back(p.c->name + ": lookup: " + llvm::toString(sym.takeError()));
      continue;
    }
    const HloComputation& comp = *p.module->entry_computation();
    std::vector<std::vector<uint8_t>> bufs;
    for (int64_t i = 0; i < comp.num_parameters(); ++i)
      bufs.push_back(ToPhysical(p.c->args[i], comp.parameter_instruction(i)->shape()));
    const HloInstruction* root = comp.root_instruction();
    std::vector<Shape> out_shapes;
    if (root->shape().IsTuple()) out_shapes = root->shape().tuple_shapes();
    else out_shapes.push_back(root->shape());
    const size_t first_out = bufs.size();
    for (const Shape& s : out_shapes) bufs.emplace_back(Literal(s).size_bytes() + 1, 0xAB);
    std::vector<void*> ptrs;
    for (auto& v : bufs) ptrs.push_back(v.data());
    if (p.c->parts > 0) {
      for (int64_t part = 0; part < p.c->parts; ++part)
        sym->toPtr<void (*)(void**, int64_t, int64_t)>()(ptrs.data(), part, p.c->parts);
    } else {
      sym->toPtr<void (*)(void**)>()(ptrs.data());
    }
    ++out.run;
    std::vector<const Literal*> want = Leaves(p.expected);
    std::string why;
    for (size_t k = 0; k < out_shapes.size() && why.empty(); ++k) {
      Literal got(out_shapes[k]);
      FromPhysical(bufs[first_out + k], out_shapes[k], got);
      if (bufs[first_out + k].back() != 0xAB) why = "wrote past the end of the output";
      else why = CompareLeaf(got, *want[k], p.c->tolerance, p.c->branch_cut);
      if (!why.empty() && out_shapes.size() > 1) why = absl::StrCat("output ", k, ": ", why);
    }
    if (why.empty()) ++out.passed;
    else out.failures.push_back(p.c->name + ": " + why);
  }
  return out;
}

}  // namespace hloc::elemental_test
