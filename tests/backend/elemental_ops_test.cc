// The elemental forms of the data-movement and looping ops (broadcast ... gather, reduce,
// reduce-window, dot, convolution) and whole fused computations (shared subexpressions, array
// constants, multi-output tuples, non-default layouts), against the reference evaluator on
// several element types.
#include <catch2/catch.hpp>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backend/elemental_harness.h"
#include "ir/hlo_parser.h"

namespace hloc::elemental_test {
namespace {

using P = PrimitiveType;

// A case from an HLO template ($T = element type, $A = its add reducer, $M = max reducer).
// Parameters named i* are start indices: random in [-3, 12] so some clamp; the others take the
// type's edge values (data movement) or small random values (`arith`: reductions and products).
Case Make(const std::string& name, const std::string& tmpl, P t, bool arith, uint64_t seed = 1) {
  const std::string tn(PrimitiveTypeName(t));
  // The max reducer only where the case uses it: complex types have no maximum (the verifier
  // rejects one).
  const std::string reducers = absl::StrReplaceAll(std::string(R"(add.$T {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] add(x, y)
}
)") + (tmpl.find("$M") == std::string::npos ? "" : R"(max.$T {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] maximum(x, y)
}
)"), {{"$T", tn}});
  Case c;
  c.name = name + " " + tn;
  c.hlo = "HloModule m\n" + (arith ? reducers : "") + absl::StrReplaceAll(tmpl, {{"$T", tn}, {"$A", "add." + tn}, {"$M", "max." + tn}});
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(c.hlo);
  if (!m.ok()) {
    c.name += " (does not parse: " + std::string(m.status().message()) + ")";
    return c;
  }
  const HloComputation* entry = (*m)->entry_computation();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* p = entry->parameter_instruction(i);
    const Shape& s = p->shape();
    if (p->name()[0] == 'i') c.args.push_back(RandomInput(s.element_type(), s.dimensions(), -3, 12, seed + 31 * i));
    else if (arith) c.args.push_back(RandomInput(s.element_type(), s.dimensions(), -3, 3, seed + 17 * i));
    else c.args.push_back(EdgeInput(s.element_type(), s.dimensions(), 1, seed + 7 * i));
  }
  if (arith && (t == P::F32 || t == P::C64)) c.tolerance = 1e-5;  // sums in another order than the evaluator's
  if (arith && t == P::F64) c.tolerance = 1e-12;
  if (arith && (t == P::BF16 || t == P::F16)) c.tolerance = 1e-2;
  return c;
}

void Run(const std::string& what, std::vector<Case>& cases) {
  Outcome o = RunBatch(cases);
  std::cout << what << ": " << o.passed << "/" << o.run << " cases match the evaluator\n";
  for (const std::string& f : o.failures) UNSCOPED_INFO(f);
  CHECK(o.failures.empty());
  CHECK(o.passed == o.run);
  CHECK(o.run == static_cast<int>(cases.size()));
}

const std::vector<P> kMoveTypes = {P::F32, P::BF16, P::S4, P::PRED, P::C64, P::F8E4M3FN, P::U64, P::F64};

TEST_CASE("elemental: data-movement ops", "[elemental]") {
  const std::vector<std::pair<std::string, std::string>> tmpls = {
      {"broadcast", "ENTRY e {\n p = $T[3] parameter(0)\n ROOT r = $T[2,3,4] broadcast(p), dimensions={1}\n}\n"},
      {"broadcast scalar", "ENTRY e {\n p = $T[] parameter(0)\n ROOT r = $T[2,3] broadcast(p), dimensions={}\n}\n"},
      {"reshape", "ENTRY e {\n p = $T[2,3,4] parameter(0)\n ROOT r = $T[4,6] reshape(p)\n}\n"},
      {"reshape up", "ENTRY e {\n p = $T[24] parameter(0)\n ROOT r = $T[2,1,3,4] reshape(p)\n}\n"},
      {"transpose", "ENTRY e {\n p = $T[2,3,4] parameter(0)\n ROOT r = $T[4,2,3] transpose(p), dimensions={2,0,1}\n}\n"},
      {"transpose with layouts",
       "ENTRY e {\n p = $T[2,3,4]{0,1,2} parameter(0)\n ROOT r = $T[3,2,4]{1,2,0} transpose(p), dimensions={1,0,2}\n}\n"},
      {"bitcast transposing", "ENTRY e {\n p = $T[2,3]{1,0} parameter(0)\n ROOT r = $T[3,2]{0,1} bitcast(p)\n}\n"},
      {"bitcast reshaping", "ENTRY e {\n p = $T[2,3,4]{2,1,0} parameter(0)\n ROOT r = $T[6,4]{1,0} bitcast(p)\n}\n"},
      {"copy changing layout", "ENTRY e {\n p = $T[3,4]{1,0} parameter(0)\n ROOT r = $T[3,4]{0,1} copy(p)\n}\n"},
      {"slice", "ENTRY e {\n p = $T[7,9] parameter(0)\n ROOT r = $T[3,4] slice(p), slice={[1:7:2], [0:8:2]}\n}\n"},
      {"dynamic-slice",
       "ENTRY e {\n p = $T[5,6] parameter(0)\n i0 = s32[] parameter(1)\n i1 = s32[] parameter(2)\n"
       " ROOT r = $T[2,3] dynamic-slice(p, i0, i1), dynamic_slice_sizes={2,3}\n}\n"},
      {"dynamic-slice u8 indices",
       "ENTRY e {\n p = $T[5,6] parameter(0)\n i0 = u8[] parameter(1)\n i1 = u8[] parameter(2)\n"
       " ROOT r = $T[3,2] dynamic-slice(p, i0, i1), dynamic_slice_sizes={3,2}\n}\n"},
      {"dynamic-slice s64 indices",
       "ENTRY e {\n p = $T[5,6] parameter(0)\n i0 = s64[] parameter(1)\n i1 = s64[] parameter(2)\n"
       " ROOT r = $T[4,1] dynamic-slice(p, i0, i1), dynamic_slice_sizes={4,1}\n}\n"},
      {"dynamic-update-slice",
       "ENTRY e {\n p = $T[5,6] parameter(0)\n u = $T[2,3] parameter(1)\n i0 = s32[] parameter(2)\n"
       " i1 = s32[] parameter(3)\n ROOT r = $T[5,6] dynamic-update-slice(p, u, i0, i1)\n}\n"},
      {"concatenate",
       "ENTRY e {\n a = $T[2,3] parameter(0)\n b = $T[2,1] parameter(1)\n c = $T[2,4] parameter(2)\n"
       " d = $T[2,2] parameter(3)\n ROOT r = $T[2,10] concatenate(a, b, c, d), dimensions={1}\n}\n"},
      {"pad interior and negative",
       "ENTRY e {\n p = $T[3,4] parameter(0)\n v = $T[] parameter(1)\n ROOT r = $T[8,11] pad(p, v), padding=1_2_1x-1_2_2\n}\n"},
      {"iota", "ENTRY e {\n ROOT r = $T[3,4] iota(), iota_dimension=1\n}\n"},
      {"iota long", "ENTRY e {\n ROOT r = $T[300] iota(), iota_dimension=0\n}\n"},
      {"reverse", "ENTRY e {\n p = $T[2,3,4] parameter(0)\n ROOT r = $T[2,3,4] reverse(p), dimensions={0,2}\n}\n"},
      {"gather take",
       "ENTRY e {\n p = $T[5,3] parameter(0)\n i = s32[4] parameter(1)\n ROOT r = $T[4,3] gather(p, i), "
       "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n}\n"},
      {"gather 2d windows",
       "ENTRY e {\n p = $T[4,5,6] parameter(0)\n i = s32[2,3,2] parameter(1)\n ROOT r = $T[2,3,2,6] gather(p, i), "
       "offset_dims={2,3}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,2,6}\n}\n"},
      {"gather batching dims",
       "ENTRY e {\n p = $T[3,5,4] parameter(0)\n i = s32[3,2,1] parameter(1)\n ROOT r = $T[3,2,4] gather(p, i), "
       "offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, "
       "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}\n}\n"},
      {"gather index vector first",
       "ENTRY e {\n p = $T[5,3] parameter(0)\n i = u32[2,4] parameter(1)\n ROOT r = $T[4,2,2] gather(p, i), "
       "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={2,2}\n}\n"},
      {"select", "ENTRY e {\n s = pred[3,4] parameter(0)\n a = $T[3,4] parameter(1)\n b = $T[3,4] parameter(2)\n"
                 " ROOT r = $T[3,4] select(s, a, b)\n}\n"},
  };
  std::vector<Case> cases;
  for (P t : kMoveTypes)
    for (const auto& [name, tmpl] : tmpls)
      for (uint64_t seed : {1, 2})
        if (!(t == P::PRED && name.rfind("iota", 0) == 0)) cases.push_back(Make(name, tmpl, t, false, seed));
  Run("data movement", cases);
}

TEST_CASE("elemental: reduce, reduce-window, dot, convolution", "[elemental]") {
  const std::vector<std::pair<std::string, std::string>> tmpls = {
      {"reduce minor", "ENTRY e {\n p = $T[4,5] parameter(0)\n c = $T[] parameter(1)\n"
                       " ROOT r = $T[4] reduce(p, c), dimensions={1}, to_apply=$A\n}\n"},
      {"reduce all", "ENTRY e {\n p = $T[4,5] parameter(0)\n c = $T[] parameter(1)\n"
                     " ROOT r = $T[] reduce(p, c), dimensions={0,1}, to_apply=$A\n}\n"},
      {"reduce outer dims max", "ENTRY e {\n p = $T[3,4,5] parameter(0)\n c = $T[] parameter(1)\n"
                                " ROOT r = $T[4] reduce(p, c), dimensions={0,2}, to_apply=$M\n}\n"},
      {"reduce-window pool", "ENTRY e {\n p = $T[1,6,6,2] parameter(0)\n c = $T[] parameter(1)\n"
                             " ROOT r = $T[1,3,3,2] reduce-window(p, c), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=$M\n}\n"},
      {"reduce-window padded dilated",
       "ENTRY e {\n p = $T[5,7] parameter(0)\n c = $T[] parameter(1)\n ROOT r = $T[5,7] reduce-window(p, c), "
       "window={size=3x2 stride=2x1 pad=1_1x0_2 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=$A\n}\n"},
      {"dot", "ENTRY e {\n a = $T[3,4] parameter(0)\n b = $T[4,5] parameter(1)\n"
              " ROOT r = $T[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"},
      {"dot batch", "ENTRY e {\n a = $T[2,3,4] parameter(0)\n b = $T[2,5,4] parameter(1)\n ROOT r = $T[2,3,5] dot(a, b), "
                    "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}\n}\n"},
      {"dot two contracting", "ENTRY e {\n a = $T[3,4,2] parameter(0)\n b = $T[2,4,5] parameter(1)\n"
                              " ROOT r = $T[3,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}\n}\n"},
      {"dot outer", "ENTRY e {\n a = $T[3] parameter(0)\n b = $T[4] parameter(1)\n ROOT r = $T[3,4] dot(a, b)\n}\n"},
      {"dot vector", "ENTRY e {\n a = $T[7] parameter(0)\n b = $T[7] parameter(1)\n"
                     " ROOT r = $T[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n"},
      {"conv same", "ENTRY e {\n a = $T[1,5,5,2] parameter(0)\n k = $T[3,3,2,4] parameter(1)\n"
                    " ROOT r = $T[1,5,5,4] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n"},
      {"conv strided dilated",
       "ENTRY e {\n a = $T[1,5,5,2] parameter(0)\n k = $T[2,2,2,4] parameter(1)\n ROOT r = $T[1,2,9,4] convolution(a, k), "
       "window={size=2x2 stride=2x1 pad=0_1x1_0 lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f\n}\n"},
      {"conv depthwise", "ENTRY e {\n a = $T[1,5,5,2] parameter(0)\n k = $T[3,3,1,4] parameter(1)\n ROOT r = $T[1,3,3,4] "
                         "convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2\n}\n"},
      {"conv batch groups", "ENTRY e {\n a = $T[4,5,5,3] parameter(0)\n k = $T[3,3,3,2] parameter(1)\n ROOT r = $T[2,3,3,2] "
                            "convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2\n}\n"},
      {"conv reversed 1d", "ENTRY e {\n a = $T[2,3,7] parameter(0)\n k = $T[4,3,3] parameter(1)\n ROOT r = $T[2,4,5] "
                           "convolution(a, k), window={size=3 rhs_reversal=1}, dim_labels=bf0_oi0->bf0\n}\n"},
  };
  std::vector<Case> cases;
  for (P t : {P::F32, P::BF16, P::F16, P::S32, P::F64, P::U8, P::S8, P::C64})
    for (const auto& [name, tmpl] : tmpls)
      if (!(IsComplex(t) && tmpl.find("$M") != std::string::npos))  // complex numbers have no maximum
        cases.push_back(Make(name, tmpl, t, true));
  Run("reductions and contractions", cases);
}

TEST_CASE("elemental: variadic reductions, mixed-precision dots, fused computations", "[elemental]") {
  std::vector<Case> cases;
  const std::string argmax = R"(argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  v = f32[] select(take, a, b)
  i = s32[] select(take, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
)";
  cases.push_back(Make("argmax reduce", argmax + R"(ENTRY e {
  p = $T[4,6] parameter(0)
  io = s32[4,6] iota(), iota_dimension=1
  c0 = f32[] constant(-inf)
  c1 = s32[] constant(0)
  ROOT r = (f32[4], s32[4]) reduce(p, io, c0, c1), dimensions={1}, to_apply=argmax
}
)", P::F32, true));
  cases.push_back(Make("argmax reduce-window", argmax + R"(ENTRY e {
  p = $T[8] parameter(0)
  io = s32[8] iota(), iota_dimension=0
  c0 = f32[] constant(-inf)
  c1 = s32[] constant(0)
  ROOT r = (f32[4], s32[4]) reduce-window(p, io, c0, c1), window={size=3 stride=2 pad=1_1}, to_apply=argmax
}
)", P::F32, true));
  cases.push_back(Make("pred any", R"(or {
  x = pred[] parameter(0)
  y = pred[] parameter(1)
  ROOT o = pred[] or(x, y)
}
ENTRY e {
  p = pred[6,5] parameter(0)
  c = pred[] constant(false)
  ROOT r = pred[6] reduce(p, c), dimensions={1}, to_apply=or
})", P::PRED, false));
  cases.push_back(Make("dot bf16 -> f32", R"(ENTRY e {
  a = bf16[3,8] parameter(0)
  b = bf16[8,5] parameter(1)
  ROOT r = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", P::BF16, true));
  cases.push_back(Make("dot s8 -> s32", R"(ENTRY e {
  a = s8[3,8] parameter(0)
  b = s8[8,5] parameter(1)
  ROOT r = s32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", P::S8, true));
  cases.back().args[0] = RandomInput(P::S8, {3, 8}, -128, 127, 5);
  cases.back().args[1] = RandomInput(P::S8, {8, 5}, -128, 127, 6);
  // A loop fusion's body: shared subexpressions (emitted once per element), array and scalar
  // constants, broadcasts, a transcendental, a multi-output tuple root and a transposed layout.
  cases.push_back(Make("fused", R"(ENTRY e {
  p0 = $T[4,6]{0,1} parameter(0)
  p1 = $T[6] parameter(1)
  b = $T[4,6] broadcast(p1), dimensions={1}
  x = $T[4,6] exponential(p0)
  m = $T[4,6] multiply(x, b)
  k = $T[2,3] constant({{1,2,3},{4,5,6}})
  kr = $T[6] reshape(k)
  kb = $T[4,6] broadcast(kr), dimensions={1}
  t = $T[4,6] tanh(m)
  s = $T[4,6] add(t, x)
  u = $T[4,6] subtract(s, kb)
  h = $T[] constant(0.5)
  hb = $T[4,6] broadcast(h), dimensions={}
  v = $T[4,6] multiply(u, hb)
  ROOT r = ($T[4,6], $T[4,6]{0,1}) tuple(v, x)
})", P::F32, true));
  cases.back().tolerance = 1e-6;
  // EmitLoopNest's parts (the CPU backend's threads) together cover every element: an element
  // no part writes keeps the harness's 0xAB filler and fails the comparison.
  for (int parts : {1, 3, 7, 16}) {
    for (const char* shape : {"f32[10,3]{1,0}", "f32[5,4]{0,1}", "f32[]"}) {
      Case c = Make(absl::StrCat("parts ", parts, " ", shape), absl::StrReplaceAll(R"(ENTRY e {
  p = S parameter(0)
  ROOT r = S add(p, p)
})", {{"S", shape}}), P::F32, false);
      c.parts = parts;
      cases.push_back(std::move(c));
    }
  }
  Run("variadic and fused", cases);
}

}  // namespace
}  // namespace hloc::elemental_test
