// Element generators of a computation (see computation_generators.h).
#include "codegen/elemental/computation_generators.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"

namespace hloc::codegen {

namespace {

// Whether block `def` dominates block `use` in the function being emitted. The dominator tree
// is rebuilt whenever the query's block or the function's block count changed: emission only
// adds edges into a block before it becomes the insertion block (the merge of an if-else gets
// both edges first), so a tree built there sees every path into it.
class Dominance {
 public:
  bool Dominates(llvm::BasicBlock* def, llvm::BasicBlock* use) {
    if (def == use) return true;
    if (def == nullptr || use == nullptr || def->getParent() != use->getParent()) return false;
    llvm::Function* f = use->getParent();
    if (tree_ == nullptr || f != function_ || use != block_ || f->size() != blocks_) {
      tree_ = std::make_unique<llvm::DominatorTree>(*f);
      function_ = f;
      block_ = use;
      blocks_ = f->size();
    }
    // Unreachable blocks count as dominated by everything: never reuse into one.
    return tree_->isReachableFromEntry(use) && tree_->dominates(def, use);
  }

 private:
  std::unique_ptr<llvm::DominatorTree> tree_;
  llvm::Function* function_ = nullptr;
  llvm::BasicBlock* block_ = nullptr;
  size_t blocks_ = 0;
};

// Array leaves of `shape` (a tuple counts its elements' leaves).
int64_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& t : shape.tuple_shapes()) n += LeafCount(t);
  return n;
}

// (parameter number, leaf number) of a get-tuple-element chain that ends at a parameter.
std::optional<std::pair<int64_t, int64_t>> TupleParameterLeaf(const HloInstruction* gte) {
  std::vector<int64_t> path;
  const HloInstruction* at = gte;
  while (at->opcode() == HloOpcode::kGetTupleElement) {
    path.push_back(at->attrs().tuple_index);
    at = at->operand(0);
  }
  if (at->opcode() != HloOpcode::kParameter) return std::nullopt;
  const Shape* shape = &at->shape();
  int64_t leaf = 0;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (!shape->IsTuple() || *it < 0 || *it >= static_cast<int64_t>(shape->tuple_shapes().size())) return std::nullopt;
    for (int64_t i = 0; i < *it; ++i) leaf += LeafCount(shape->tuple_shapes()[i]);
    shape = &shape->tuple_shapes()[*it];
  }
  return std::make_pair(at->attrs().parameter_number, leaf);
}

}  // namespace

absl::StatusOr<std::shared_ptr<GeneratorMap>> MakeComputationGenerators(
    ElementalIrEmitter& emitter, const HloComputation& computation,
    const std::function<ElementGenerator(int64_t parameter_number)>& parameter,
    const ComputationGeneratorOptions& options) {
  auto shared = std::make_shared<GeneratorMap>();
  GeneratorMap& gens = *shared;
  using Key = std::pair<const HloInstruction*, std::vector<llvm::Value*>>;
  auto cache = std::make_shared<std::map<Key, llvm::Value*>>();
  llvm::IRBuilderBase* b = emitter.builder();
  auto dominance = std::make_shared<Dominance>();
  // Reuses a value computed for the same element earlier in a block that dominates the use;
  // without this a DAG of shared subexpressions is emitted once per path. Concatenates, pads
  // and dynamic-update-slices branch, so "the same block" alone missed every value computed
  // before such a branch (numpyro's lgamma chains came out 14 times over).
  auto cached = [&](const HloInstruction* inst, ElementGenerator gen) -> ElementGenerator {
    if (inst->user_count() <= 1 || inst->opcode() == HloOpcode::kConstant) return gen;
    return [gen, inst, cache, b, dominance](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      Key key{inst, index.multidim};
      auto it = cache->find(key);
      if (it != cache->end()) {
        auto* i = llvm::dyn_cast<llvm::Instruction>(it->second);
        if (!i || dominance->Dominates(i->getParent(), b->GetInsertBlock())) return it->second;
      }
      absl::StatusOr<llvm::Value*> v = gen(index);
      if (v.ok()) (*cache)[key] = *v;
      return v;
    };
  };
  for (const HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    if (inst == options.stop_at) continue;
    if (options.override_gen) {
      if (ElementGenerator g = options.override_gen(inst)) {
        gens[inst] = std::move(g);
        continue;
      }
    }
    switch (inst->opcode()) {
      case HloOpcode::kParameter:
        gens[inst] = parameter(inst->attrs().parameter_number);
        continue;
      case HloOpcode::kCopy: {
        // A copy inside a kernel only changes the layout, which logical indices do not see.
        auto it = gens.find(inst->operand(0));
        if (it == gens.end()) return absl::InternalError(absl::StrCat("no generator for %", inst->operand(0)->name()));
        gens[inst] = it->second;
        continue;
      }
      case HloOpcode::kTuple:
        // Only roots are tuples (multi-output kernels read their elements' generators).
        continue;
      case HloOpcode::kGetTupleElement: {
        if (options.tuple_parameter_leaf && inst->shape().IsArray()) {
          if (std::optional<std::pair<int64_t, int64_t>> leaf = TupleParameterLeaf(inst)) {
            gens[inst] = options.tuple_parameter_leaf(leaf->first, leaf->second);
            continue;
          }
        }
        const HloInstruction* op = inst->operand(0);
        auto it = gens.find(op);
        if (it == gens.end()) {
          // get-tuple-element of a tuple instruction: the element's own generator.
          if (op->opcode() == HloOpcode::kTuple) {
            auto el = gens.find(op->operand(inst->attrs().tuple_index));
            if (el != gens.end()) {
              gens[inst] = el->second;
              continue;
            }
          }
          return absl::UnimplementedError(absl::StrCat("get-tuple-element %", inst->name(), " of %", op->name(),
                                                       " inside a kernel"));
        }
        ElementGenerator whole = it->second;
        const unsigned index = static_cast<unsigned>(inst->attrs().tuple_index);
        gens[inst] = [whole, index, b](const IrArray::Index& i) -> absl::StatusOr<llvm::Value*> {
          absl::StatusOr<llvm::Value*> v = whole(i);
          if (!v.ok()) return v.status();
          if ((*v)->getType()->isStructTy()) return b->CreateExtractValue(*v, {index});
          if (index == 0) return *v;
          return absl::InternalError("get-tuple-element of a single value");
        };
        continue;
      }
      default:
        break;
    }
    if (options.special) {
      if (ElementGenerator g = options.special(inst, gens)) {
        gens[inst] = cached(inst, std::move(g));
        continue;
      }
    }
    absl::StatusOr<ElementGenerator> g = emitter.MakeElementGenerator(inst, gens);
    if (!g.ok()) return g.status();
    gens[inst] = cached(inst, std::move(*g));
  }
  return shared;
}

}  // namespace hloc::codegen
