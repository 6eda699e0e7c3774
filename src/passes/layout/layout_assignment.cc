#include "passes/layout/layout_assignment.h"

#include <iostream>
#include <map>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "passes/layout/layout_constraints.h"
#include "passes/layout/layout_util.h"

namespace hloc {
namespace {

using layout::ConstraintSet;
using layout::Decide;
using layout::MajorToMinor;
using layout::LayoutFromMajorToMinor;
using layout::PreservesLayout;
using layout::WithDefaultLayouts;
using layout::WithLayout;

constexpr int kResult = LayoutConstraintInfo::kResult;

Layout LayoutOf(const Shape& s) { return LayoutFromMajorToMinor(MajorToMinor(s)); }

// A decided result layout on the instruction's shape: a tuple (a cuDNN call's (result, scratch))
// takes it on element 0 and default layouts elsewhere.
Shape WithResultLayout(const Shape& s, const Layout& l) {
  if (!s.IsTuple()) return WithLayout(s, l);
  Shape t = WithDefaultLayouts(s);
  if (!t.tuple_shapes().empty() && t.tuple_shapes(0).IsArray()) t.mutable_tuple_shapes()[0] = WithLayout(t.tuple_shapes(0), l);
  return t;
}

// Ops whose result layout the later layout passes can rewrite freely (layout_normalization
// handles them for any layout), so propagation may give them whatever their users want.
bool CanTakeLayout(const HloInstruction& x) {
  if (!x.shape().IsArray()) return false;
  if (PreservesLayout(x)) return true;
  switch (x.opcode()) {
    case HloOpcode::kTranspose: case HloOpcode::kCopy: case HloOpcode::kReshape: case HloOpcode::kBroadcast:
    case HloOpcode::kReduce: case HloOpcode::kConstant: case HloOpcode::kIota: case HloOpcode::kDot:
    case HloOpcode::kConvolution:
      return true;
    default:
      return false;
  }
}

// Ops that accept operands in any layout (layout_normalization rewrites them to match).
bool AcceptsAnyOperandLayout(const HloInstruction& u) {
  switch (u.opcode()) {
    case HloOpcode::kTranspose: case HloOpcode::kCopy: case HloOpcode::kReshape: case HloOpcode::kBroadcast:
    case HloOpcode::kReduce: case HloOpcode::kDot: case HloOpcode::kConvolution: case HloOpcode::kBitcast:
    case HloOpcode::kTuple: case HloOpcode::kGetTupleElement:
      return true;
    default:
      return false;
  }
}

class ComputationAssigner {
 public:
  ComputationAssigner(HloComputation* c, const ConstraintSet& rows, NameUniquer& names,
                      std::vector<Shape> param_shapes, Shape result_shape, std::ostream* trace)
      : c_(c), rows_(rows), names_(names), params_(std::move(param_shapes)), result_(std::move(result_shape)),
        trace_(trace) {}

  absl::Status Run() {
    order_ = c_->MakeInstructionPostOrder();
    HLOC_LAYOUT_RETURN_IF_ERROR(Seed());
    HLOC_LAYOUT_RETURN_IF_ERROR(Backward());
    Forward();
    for (HloInstruction* x : order_) x->mutable_shape() = assigned_.at(x);
    return InsertCopies();
  }

 private:
  // PreservesLayout, remembered: it looks at every operand and is asked once per operand, which
  // made a concatenate of n operands cost n^2.
  bool Preserves(const HloInstruction& x) {
    auto [it, inserted] = preserves_layout_.try_emplace(&x, false);
    if (inserted) it->second = PreservesLayout(x);
    return it->second;
  }

  const Shape* Assigned(const HloInstruction* x) const {
    auto it = assigned_.find(x);
    return it == assigned_.end() ? nullptr : &it->second;
  }

  absl::Status Seed() {
    for (HloInstruction* x : order_) {
      if (x->opcode() == HloOpcode::kParameter) {
        int64_t n = x->attrs().parameter_number;
        Shape s = n < static_cast<int64_t>(params_.size()) ? params_[n] : x->shape();
        layout::FillDefaultLayouts(s);
        assigned_[x] = s;
      } else if (x->opcode() == HloOpcode::kBitcast) {
        Shape s = x->shape();
        layout::FillDefaultLayouts(s);
        assigned_[x] = s;
      } else if (x->opcode() == HloOpcode::kCustomCall && x->shape().IsTuple() &&
                 x->attrs().operand_layout_constraints) {
        // CustomCallResultAsWritten for tuple results (the rows lay out arrays): every leaf keeps
        // the layout written on it, e.g. JAX's column-major cusolver_getrf_ffi factor.
        Shape s = x->shape();
        layout::FillDefaultLayouts(s);
        assigned_[x] = s;
      } else if (x->shape().IsArray() || x->opcode() == HloOpcode::kCustomCall) {
        absl::StatusOr<std::optional<layout::SlotDecision>> d = Decide(rows_, *x, kResult, nullptr, nullptr, nullptr);
        if (!d.ok()) return d.status();
        if (d->has_value()) {
          assigned_[x] = WithResultLayout(x->shape(), (*d)->layout);
          Trace(*x, "result", (*d)->layout, (*d)->row);
        }
      }
    }
    return absl::OkStatus();
  }

  // What user `u` asks of its operand `i` while layouts are still being chosen.
  absl::StatusOr<std::optional<Layout>> Wish(const HloInstruction* u, int64_t i) {
    const HloInstruction* x = u->operand(i);
    absl::StatusOr<std::optional<layout::SlotDecision>> d =
        Decide(rows_, *u, static_cast<int>(i), nullptr, Assigned(u->operand(0)), Assigned(u));
    if (!d.ok()) return d.status();
    if (d->has_value()) return std::optional<Layout>((*d)->layout);
    const Shape* us = Assigned(u);
    if (us == nullptr) return std::optional<Layout>();
    if (Preserves(*u) && x->shape().rank() == u->shape().rank() && x->shape().rank() > 0)
      return std::optional<Layout>(LayoutOf(*us));
    if (u->opcode() == HloOpcode::kTranspose)
      return std::optional<Layout>(layout::TransposeOperandBitcastLayout(*us, u->attrs().dimensions));
    if (u->opcode() == HloOpcode::kReshape && !layout::HasDefaultLayout(*us))
      return layout::AlignedReshapeLayout(*us, x->shape());  // a bitcast, if the groups allow
    if (u->opcode() == HloOpcode::kTuple && us->IsTuple() && us->tuple_shapes(i).IsArray())
      return std::optional<Layout>(LayoutOf(us->tuple_shapes(i)));
    return std::optional<Layout>();
  }

  // A tuple's element i aims for what the tuple's consumers need of it (a while loop's state,
  // a callee's parameter), so the copy is not needed later.
  std::optional<Layout> TupleElementWish(const HloInstruction* tuple, int64_t i) {
    for (const HloInstruction* v : tuple->users())
      for (int64_t j = 0; j < v->operand_count(); ++j) {
        if (v->operand(j) != tuple) continue;
        std::optional<Shape> need = StructuralNeed(v, j);
        if (need && need->IsTuple() && i < static_cast<int64_t>(need->tuple_shapes().size()) &&
            need->tuple_shapes(i).IsArray())
          return LayoutOf(need->tuple_shapes(i));
      }
    return std::nullopt;
  }

  // What control flow needs of its operands: the callee's parameter shapes (default layouts
  // for every computation but the entry).
  static std::optional<Shape> StructuralNeed(const HloInstruction* u, int64_t i) {
    const auto& called = u->called_computations();
    switch (u->opcode()) {
      case HloOpcode::kWhile:
        return WithDefaultLayouts(u->shape());
      case HloOpcode::kCall:
        if (!called.empty() && i < called[0]->num_parameters())
          return WithDefaultLayouts(called[0]->parameter_instruction(i)->shape());
        return std::nullopt;
      case HloOpcode::kFusion:  // a fused computation keeps the layouts it has
        if (!called.empty() && i < called[0]->num_parameters()) {
          Shape s = called[0]->parameter_instruction(i)->shape();
          layout::FillDefaultLayouts(s);
          return s;
        }
        return std::nullopt;
      case HloOpcode::kConditional:
        if (i >= 1 && i - 1 < static_cast<int64_t>(called.size()) && called[i - 1]->num_parameters() == 1)
          return WithDefaultLayouts(called[i - 1]->parameter_instruction(0)->shape());
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }

  absl::Status Backward() {
    HloInstruction* root = c_->root_instruction();
    // The root tuple takes the result layout's elements, so the operands can aim for them.
    if (root->opcode() == HloOpcode::kTuple && result_.IsTuple() && !assigned_.count(root) &&
        result_.tuple_shapes().size() == root->shape().tuple_shapes().size()) {
      Shape s = result_;
      for (int64_t i = 0; i < root->operand_count(); ++i)
        if (!root->operand(i)->shape().EqualIgnoringLayout(s.tuple_shapes(i))) s.mutable_tuple_shapes()[i] = root->operand(i)->shape();
      root_wish_ = s;
    }
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      HloInstruction* x = *it;
      if (assigned_.count(x) || !CanTakeLayout(*x)) continue;
      std::optional<Layout> candidate;
      if (x == root && result_.IsArray()) candidate = LayoutOf(result_);
      absl::flat_hash_set<const HloInstruction*> seen;  // users() has a user once per use
      for (const HloInstruction* u : x->users()) {
        if (candidate) break;
        if (!seen.insert(u).second) continue;
        for (int64_t i = 0; i < u->operand_count() && !candidate; ++i) {
          if (u->operand(i) != x) continue;
          if (u == root && root_wish_ && root_wish_->tuple_shapes(i).IsArray()) {
            candidate = LayoutOf(root_wish_->tuple_shapes(i));
            break;
          }
          if (u->opcode() == HloOpcode::kTuple && !assigned_.count(u)) {
            candidate = TupleElementWish(u, i);
            continue;
          }
          absl::StatusOr<std::optional<Layout>> w = Wish(u, i);
          if (!w.ok()) return w.status();
          candidate = *w;
        }
      }
      if (candidate) assigned_[x] = WithLayout(x->shape(), *candidate);
    }
    return absl::OkStatus();
  }

  // The layout an instruction nobody constrained gets from its operands.
  Shape Derive(const HloInstruction* x) {
    const Shape& s = x->shape();
    switch (x->opcode()) {
      case HloOpcode::kTuple: {
        std::vector<Shape> elems;
        for (const HloInstruction* o : x->operands()) elems.push_back(assigned_.at(o));
        return Shape::Tuple(elems);
      }
      case HloOpcode::kGetTupleElement: {
        const Shape& t = assigned_.at(x->operand(0));
        if (t.IsTuple() && x->attrs().tuple_index < static_cast<int64_t>(t.tuple_shapes().size()))
          return t.tuple_shapes(x->attrs().tuple_index);
        return WithDefaultLayouts(s);
      }
      case HloOpcode::kTranspose:
        return WithLayout(s, layout::TransposeBitcastLayout(assigned_.at(x->operand(0)), x->attrs().dimensions));
      case HloOpcode::kReshape: {
        // XLA aligns a reshape's layout with its operand's so that it stays a bitcast.
        const Shape& in = assigned_.at(x->operand(0));
        if (s.IsArray() && !layout::HasDefaultLayout(in))
          if (std::optional<Layout> l = layout::AlignedReshapeLayout(in, s)) return WithLayout(s, *l);
        return WithDefaultLayouts(s);
      }
      case HloOpcode::kReduce: {
        // The kept dimensions in the order the (first) input lays them out.
        const Shape& in = assigned_.at(x->operand(0));
        const std::vector<int64_t>& reduced = x->attrs().dimensions;
        std::vector<int64_t> m2m;
        for (int64_t d : MajorToMinor(in)) {
          if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
          int64_t out = d;
          for (int64_t r : reduced)
            if (r < d) --out;
          m2m.push_back(out);
        }
        Layout l = LayoutFromMajorToMinor(m2m);
        if (s.IsArray()) return s.rank() == static_cast<int64_t>(m2m.size()) ? WithLayout(s, l) : WithDefaultLayouts(s);
        Shape t = WithDefaultLayouts(s);
        for (Shape& e : t.mutable_tuple_shapes())
          if (e.IsArray() && e.rank() == static_cast<int64_t>(m2m.size())) e = WithLayout(e, l);
        return t;
      }
      case HloOpcode::kFusion: {
        const auto& called = x->called_computations();
        if (!called.empty() && called[0]->root_instruction() != nullptr &&
            called[0]->root_instruction()->shape().EqualIgnoringLayout(s)) {
          Shape r = called[0]->root_instruction()->shape();
          layout::FillDefaultLayouts(r);
          return r;
        }
        break;
      }
      case HloOpcode::kSort:
        if (s.IsTuple()) {
          Shape t = WithDefaultLayouts(s);
          const Shape& in = assigned_.at(x->operand(0));
          for (Shape& e : t.mutable_tuple_shapes())
            if (e.IsArray() && e.rank() == in.rank()) e = WithLayout(e, LayoutOf(in));
          return t;
        }
        break;
      default:
        break;
    }
    if (Preserves(*x)) {
      for (const HloInstruction* o : x->operands()) {
        const Shape& os = assigned_.at(o);
        if (os.IsArray() && os.rank() == s.rank() && os.rank() > 0) return WithLayout(s, LayoutOf(os));
      }
    }
    return WithDefaultLayouts(s);
  }

  void Forward() {
    for (HloInstruction* x : order_)
      if (!assigned_.count(x)) assigned_[x] = Derive(x);
  }

  // The shape (layouts) user `u` needs its operand `i` in, or nullopt when any will do.
  absl::StatusOr<std::optional<Shape>> Need(const HloInstruction* u, int64_t i) {
    const HloInstruction* x = u->operand(i);
    const Shape& xs = x->shape();
    absl::StatusOr<std::optional<layout::SlotDecision>> d =
        Decide(rows_, *u, static_cast<int>(i), &xs, &u->operand(0)->shape(), &u->shape());
    if (!d.ok()) return d.status();
    if (d->has_value()) {
      Trace(*u, absl::StrCat("operand ", i), (*d)->layout, (*d)->row);
      return std::optional<Shape>(WithLayout(xs, (*d)->layout));
    }
    if (Preserves(*u)) {
      if (xs.rank() == u->shape().rank() && xs.rank() > 0) return std::optional<Shape>(WithLayout(xs, LayoutOf(u->shape())));
      return std::optional<Shape>();
    }
    if (u->opcode() == HloOpcode::kSort) {
      if (u->shape().IsTuple() && i < static_cast<int64_t>(u->shape().tuple_shapes().size()))
        return std::optional<Shape>(WithLayout(xs, LayoutOf(u->shape().tuple_shapes(i))));
      return std::optional<Shape>();
    }
    if (u->opcode() == HloOpcode::kWhile || u->opcode() == HloOpcode::kCall || u->opcode() == HloOpcode::kFusion ||
        u->opcode() == HloOpcode::kConditional)
      return StructuralNeed(u, i);
    if (u->opcode() == HloOpcode::kReduce) {
      // A variadic reduce's inputs follow input 0 (ReduceInputsAlike unless disabled).
      return std::optional<Shape>();
    }
    if (AcceptsAnyOperandLayout(*u)) return std::optional<Shape>();
    return std::optional<Shape>(WithDefaultLayouts(xs));
  }

  HloInstruction* CopyTo(HloInstruction* x, const Shape& target, const HloInstruction* before) {
    std::string key = absl::StrCat(x->unique_id(), "/", reinterpret_cast<uintptr_t>(x), "/", target.ToString(true));
    auto it = copies_.find(key);
    if (it != copies_.end()) return it->second;
    layout::Builder b(c_, &names_, before);
    HloInstruction* out;
    if (x->shape().IsTuple() && target.IsTuple() && target.tuple_shapes().size() == x->shape().tuple_shapes().size()) {
      std::vector<HloInstruction*> elems;
      for (int64_t i = 0; i < static_cast<int64_t>(target.tuple_shapes().size()); ++i) {
        // A tuple instruction's elements are at hand; anything else is taken apart.
        HloInstruction* e = x->opcode() == HloOpcode::kTuple ? x->operand(i) : b.GetTupleElement(x, i);
        if (!layout::SameLayout(e->shape(), target.tuple_shapes(i))) e = CopyTo(e, target.tuple_shapes(i), before);
        elems.push_back(e);
      }
      out = b.Tuple(elems);
    } else {
      Shape s = WithLayout(x->shape(), LayoutOf(target));
      out = b.Copy(x, s);
    }
    copies_[key] = out;
    return out;
  }

  absl::Status InsertCopies() {
    for (HloInstruction* u : order_) {
      for (int64_t i = 0; i < u->operand_count(); ++i) {
        HloInstruction* x = u->operand(i);
        absl::StatusOr<std::optional<Shape>> need = Need(u, i);
        if (!need.ok()) return need.status();
        if (!need->has_value() || layout::SameLayout(x->shape(), **need)) continue;
        HloInstruction* copy = CopyTo(x, **need, u);
        if (trace_ != nullptr)
          *trace_ << "layout-assignment: %" << u->name() << " operand " << i << ": %" << x->name() << " "
                  << x->shape().ToString(true) << " -> %" << copy->name() << " " << copy->shape().ToString(true)
                  << " (copy)\n";
        u->ReplaceOperandWith(i, copy);
      }
    }
    HloInstruction* root = c_->root_instruction();
    Shape want = result_;
    layout::FillDefaultLayouts(want);
    if (!layout::SameLayout(root->shape(), want) && root->shape().EqualIgnoringLayout(want))
      c_->set_root_instruction(CopyTo(root, want, nullptr));
    return absl::OkStatus();
  }

  // --trace-rules: which row decided a layout, and where copies went.
  void Trace(const HloInstruction& inst, const std::string& slot, const Layout& l, const LayoutConstraintInfo* row) {
    if (trace_ == nullptr || row == nullptr) return;
    *trace_ << "layout-assignment: %" << inst.name() << " " << slot << " " << LayoutToString(l) << " by " << row->name
            << " (" << row->file << ":" << row->line << ")\n";
  }

  HloComputation* c_;
  const ConstraintSet& rows_;
  NameUniquer& names_;
  std::vector<Shape> params_;
  Shape result_;
  std::optional<Shape> root_wish_;
  std::ostream* trace_ = nullptr;
  std::vector<HloInstruction*> order_;
  absl::flat_hash_map<const HloInstruction*, Shape> assigned_;
  absl::flat_hash_map<const HloInstruction*, bool> preserves_layout_;  // Preserves()'s answers
  absl::flat_hash_map<std::string, HloInstruction*> copies_;
};

// Every shape of the module as text, to tell whether the pass changed anything.
std::string Fingerprint(const HloModule& module) {
  std::string out;
  for (const auto& c : module.computations()) {
    absl::StrAppend(&out, c->name(), ":", c->root_instruction() ? c->root_instruction()->name() : "", "\n");
    for (const auto& inst : c->instructions()) {
      absl::StrAppend(&out, inst->name(), "=", inst->shape().ToString(true), "(");
      for (const HloInstruction* o : inst->operands()) absl::StrAppend(&out, o->name(), ",");
      absl::StrAppend(&out, ")\n");
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> LayoutAssignment::Run(HloModule& module, PassContext& context) {
  const ConstraintSet rows = ConstraintSet::Build(context.profile, context.enabled_rules, context.disabled_rules);
  HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return false;
  const std::string before = Fingerprint(module);

  // The entry's interface: the module's entry computation layout where it matches the entry,
  // else the layouts the entry's own parameters and root are written with.
  std::vector<Shape> entry_params;
  Shape entry_result = entry->root_instruction()->shape();
  const auto& ecl = module.config().entry_computation_layout;
  bool use_ecl = ecl.has_value() && static_cast<int64_t>(ecl->parameter_shapes.size()) == entry->num_parameters() &&
                 ecl->result_shape.EqualIgnoringLayout(entry_result);
  for (int64_t i = 0; i < entry->num_parameters() && use_ecl; ++i)
    use_ecl = ecl->parameter_shapes[i].EqualIgnoringLayout(entry->parameter_instruction(i)->shape());
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    Shape s = use_ecl ? ecl->parameter_shapes[i] : entry->parameter_instruction(i)->shape();
    layout::FillDefaultLayouts(s);
    entry_params.push_back(s);
  }
  if (use_ecl) entry_result = ecl->result_shape;
  layout::FillDefaultLayouts(entry_result);

  NameUniquer names = InstructionNameUniquer(module);
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (layout::IsFusedComputation(*c) && c != entry) {
      // A fusion's body follows its instruction; it only gets layouts where it has none.
      for (const auto& inst : c->instructions()) layout::FillDefaultLayouts(inst->mutable_shape());
      continue;
    }
    std::vector<Shape> params;
    Shape result;
    if (c == entry) {
      params = entry_params;
      result = entry_result;
    } else {
      for (const HloInstruction* p : c->parameters()) params.push_back(WithDefaultLayouts(p->shape()));
      result = WithDefaultLayouts(c->root_instruction()->shape());
    }
    std::ostream* trace = context.trace_rules ? (context.trace_out ? context.trace_out : &std::cerr) : nullptr;
    ComputationAssigner assigner(c, rows, names, std::move(params), std::move(result), trace);
    absl::Status s = assigner.Run();
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("computation ", c->name(), ": ", s.message()));
  }
  ComputationLayout out;
  for (const HloInstruction* p : entry->parameters()) out.parameter_shapes.push_back(p->shape());
  out.result_shape = entry->root_instruction()->shape();
  module.config().entry_computation_layout = out;
  return Fingerprint(module) != before;
}

}  // namespace hloc
