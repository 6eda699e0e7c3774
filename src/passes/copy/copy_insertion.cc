// copy-insertion (see the header). A planner decides, on one dataflow analysis, which operand
// leaves and root leaves need a copy; the applier then inserts them (building fresh tuples where
// a leaf inside a shared tuple must change), so every decision sees the same module.
#include "passes/copy/copy_insertion.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "buffers/hlo_dataflow_analysis.h"
#include "passes/pass_util.h"

namespace hloc {

namespace {

struct OperandLeafCopy {
  HloInstruction* consumer;
  int64_t operand;
  ShapeIndex index;
};
struct BodyRootLeaf {
  ShapeIndex index;
  bool copy = false;
  const HloInstruction* writer = nullptr;     // when not copied: what first writes the new state
  std::vector<const HloInstruction*> after;   // when copied: readers of the old state
  std::vector<size_t> perm_readers;           // leaves whose root returns this leaf's old state
};
struct BodyRootPlan {
  HloComputation* body;
  std::vector<BodyRootLeaf> leaves;
};
struct RootLeafCopy {
  HloComputation* computation;
  ShapeIndex index;
  std::vector<HloInstruction*> after;  // control predecessors of the copy
};

class Planner {
 public:
  // dry_run: only count what would be needed (control edges are not added).
  Planner(const HloModule& module, const HloDataflowAnalysis& df, bool dry_run = false)
      : module_(module), df_(df), dry_run_(dry_run) {}

  void Plan() {
    std::vector<HloComputation*> comps = module_.MakeComputationPostOrder();
    for (HloComputation* comp : comps) {
      if (df_.context(comp) != ComputationKind::kSequential) continue;
      for (HloInstruction* inst : comp->MakeInstructionPostOrder()) PlanInPlace(comp, inst);
    }
    for (HloComputation* comp : comps) {
      if (df_.context(comp) != ComputationKind::kSequential) continue;
      for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
        if (inst->opcode() == HloOpcode::kWhile) PlanWhile(comp, inst);
        if (inst->opcode() == HloOpcode::kConditional)
          for (HloComputation* branch : inst->mutable_called_computations()) PlanBranchRoot(branch);
      }
    }
    PlanEntryRoot();
  }

  std::vector<OperandLeafCopy> operand_copies;
  std::vector<RootLeafCopy> root_copies;
  std::vector<BodyRootPlan> body_roots;

  size_t size() const {
    size_t n = operand_copies.size() + root_copies.size();
    for (const BodyRootPlan& b : body_roots)
      for (const BodyRootLeaf& l : b.leaves) n += l.copy;
    return n;
  }

 private:
  const HloValue* Single(const HloInstruction* inst, const ShapeIndex& index) const {
    const std::vector<int64_t>& s = df_.GetValueSet(inst, index);
    return s.size() == 1 ? &df_.GetValue(s[0]) : nullptr;
  }

  static std::vector<ShapeIndex> Leaves(const Shape& shape) {
    std::vector<ShapeIndex> out;
    for (ShapeIndex& i : AllShapeIndices(shape)) {
      absl::StatusOr<const Shape*> s = GetSubshape(shape, i);
      if (s.ok() && (*s)->IsArray() && BufferSizeOfShape(**s) > 0) out.push_back(std::move(i));
    }
    return out;
  }

  // Does the loop's body return state element i unchanged (so the loop never writes it)?
  bool IsPassthrough(const HloInstruction* w, const ShapeIndex& i) const {
    const HloComputation* body = w->while_body();
    if (body->root_instruction() == nullptr || body->num_parameters() == 0) return false;
    const HloInstruction* param = body->parameter_instruction(0);
    const HloValue* x = Single(body->root_instruction(), i);
    if (x == nullptr || !df_.ValueIsDefinedAt(param, i) || x != &df_.GetValueDefinedAt(param, i)) return false;
    // Returned at another index too, P_i is copied at the root for one of them (PlanBodyRoot
    // copies a value's second appearance), and that copy may be the one that writes element i:
    // the init's buffer is then written after all (differential fuzzer finding D2, issue 17: a
    // constant init element, shared with another element, overwritten by the body's root copy).
    for (const ShapeIndex& j : Leaves(body->root_instruction()->shape()))
      if (j != i && Single(body->root_instruction(), j) == x) return false;
    return true;
  }

  // Constants and entry parameters, and loop state that only ever holds one of them (an element
  // the loop passes through unchanged keeps its init's buffer, with no copy).
  bool IsReadOnly(const HloValue& v, int depth = 0) const {
    const HloInstruction* d = v.defining_instruction();
    if (d->opcode() == HloOpcode::kConstant) return true;
    if (d->opcode() == HloOpcode::kParameter && d->parent() == module_.entry_computation()) return true;
    if (!v.is_phi() || depth > 64) return false;
    const HloInstruction* w = d->opcode() == HloOpcode::kWhile ? d : df_.caller(d->parent());
    if (w == nullptr || w->opcode() != HloOpcode::kWhile || !IsPassthrough(w, v.defining_index())) return false;
    const HloValue* init = Single(w->operand(0), v.defining_index());
    return init != nullptr && IsReadOnly(*init, depth + 1);
  }

  // Does `b` (transitively, through operands and control predecessors) depend on `a`?
  bool Precedes(const HloInstruction* a, const HloInstruction* b) {
    if (a == b || a->parent() != b->parent()) return false;
    auto it = ancestors_.find(b);
    if (it == ancestors_.end()) {
      absl::flat_hash_set<const HloInstruction*> seen;
      std::vector<const HloInstruction*> stack = {b};
      while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        for (const HloInstruction* o : x->operands())
          if (seen.insert(o).second) stack.push_back(o);
        for (const HloInstruction* o : x->control_predecessors())
          if (seen.insert(o).second) stack.push_back(o);
      }
      it = ancestors_.emplace(b, std::move(seen)).first;
    }
    return it->second.contains(a);
  }

  // The instruction of `comp` under which `x` runs (x itself, or the while/conditional/call whose
  // callee holds it); null when x is not inside comp.
  const HloInstruction* Anchor(const HloInstruction* x, const HloComputation* comp) const {
    for (int guard = 0; x != nullptr && guard < 1000; ++guard) {
      if (x->parent() == comp) return x;
      x = df_.caller(x->parent());
    }
    return nullptr;
  }

  // Root indices of comp whose value set holds v.
  std::vector<ShapeIndex> RootIndicesOf(const HloValue& v, const HloComputation* comp) const {
    std::vector<ShapeIndex> out;
    const auto* sets = df_.GetInstructionValueSet(comp->root_instruction());
    if (sets == nullptr) return out;
    for (const auto& [i, s] : *sets)
      if (std::find(s.begin(), s.end(), v.id()) != s.end()) out.push_back(i);
    return out;
  }

  // Every read of v other than `skip` happens before `writer` writes over v's buffer (a read by
  // the writer itself is allowed when it may share the buffer, e.g. elementwise in place).
  bool ReadsPrecede(const HloValue& v, const HloInstruction* writer, const ShapeIndex& writer_index,
                    const std::function<bool(const HloUse&)>& skip) {
    for (const HloUse& u : v.uses()) {
      if (skip && skip(u)) continue;
      const HloInstruction* a = Anchor(u.instruction, writer->parent());
      if (a == nullptr) return false;
      if (a == writer) {
        if (u.instruction != writer ||
            !CanShareOperandBufferWithUser(writer->operand(u.operand_number), u.operand_index, writer, writer_index))
          return false;
        continue;
      }
      if (!Precedes(a, writer)) return false;
    }
    return true;
  }

  // Where reads of v are merely unordered with `writer` (neither depends on the other), orders
  // them first with control edges instead of copying (XLA orders pipelined send/recv and loop
  // counters the same way). All or nothing; refused when an edge would close a cycle.
  bool OrderReadsBefore(const HloValue& v, const HloInstruction* writer, const ShapeIndex& writer_index,
                        const std::function<bool(const HloUse&)>& skip) {
    std::vector<const HloInstruction*> edges;
    for (const HloUse& u : v.uses()) {
      if (skip && skip(u)) continue;
      const HloInstruction* a = Anchor(u.instruction, writer->parent());
      if (a == nullptr) return false;
      if (a == writer) {
        if (u.instruction != writer ||
            !CanShareOperandBufferWithUser(writer->operand(u.operand_number), u.operand_index, writer, writer_index))
          return false;
        continue;
      }
      if (Precedes(a, writer)) continue;
      if (Precedes(writer, a)) return false;  // the read needs the write's result: no order fixes it
      edges.push_back(a);
    }
    if (dry_run_) return true;
    for (const HloInstruction* a : edges)
      const_cast<HloInstruction*>(a)->AddControlDependencyTo(const_cast<HloInstruction*>(writer));
    if (!edges.empty()) ancestors_.clear();
    return true;
  }

  // Does value r descend from value o through in-place writes only (r = dus(...dus(o)...))?
  bool ReachesByInPlaceChain(const HloValue* r, const HloValue* o) const {
    for (int guard = 0; r != nullptr && guard < 10000; ++guard) {
      if (r == o) return true;
      const HloValue* next = nullptr;
      for (const auto& [in, out] : GetInPlaceInputOutputPairs(r->defining_instruction()))
        if (out == r->defining_index() && in.first < r->defining_instruction()->operand_count())
          next = Single(r->defining_instruction()->operand(in.first), in.second);
      r = next;
    }
    return false;
  }

  // The first value of the in-place chain that ends in v (v itself when v was not written in place).
  const HloValue* ChainStart(const HloValue* v) const {
    for (int guard = 0; guard < 10000; ++guard) {
      auto it = in_place_source_.find({v->defining_instruction(), v->defining_index()});
      if (it == in_place_source_.end()) return v;
      v = it->second;
    }
    return v;
  }

  // A while-body parameter value (loop state) may be overwritten in place when what is written
  // goes back to the same state element: `written` must be what the body returns at that index.
  bool IsOwnLoopState(const HloValue& v, const HloComputation* comp, const HloValue* written) const {
    const HloInstruction* d = v.defining_instruction();
    if (!v.is_phi() || d->opcode() != HloOpcode::kParameter || d->parent() != comp) return false;
    const HloInstruction* call = df_.caller(comp);
    if (call == nullptr || call->opcode() != HloOpcode::kWhile || call->while_body() != comp) return false;
    if (!RootIndicesOf(v, comp).empty()) return false;
    const HloValue* r = Single(comp->root_instruction(), v.defining_index());
    return r != nullptr && ReachesByInPlaceChain(r, written);
  }

  // May `writer` (producing `written`) overwrite v's buffer?
  bool MayOverwrite(const HloValue& v, const HloInstruction* writer, const HloValue* written,
                    const std::function<bool(const HloUse&)>& skip) {
    if (IsReadOnly(v)) return false;
    const HloComputation* comp = writer->parent();
    const HloInstruction* d = v.defining_instruction();
    if (d->parent() != comp) return false;  // the caller's value (conditional/call parameter)
    if (d->opcode() == HloOpcode::kParameter) {
      if (written == nullptr || !IsOwnLoopState(v, comp, written)) return false;
    } else if (!RootIndicesOf(v, comp).empty()) {
      return false;  // still needed at the end of the computation
    }
    const ShapeIndex wi = written ? written->defining_index() : ShapeIndex{};
    return ReadsPrecede(v, writer, wi, skip) || OrderReadsBefore(v, writer, wi, skip);
  }

  void PlanInPlace(HloComputation* comp, HloInstruction* inst) {
    for (const auto& [in, out_index] : GetInPlaceInputOutputPairs(inst)) {
      auto [k, op_index] = in;
      if (k >= inst->operand_count()) continue;
      const HloValue* v = Single(inst->operand(k), op_index);
      if (v == nullptr || BufferSizeOfShape(v->shape()) == 0) {
        if (v == nullptr) operand_copies.push_back({inst, k, op_index});
        continue;
      }
      const HloValue* written = df_.ValueIsDefinedAt(inst, out_index) ? &df_.GetValueDefinedAt(inst, out_index) : nullptr;
      const int64_t kk = k;
      const ShapeIndex oi = op_index;
      bool ok = MayOverwrite(*v, inst, written, [&](const HloUse& u) {
        return u.instruction == inst && u.operand_number == kk && u.operand_index == oi;
      });
      if (ok && written != nullptr) {
        in_place_source_[{inst, out_index}] = v;
      } else {
        operand_copies.push_back({inst, k, op_index});
      }
    }
  }

  void PlanWhile(HloComputation* comp, HloInstruction* w) {
    const HloInstruction* init = w->operand(0);
    for (const ShapeIndex& i : Leaves(w->shape())) {
      const HloValue* v = Single(init, i);
      if (v != nullptr && IsPassthrough(w, i)) continue;  // never written: the init's buffer serves
      bool ok = v != nullptr;
      if (ok) {
        const HloValue* written = df_.ValueIsDefinedAt(w, i) ? &df_.GetValueDefinedAt(w, i) : nullptr;
        ok = MayOverwrite(*v, w, written, [&](const HloUse& u) {
          return u.instruction == w && u.operand_number == 0 && u.operand_index == i;
        });
      }
      if (!ok) operand_copies.push_back({w, 0, i});
    }
    PlanBodyRoot(w->while_body());
  }

  // Body roots: the state element i is written by the start of X_i's in-place chain; the old
  // state P_i must be dead by then. Where it may not be, X_i is copied at the root, after every
  // read of P_i (control edges). A state element returned at another index (X_j == P_i) is read
  // by that index's root copy, which must run before P_i's buffer is written.
  void PlanBodyRoot(HloComputation* body) {
    const HloInstruction* root = body->root_instruction();
    if (root == nullptr || body->num_parameters() == 0) return;
    const HloInstruction* param = body->parameter_instruction(0);
    BodyRootPlan plan{body, {}};
    absl::flat_hash_set<int64_t> seen_values;
    std::vector<const HloValue*> xs, ps;
    for (const ShapeIndex& i : Leaves(root->shape())) {
      const HloValue* x = Single(root, i);
      const HloValue* p = df_.ValueIsDefinedAt(param, i) ? &df_.GetValueDefinedAt(param, i) : nullptr;
      BodyRootLeaf leaf{i};
      bool ok = x != nullptr && p != nullptr && seen_values.insert(x->id()).second;
      if (ok) {
        const HloValue* s = ChainStart(x);
        if (s == p) {
          leaf.writer = nullptr;  // passthrough, or updated in place: nothing new is written
        } else {
          // A value made inside a call in the body is written when the call runs.
          const HloInstruction* d = Anchor(s->defining_instruction(), body);
          ok = d != nullptr && !IsReadOnly(*s) && d->opcode() != HloOpcode::kParameter &&
               (d == s->defining_instruction() || d->opcode() == HloOpcode::kCall);
          if (ok && !ReadsPrecede(*p, d, s->defining_index(), nullptr))
            ok = OrderReadsBefore(*p, d, s->defining_index(), nullptr);
          leaf.writer = d;
        }
      }
      if (!ok) {
        leaf.copy = true;
        leaf.writer = nullptr;
        if (p != nullptr)
          for (const HloUse& u : p->uses())
            if (const HloInstruction* a = Anchor(u.instruction, body)) leaf.after.push_back(a);
      }
      plan.leaves.push_back(std::move(leaf));
      xs.push_back(x);
      ps.push_back(p);
    }
    bool any = false;
    for (size_t i = 0; i < plan.leaves.size(); ++i) {
      for (size_t j = 0; j < plan.leaves.size(); ++j)
        if (j != i && ps[i] != nullptr && xs[j] == ps[i]) plan.leaves[i].perm_readers.push_back(j);
      any |= plan.leaves[i].copy || !plan.leaves[i].perm_readers.empty();
    }
    if (any) body_roots.push_back(std::move(plan));
  }

  void PlanBranchRoot(HloComputation* branch) {
    const HloInstruction* root = branch->root_instruction();
    if (root == nullptr) return;
    absl::flat_hash_set<int64_t> seen_values;
    for (const ShapeIndex& i : Leaves(root->shape())) {
      const HloValue* x = Single(root, i);
      bool ok = x != nullptr && seen_values.insert(x->id()).second;
      if (ok) {
        const HloValue* s = ChainStart(x);
        const HloInstruction* d = Anchor(s->defining_instruction(), branch);
        ok = d != nullptr && !IsReadOnly(*s) && d->opcode() != HloOpcode::kParameter &&
             (d == s->defining_instruction() || d->opcode() == HloOpcode::kCall);
      }
      if (!ok) root_copies.push_back({branch, i, {}});
    }
  }

  void PlanEntryRoot() {
    HloComputation* entry = module_.entry_computation();
    const HloInstruction* root = entry->root_instruction();
    absl::flat_hash_set<int64_t> seen_values;
    for (const ShapeIndex& i : Leaves(root->shape())) {
      const HloValue* x = Single(root, i);
      const InputOutputAlias* alias = nullptr;
      for (const InputOutputAlias& a : module_.config().input_output_alias)
        if (a.output_index == i && a.parameter_number < entry->num_parameters()) alias = &a;
      const HloValue* donor = alias && df_.ValueIsDefinedAt(entry->parameter_instruction(alias->parameter_number),
                                                           alias->parameter_index)
                                  ? &df_.GetValueDefinedAt(entry->parameter_instruction(alias->parameter_number),
                                                           alias->parameter_index)
                                  : nullptr;
      bool ok = x != nullptr && seen_values.insert(x->id()).second;
      if (ok && IsReadOnly(*x)) ok = donor != nullptr && x == donor;
      RootLeafCopy copy{entry, i, {}};
      if (ok && donor != nullptr && x != donor) {
        // x's buffer becomes the donated parameter's: it must be written after the last read.
        const HloValue* s = ChainStart(x);
        if (!ReadsPrecede(*donor, s->defining_instruction(), s->defining_index(), nullptr)) {
          ok = false;
          for (const HloUse& u : donor->uses())
            if (const HloInstruction* a = Anchor(u.instruction, entry)) copy.after.push_back(const_cast<HloInstruction*>(a));
        }
      }
      if (!ok) root_copies.push_back(std::move(copy));
    }
  }

  const HloModule& module_;
  const HloDataflowAnalysis& df_;
  bool dry_run_;
  absl::flat_hash_map<const HloInstruction*, absl::flat_hash_set<const HloInstruction*>> ancestors_;
  std::map<std::pair<const HloInstruction*, ShapeIndex>, const HloValue*> in_place_source_;
};

// ---- applying the plan ------------------------------------------------------------------------

class Applier {
 public:
  explicit Applier(HloModule& module) : names_(InstructionNameUniquer(module)) {}

  HloInstruction* Add(HloComputation* comp, std::unique_ptr<HloInstruction> inst, const HloInstruction* before) {
    return AddInstructionWithUniqueName(*comp, std::move(inst), names_, before);
  }

  HloInstruction* MakeCopy(HloComputation* comp, HloInstruction* src, const HloInstruction* before) {
    auto c = std::make_unique<HloInstruction>(HloOpcode::kCopy, src->shape(), "copy");
    c->AppendOperand(src);
    return Add(comp, std::move(c), before);
  }

  // A new tuple of get-tuple-elements of `src`, placed before `before`.
  HloInstruction* FreshTuple(HloComputation* comp, HloInstruction* src, const HloInstruction* before) {
    switch (src->opcode()) {
      // Their results must reach their -done partner whole: no get-tuple-element may split them.
      case HloOpcode::kSend: case HloOpcode::kRecv: case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate:
      case HloOpcode::kCopyStart: case HloOpcode::kAllReduceStart: case HloOpcode::kAllGatherStart:
      case HloOpcode::kCollectivePermuteStart:
        if (status_.ok())
          status_ = absl::UnimplementedError(absl::StrCat("copy-insertion would have to split the result of ",
                                                          src->name(), " to copy one of its elements"));
        break;
      default:
        break;
    }
    std::vector<HloInstruction*> elems;
    for (int64_t j = 0; j < static_cast<int64_t>(src->shape().tuple_shapes().size()); ++j) {
      auto g = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, src->shape().tuple_shapes(j),
                                                "get-tuple-element");
      g->mutable_attrs().tuple_index = j;
      g->AppendOperand(src);
      elems.push_back(Add(comp, std::move(g), before));
    }
    auto t = std::make_unique<HloInstruction>(HloOpcode::kTuple, src->shape(), "tuple");
    for (HloInstruction* e : elems) t->AppendOperand(e);
    return Add(comp, std::move(t), before);
  }

  static bool IsFresh(const HloInstruction* t, const HloInstruction* only_user) {
    if (t->opcode() != HloOpcode::kTuple) return false;
    if (only_user == nullptr) return t->user_count() == 0;
    return t->user_count() == 1 && t->users()[0] == only_user && !t->IsRoot();
  }

  // Replaces leaf `index` of the tuple tree `t` (owned by its one user) with a copy.
  void CopyLeafInTree(HloComputation* comp, HloInstruction* t, const ShapeIndex& index) {
    for (size_t d = 0; d + 1 < index.size(); ++d) {
      HloInstruction* child = t->operand(index[d]);
      if (!IsFresh(child, t)) {
        HloInstruction* fresh = FreshTuple(comp, child, t);
        t->ReplaceOperandWith(index[d], fresh);
        child = fresh;
      }
      t = child;
    }
    HloInstruction* leaf = t->operand(index.back());
    t->ReplaceOperandWith(index.back(), MakeCopy(comp, leaf, t));
  }

  void CopyOperandLeaf(const OperandLeafCopy& c) {
    HloComputation* comp = c.consumer->parent();
    HloInstruction* src = c.consumer->operand(c.operand);
    if (c.index.empty()) {
      c.consumer->ReplaceOperandWith(c.operand, MakeCopy(comp, src, c.consumer));
      return;
    }
    if (!IsFresh(src, c.consumer)) {
      src = FreshTuple(comp, src, c.consumer);
      c.consumer->ReplaceOperandWith(c.operand, src);
    }
    CopyLeafInTree(comp, src, c.index);
  }

  HloInstruction* CopyRootLeaf(const RootLeafCopy& c) {
    HloComputation* comp = c.computation;
    HloInstruction* root = comp->root_instruction();
    HloInstruction* copy = nullptr;
    if (c.index.empty()) {
      copy = MakeCopy(comp, root, nullptr);
      comp->set_root_instruction(copy);
      return copy;
    }
    if (!IsFresh(root, nullptr) || !root->IsRoot()) {
      HloInstruction* fresh = FreshTuple(comp, root, nullptr);
      comp->set_root_instruction(fresh);
      root = fresh;
    }
    CopyLeafInTree(comp, root, c.index);
    // The copy is the leaf's new operand in the innermost tuple.
    HloInstruction* t = root;
    for (size_t d = 0; d + 1 < c.index.size(); ++d) t = t->operand(c.index[d]);
    return t->operand(c.index.back());
  }

  // Does `b` depend on `a` (operands and control predecessors)?
  static bool DependsOn(const HloInstruction* b, const HloInstruction* a) {
    absl::flat_hash_set<const HloInstruction*> seen;
    std::vector<const HloInstruction*> stack = {b};
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      if (x == a) return true;
      for (const HloInstruction* o : x->operands())
        if (seen.insert(o).second) stack.push_back(o);
      for (const HloInstruction* o : x->control_predecessors())
        if (seen.insert(o).second) stack.push_back(o);
    }
    return false;
  }

  static const HloInstruction* Earlier(const HloComputation* comp, const HloInstruction* a, const HloInstruction* b) {
    for (const auto& inst : comp->instructions())
      if (inst.get() == a || inst.get() == b) return inst.get();
    return a;
  }

  void ApplyBodyRoot(const BodyRootPlan& plan) {
    HloComputation* body = plan.body;
    std::vector<HloInstruction*> writer(plan.leaves.size(), nullptr);
    for (size_t k = 0; k < plan.leaves.size(); ++k) {
      const BodyRootLeaf& leaf = plan.leaves[k];
      if (!leaf.copy) {
        writer[k] = const_cast<HloInstruction*>(leaf.writer);
        continue;
      }
      writer[k] = CopyRootLeaf({body, leaf.index, {}});
      for (const HloInstruction* a : leaf.after)
        if (a != writer[k]) const_cast<HloInstruction*>(a)->AddControlDependencyTo(writer[k]);
    }
    for (size_t i = 0; i < plan.leaves.size(); ++i) {
      if (writer[i] == nullptr) continue;
      for (size_t j : plan.leaves[i].perm_readers) {
        HloInstruction* reader = writer[j];  // copies P_i into state element j
        if (reader == nullptr || !plan.leaves[j].copy) continue;
        if (!DependsOn(reader, writer[i])) {
          reader->AddControlDependencyTo(writer[i]);
          continue;
        }
        // A cycle (state elements swapped): read P_i into a temp first, and copy from that.
        HloInstruction* src = reader->operand(0);
        HloInstruction* temp = MakeCopy(body, src, Earlier(body, reader, writer[i]));
        reader->ReplaceOperandWith(0, temp);
        temp->AddControlDependencyTo(writer[i]);
      }
    }
  }

  const absl::Status& status() const { return status_; }

 private:
  NameUniquer names_;
  absl::Status status_;
};

// Existing plain copies (same shape and layout, no control edges) in sequential computations.
std::vector<HloInstruction*> PlainCopies(const HloModule& module, const HloDataflowAnalysis& df) {
  std::vector<HloInstruction*> out;
  for (const auto& comp : module.computations()) {
    if (df.context(comp.get()) != ComputationKind::kSequential) continue;
    for (const auto& inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kCopy && inst->shape().IsArray() && inst->shape() == inst->operand(0)->shape() &&
          !HasControlDependencies(*inst))
        out.push_back(inst.get());
  }
  return out;
}

absl::StatusOr<size_t> CountNeededCopies(const HloModule& module) {
  absl::StatusOr<std::unique_ptr<HloDataflowAnalysis>> df = HloDataflowAnalysis::Run(module);
  if (!df.ok()) return df.status();
  Planner p(module, **df, /*dry_run=*/true);
  p.Plan();
  return p.size();
}

// Removes copies whose removal needs no new copy (XLA's RemoveUnnecessaryCopies, checked by
// re-planning with the copy bypassed).
absl::StatusOr<bool> RemoveRedundantCopies(HloModule& module) {
  absl::StatusOr<std::unique_ptr<HloDataflowAnalysis>> df = HloDataflowAnalysis::Run(module);
  if (!df.ok()) return df.status();
  std::vector<HloInstruction*> copies = PlainCopies(module, **df);
  if (copies.empty()) return false;
  absl::StatusOr<size_t> base = CountNeededCopies(module);
  if (!base.ok()) return base.status();
  bool changed = false;
  for (HloInstruction* copy : copies) {
    HloInstruction* src = copy->operand(0);
    HloComputation* comp = copy->parent();
    std::vector<std::pair<HloInstruction*, int64_t>> uses;
    for (HloInstruction* u : copy->users())
      for (int64_t k = 0; k < u->operand_count(); ++k)
        if (u->operand(k) == copy) uses.push_back({u, k});
    bool was_root = copy->IsRoot();
    for (auto& [u, k] : uses) u->ReplaceOperandWith(k, src);
    if (was_root) comp->set_root_instruction(src);
    absl::StatusOr<size_t> needed = CountNeededCopies(module);
    if (!needed.ok()) return needed.status();
    if (*needed <= *base) {
      if (absl::Status s = RemoveInstruction(copy); !s.ok()) return s;
      changed = true;
    } else {  // the copy is needed: put it back
      for (auto& [u, k] : uses) u->ReplaceOperandWith(k, copy);
      if (was_root) comp->set_root_instruction(copy);
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> CopyInsertionPass::Run(HloModule& module, PassContext&) {
  if (module.entry_computation() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  bool changed = false;
  // Like XLA's CopyInsertion: each sequential computation must have one call site.
  if (const PassInfo* flatten = PassRegistry::Global().Find("flatten-call-graph")) {
    PassOptions options;
    for (const PassOptionSpec& spec : flatten->options) options.Set(spec.name, spec.default_value);
    PassContext context;
    absl::StatusOr<bool> flattened = flatten->factory(options)->Run(module, context);
    if (!flattened.ok()) return flattened.status();
    changed |= *flattened;
  }
  if (remove_redundant_copies_) {
    absl::StatusOr<bool> removed = RemoveRedundantCopies(module);
    if (!removed.ok()) return removed.status();
    changed |= *removed;
  }
  absl::StatusOr<std::unique_ptr<HloDataflowAnalysis>> df = HloDataflowAnalysis::Run(module);
  if (!df.ok()) return df.status();
  Planner planner(module, **df);
  planner.Plan();
  Applier applier(module);
  for (const OperandLeafCopy& c : planner.operand_copies) applier.CopyOperandLeaf(c);
  for (const BodyRootPlan& b : planner.body_roots) applier.ApplyBodyRoot(b);
  for (const RootLeafCopy& c : planner.root_copies) {
    HloInstruction* copy = applier.CopyRootLeaf(c);
    for (HloInstruction* pred : c.after)
      if (pred != copy) pred->AddControlDependencyTo(copy);
  }
  if (!applier.status().ok()) return applier.status();
  changed |= planner.size() > 0;
  // Control edges may point backwards in the instruction order (which is the schedule of a
  // scheduled module): re-sequence those computations, operands and control predecessors first.
  if (changed) {
    for (const auto& comp : module.computations()) {
      if (comp->IsFusionComputation()) continue;
      absl::flat_hash_map<const HloInstruction*, size_t> pos;
      for (const auto& inst : comp->instructions()) pos[inst.get()] = pos.size();
      bool bad = false;
      for (const auto& inst : comp->instructions()) {
        for (const HloInstruction* o : inst->operands()) bad |= pos.contains(o) && pos[o] > pos[inst.get()];
        for (const HloInstruction* o : inst->control_predecessors()) bad |= pos.contains(o) && pos[o] > pos[inst.get()];
      }
      if (bad)
        if (absl::Status s = comp->SetInstructionOrder(comp->MakeInstructionPostOrder()); !s.ok()) return s;
    }
  }
  return changed;
}

void RegisterCopyInsertionPass(PassRegistry& registry) {
  PassInfo info;
  info.name = "copy-insertion";
  info.description =
      "adds copies so in-place ops, while-loop state, conditional results and outputs never overwrite a live or "
      "read-only value (XLA's CopyInsertion)";
  info.options = {{"remove_redundant_copies", OptionType::kBool, OptionValue(true),
                   "first remove existing copies that buffer sharing does not need"}};
  info.factory = [](const PassOptions& o) -> std::unique_ptr<HloPass> {
    return std::make_unique<CopyInsertionPass>(o.Has("remove_redundant_copies") ? o.GetBool("remove_redundant_copies")
                                                                                : true);
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
