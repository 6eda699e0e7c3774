// IR core: element types, float encodings, shapes, literals, instruction/computation edges.
#include <catch2/catch.hpp>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/float_types.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/opcode.h"

using namespace hloc;
using P = PrimitiveType;

TEST_CASE("primitive type names round-trip", "[ir]") {
  for (int i = 0; i <= static_cast<int>(P::OPAQUE_TYPE); ++i) {
    auto t = static_cast<P>(i);
    REQUIRE(ParsePrimitiveType(PrimitiveTypeName(t)) == t);
  }
  CHECK(!ParsePrimitiveType("f33"));
  CHECK(BitWidth(P::S4) == 4);
  CHECK(ByteWidth(P::C128) == 16);
}

TEST_CASE("opcode table covers XLA's opcodes", "[ir]") {
  CHECK(kNumOpcodes >= 124);
  for (int i = 0; i < kNumOpcodes; ++i) {
    auto op = static_cast<HloOpcode>(i);
    REQUIRE(StringToHloOpcode(HloOpcodeString(op)) == op);
  }
  CHECK(StringToHloOpcode("scan") == HloOpcode::kScan);
  CHECK(HloOpcodeArity(HloOpcode::kSelect) == 3);
}

TEST_CASE("narrow float encodings match ml_dtypes", "[ir][float]") {
  CHECK(EncodeFloat(P::BF16, 1.0) == 0x3F80);
  CHECK(EncodeFloat(P::F16, 1.0) == 0x3C00);
  CHECK(EncodeFloat(P::F16, 65504.0) == 0x7BFF);
  CHECK(EncodeFloat(P::F16, 1e6) == 0x7C00);           // overflow -> inf
  CHECK(EncodeFloat(P::F16, std::ldexp(1.0, -24)) == 0x0001);  // smallest subnormal
  CHECK(EncodeFloat(P::BF16, 1.0 + std::ldexp(1.0, -8)) == 0x3F80);  // tie -> even
  CHECK(EncodeFloat(P::BF16, 1.0 + 3 * std::ldexp(1.0, -8)) == 0x3F82);  // tie -> even (up)
  CHECK(EncodeFloat(P::F8E4M3FN, 448.0) == 0x7E);
  CHECK(EncodeFloat(P::F8E4M3FN, NAN) == 0x7F);
  CHECK(EncodeFloat(P::F8E4M3FN, 1e4) == 0x7F);        // no inf: overflow -> NaN
  CHECK(EncodeFloat(P::F8E5M2, 57344.0) == 0x7B);
  CHECK(EncodeFloat(P::F8E5M2, INFINITY) == 0x7C);
  CHECK(EncodeFloat(P::F8E4M3FNUZ, NAN) == 0x80);
  CHECK(EncodeFloat(P::F8E4M3FNUZ, -0.0) == 0x00);     // no negative zero
  CHECK(EncodeFloat(P::F4E2M1FN, 6.0) == 0x7);
  CHECK(EncodeFloat(P::F4E2M1FN, -0.5) == 0x9);
  CHECK(EncodeFloat(P::F8E8M0FNU, 1.0) == 127);
  CHECK(DecodeFloat(P::F8E4M3FN, 0x7E) == 448.0);
  CHECK(std::isnan(DecodeFloat(P::F8E5M2FNUZ, 0x80)));
  CHECK(DecodeFloat(P::F8E4M3B11FNUZ, 0x01) == std::ldexp(1.0, -13));
  CHECK(DecodeFloat(P::BF16, 0xFF80) == -INFINITY);
  // Every 8-bit pattern decodes and re-encodes to itself (NaNs to the canonical NaN).
  for (P t : {P::F8E5M2, P::F8E4M3, P::F8E3M4, P::F8E4M3FN, P::F8E4M3FNUZ, P::F8E4M3B11FNUZ,
              P::F8E5M2FNUZ}) {
    for (uint64_t b = 0; b < 256; ++b) {
      double v = DecodeFloat(t, b);
      if (std::isnan(v)) continue;
      INFO(std::string(PrimitiveTypeName(t)) << " bits " << b);
      CHECK(EncodeFloat(t, v) == b);
    }
  }
}

TEST_CASE("shapes: element counts are checked, strings are XLA's", "[ir][shape]") {
  Shape s(P::F32, {2, 3});
  CHECK(s.ToString() == "f32[2,3]{1,0}");
  CHECK(Shape(P::F32, {}).ToString() == "f32[]");
  CHECK(Shape::Tuple({Shape(P::S32, {}), Shape(P::BF16, {4})}).ToString() == "(s32[], bf16[4]{0})");
  Shape huge(P::F32, {int64_t{1} << 40, int64_t{1} << 40});
  CHECK(!huge.ElementCount().ok());
  Shape neg(P::F32, {-1});
  CHECK(!neg.ElementCount().ok());
  Layout l;
  l.minor_to_major = {0, 1};
  l.tiles.push_back(Tile{{8, 128}});
  l.memory_space = 1;
  s.set_layout(l);
  CHECK(s.ToString() == "f32[2,3]{0,1:T(8,128)S(1)}");
}

TEST_CASE("literals: typed access for every class of type", "[ir][literal]") {
  Literal a(Shape(P::S4, {3}));
  a.SetInt(0, -8);
  a.SetInt(1, 7);
  a.SetInt(2, 9);  // wraps to -7
  CHECK(a.GetInt(0) == -8);
  CHECK(a.GetInt(2) == -7);
  CHECK(a.GetRawBits(0) == 0x8);
  Literal u(Shape(P::U64, {1}));
  u.SetUint(0, ~uint64_t{0});
  CHECK(u.GetUint(0) == ~uint64_t{0});
  Literal b(Shape(P::BF16, {1}));
  b.SetDouble(0, 3.14159);
  CHECK(b.GetDouble(0) == 3.140625);
  Literal c(Shape(P::C64, {1}));
  c.SetComplex(0, {1.5, -2});
  CHECK(c.GetComplex(0) == std::complex<double>(1.5, -2));
  Literal t = Literal::MakeTuple({Literal::ScalarInt(P::S32, 4), Literal::ScalarDouble(P::F32, 0.5)});
  CHECK(t.shape().ToString() == "(s32[], f32[])");
  CHECK(t.at({1}).GetDouble(0) == 0.5);
  Literal m(Shape(P::F32, {2, 3}));
  CHECK(m.LinearIndex({1, 2}) == 5);
  CHECK(!Literal::Create(Shape(P::F32, {int64_t{1} << 31, int64_t{1} << 20})).ok());
}

TEST_CASE("instructions keep operand and user edges in step", "[ir]") {
  HloModule module("m");
  auto comp = std::make_unique<HloComputation>("entry");
  HloComputation* c = module.AddComputation(std::move(comp), /*is_entry=*/true);
  auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, Shape(P::F32, {}), "p");
  HloInstruction* param = c->AddInstruction(std::move(p));
  auto n = std::make_unique<HloInstruction>(HloOpcode::kNegate, Shape(P::F32, {}), "n");
  HloInstruction* neg = c->AddInstruction(std::move(n));
  neg->AppendOperand(param);
  auto a = std::make_unique<HloInstruction>(HloOpcode::kAdd, Shape(P::F32, {}), "a");
  HloInstruction* add = c->AddInstruction(std::move(a));
  add->AppendOperand(neg);
  add->AppendOperand(neg);
  c->set_root_instruction(add);
  CHECK(neg->user_count() == 2);
  CHECK(c->parameter_instruction(0) == param);
  neg->ReplaceAllUsesWith(param);
  CHECK(neg->user_count() == 0);
  CHECK(param->user_count() == 3);
  CHECK(c->RemoveInstruction(neg).ok());
  CHECK(!c->RemoveInstruction(add).ok());  // root
  auto order = c->MakeInstructionPostOrder();
  REQUIRE(order.size() == 2);
  CHECK(order.back() == add);
  CHECK(module.MakeComputationPostOrder().back() == c);
}

// Removals and inserts-before are recorded in O(1) and applied when the order is next read;
// what a reader sees must be what eager vector edits gave.
TEST_CASE("instruction order after removals and inserts-before, read lazily", "[ir]") {
  HloModule module("m");
  HloComputation* c = module.AddComputation(std::make_unique<HloComputation>("entry"), /*is_entry=*/true);
  auto add = [&](const std::string& name, const HloInstruction* before = nullptr) {
    auto i = std::make_unique<HloInstruction>(HloOpcode::kConstant, Shape(P::F32, {}), name);
    return before ? c->AddInstructionBefore(std::move(i), before) : c->AddInstruction(std::move(i));
  };
  auto names = [&] {
    std::string s;
    for (const auto& i : c->instructions()) s += i->name() + " ";
    return s;
  };
  HloInstruction* a = add("a");
  HloInstruction* b = add("b");
  HloInstruction* d = add("d");
  c->set_root_instruction(d);
  add("x", b);                   // a x b d
  add("y", a);                   // y a x b d
  CHECK(c->RemoveInstruction(b).ok());
  HloInstruction* z = add("z", d);  // y a x z d
  CHECK(c->instruction_count() == 5);
  CHECK(names() == "y a x z d ");
  CHECK(c->RemoveInstruction(a).ok());
  CHECK(c->RemoveInstruction(z).ok());
  CHECK(!c->RemoveInstruction(d).ok());  // root
  add("w");                      // y x d w
  CHECK(names() == "y x d w ");
  CHECK(c->MakeInstructionPostOrder().size() == 4);
  CHECK(c->GetInstructionWithName("x") != nullptr);
  CHECK(c->GetInstructionWithName("a") == nullptr);
  std::vector<const HloInstruction*> removed;
  c->set_removal_observer([&](const HloInstruction* gone) { removed.push_back(gone); });
  HloInstruction* y = c->GetInstructionWithName("y");
  CHECK(c->RemoveInstruction(y).ok());
  CHECK(removed == std::vector<const HloInstruction*>{y});
  c->set_removal_observer(nullptr);
  CHECK(names() == "x d w ");

  // Fused computations are removed by slot too; the rest keep their order.
  for (const char* n : {"f1", "f2", "f3"}) module.AddComputation(std::make_unique<HloComputation>(n));
  CHECK(module.RemoveFusedComputation(module.GetComputationWithName("f2")).ok());
  CHECK(!module.RemoveFusedComputation(c).ok());  // the entry
  module.AddComputation(std::make_unique<HloComputation>("f4"));
  std::string comps;
  for (const auto& comp : module.computations()) comps += comp->name() + " ";
  CHECK(comps == "entry f1 f3 f4 ");
}

// What FusionBuilder's in-place fusion leans on: removing a parameter renumbers the later ones,
// parameters move to the front by number with the rest in order, and a computation moved to
// the end of the module sits where removing and adding it again would put it.
TEST_CASE("parameters removed and moved to the front; a computation moved to the end", "[ir]") {
  HloModule module("m");
  HloComputation* c = module.AddComputation(std::make_unique<HloComputation>("body"));
  auto param = [&](int64_t n) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, Shape(P::F32, {}), absl::StrCat("p", n));
    p->mutable_attrs().parameter_number = n;
    return c->AddInstruction(std::move(p));
  };
  HloInstruction* p0 = param(0);
  auto neg = std::make_unique<HloInstruction>(HloOpcode::kNegate, Shape(P::F32, {}), "neg");
  neg->AppendOperand(p0);
  HloInstruction* n = c->AddInstruction(std::move(neg));
  HloInstruction* p1 = param(1);
  HloInstruction* p2 = param(2);
  auto add = std::make_unique<HloInstruction>(HloOpcode::kAdd, Shape(P::F32, {}), "add");
  add->AppendOperand(n);
  add->AppendOperand(p2);
  c->set_root_instruction(c->AddInstruction(std::move(add)));
  auto names = [&] {
    std::string s;
    for (const auto& i : c->instructions()) s += i->name() + " ";
    return s;
  };
  CHECK(c->MoveParametersToFront() == n);
  CHECK(names() == "p0 p1 p2 neg add ");
  CHECK(!c->RemoveParameter(2).ok());  // still used
  CHECK(c->RemoveParameter(1).ok());
  CHECK(c->num_parameters() == 2);
  CHECK(c->parameter_instruction(1) == p2);
  CHECK(p2->attrs().parameter_number == 1);
  CHECK(names() == "p0 p2 neg add ");
  (void)p1;

  module.AddComputation(std::make_unique<HloComputation>("other"));
  CHECK(module.MoveComputationToEnd(c).ok());
  std::string comps;
  for (const auto& comp : module.computations()) comps += comp->name() + " ";
  CHECK(comps == "other body ");
}
