// Real fusion bodies: every loop and input (reduction) fusion of XLA's optimized small corpus
// modules, emitted through MakeFusedGenerator on random inputs and compared with the reference
// evaluator running the same fused computation.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "backend/elemental_harness.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"

namespace hloc::elemental_test {
namespace {

using P = PrimitiveType;

// The fused computation as a module of its own: called computations first, then it as ENTRY.
std::string StandaloneModule(const HloComputation& fused) {
  std::vector<const HloComputation*> order;
  std::function<void(const HloComputation*)> visit = [&](const HloComputation* c) {
    for (const auto& inst : c->instructions())
      for (const HloComputation* callee : inst->called_computations())
        if (std::find(order.begin(), order.end(), callee) == order.end()) visit(callee);
    if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
  };
  visit(&fused);
  HloPrintOptions opts = HloPrintOptions::ShortParsable();
  std::string text = "HloModule fused\n";
  for (const HloComputation* c : order) {
    if (c == &fused) absl::StrAppend(&text, "ENTRY ");
    absl::StrAppend(&text, PrintComputation(*c, opts), "\n");
  }
  return text;
}

TEST_CASE("elemental: loop and input fusions of the optimized corpus", "[elemental][elemental-corpus]") {
  std::vector<Case> cases;
  int skipped_shapes = 0;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(HLOC_TESTS_DIR) + "/corpus")) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".small.after_optimizations.txt")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 10);
  uint64_t seed = 1;
  for (const auto& path : files) {
    auto module = ParseHloModuleFile(path.string());
    INFO(path.string());
    REQUIRE(module.ok());
    for (const auto& comp : (*module)->computations()) {
      const HloInstruction* fusion = comp->FusionInstruction();
      if (!fusion) continue;
      const FusionKind kind = fusion->attrs().fusion_kind;
      if (kind != FusionKind::kLoop && kind != FusionKind::kInput) continue;
      const Shape& root = comp->root_instruction()->shape();
      if (root.IsTuple()) {  // one loop over all outputs needs one shape
        bool same = true;
        for (const Shape& s : root.tuple_shapes()) same = same && s.IsArray() && s.dimensions() == root.tuple_shapes(0).dimensions();
        if (!same || root.tuple_shapes().empty()) {
          ++skipped_shapes;
          continue;
        }
      }
      Case c;
      c.name = path.filename().string() + ":" + comp->name();
      c.hlo = StandaloneModule(*comp);
      c.allow_unimplemented = true;
      for (int64_t i = 0; i < comp->num_parameters(); ++i) {
        const Shape& s = comp->parameter_instruction(i)->shape();
        const P t = s.element_type();
        if (IsIntegral(t)) c.args.push_back(RandomInput(t, s.dimensions(), -2, 9, seed++));
        else c.args.push_back(RandomInput(t, s.dimensions(), -2, 2, seed++));
      }
      c.tolerance = 2e-5;  // reductions sum in another order than the evaluator
      for (const auto& inst : comp->instructions())
        if (inst->shape().IsArray() && (inst->shape().element_type() == P::BF16 || inst->shape().element_type() == P::F16))
          c.tolerance = 2e-2;  // a bf16 rounding may land on the other side of a tie
      cases.push_back(std::move(c));
    }
  }
  Outcome o = RunBatch(cases);
  std::cout << "corpus fusions: " << o.passed << "/" << o.run << " match the evaluator; " << o.unimplemented.size()
            << " use ops without an elemental form; " << skipped_shapes << " multi-output fusions of mixed shapes skipped\n";
  for (const std::string& u : o.unimplemented) std::cout << "  " << u << "\n";
  for (const std::string& f : o.failures) UNSCOPED_INFO(f);
  CHECK(o.failures.empty());
  CHECK(o.passed == o.run);
  CHECK(o.run > 40);
}

}  // namespace
}  // namespace hloc::elemental_test
