#include "passes/fusion/fusion_analysis.h"

#include <algorithm>
#include <array>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "engine/rule_tables.h"
#include "ir/computation.h"

namespace hloc::fusion {

// A body's indexing (ComputeIndexing below), by position counted from the END of its post
// order: a fusion grown in place (FusionBuilder::FuseInPlace) gets the producer's clones and
// parameters ahead of its old instructions, whose users, and so whose entries, are unchanged;
// counted from the end they keep their positions, and only the new part is computed
// (FusionFactsCache::GrewInPlace). From the start, every entry would move.
struct IndexingState {
  // An instruction's index-changing readers, by position (the instruction itself stands for
  // "an output of the kernel"), each with how many of its elements the reader reads per
  // element it computes. Few per instruction: a list, not a map.
  using Readers = std::vector<std::pair<int64_t, double>>;
  // The body's non-parameter instructions in post order, last first, then its parameters:
  // those read nothing, so they can come last whatever the post order says, and a growth
  // that moves them (FuseInPlace puts them all in front) leaves the others' positions.
  std::vector<const HloInstruction*> rpost;
  int64_t instructions = 0;  // of rpost, the non-parameters
  absl::flat_hash_map<const HloInstruction*, int64_t> pos;  // index into rpost
  std::vector<Readers> readers;
  std::vector<double> evals;
  std::vector<double> index_count;
};

struct FusionFactsCache::Facts {
  int64_t size = 0;  // body instructions, for the cache's bound
  std::vector<const HloInstruction*> fused;  // FusedInstructions
  std::vector<const HloInstruction*> reductions;
  std::vector<HloOpcode> opcodes;  // FusedOpcodes
  std::vector<const HloInstruction*> representatives;  // FusedOpcodeTypeRepresentatives
  FusionKind kind = FusionKind::kLoop;
  // The body's indexing (ComputeIndexing) and what follows from it, made on first use
  // (LookupIndexed): many fusions are refused by their opcodes alone and never costed.
  bool indexed = false;
  // Whether the body's post order is its instruction order (a body the fusion builder wrote):
  // then a growth in place is known to prepend to it.
  bool list_order = false;
  IndexingState indexing;
  std::vector<std::pair<const HloInstruction*, double>> param_index_counts;
  std::vector<double> utilization;
  double flops = 0;
};

namespace {

using O = HloOpcode;

const Shape& FirstLeaf(const Shape& shape) {
  const Shape* s = &shape;
  while (s->IsTuple() && !s->tuple_shapes().empty()) s = &s->tuple_shapes(0);
  return *s;
}

double Elems(const HloInstruction* inst) { return static_cast<double>(ElementCount(inst->shape())); }

std::vector<int64_t> MinorToMajor(const Shape& shape) {
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major.size()) == shape.rank())
    return shape.layout().minor_to_major;
  std::vector<int64_t> m;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

// A constant, an iota, or a broadcast of an effective scalar: values an epilogue may combine
// with the hero's result without a second data-dependent input.
bool IsTrivialOperand(const HloInstruction* inst) {
  if (inst->opcode() == O::kConstant || inst->opcode() == O::kIota) return true;
  if (inst->opcode() == O::kBroadcast) return ElementCount(inst->operand(0)->shape()) == 1;
  return false;
}

// Ops an epilogue may consist of: they keep the element order of the hero's result.
bool IsEpilogueOp(const HloInstruction* inst) {
  if (inst->IsElementwise()) return true;
  switch (inst->opcode()) {
    case O::kBitcast: case O::kReshape: case O::kCopy:
      return true;
    default:
      return false;
  }
}

// How many elements of operand j the instruction reads per element of its (first) output.
double ReadFactor(const HloInstruction* x, int64_t j) {
  const double out = std::max(1.0, static_cast<double>(ElementCount(FirstLeaf(x->shape()))));
  const double in = static_cast<double>(ElementCount(x->operand(j)->shape()));
  switch (x->opcode()) {
    case O::kReduce: {
      const int64_t n = x->operand_count() / 2;
      return j < n ? in / out : 1.0;
    }
    case O::kReduceWindow: {
      const int64_t n = x->operand_count() / 2;
      if (j >= n || !x->attrs().window) return 1.0;
      double w = 1;
      for (const WindowDimension& d : x->attrs().window->dimensions) w *= static_cast<double>(d.size);
      return w;
    }
    case O::kDot: {
      if (j >= 2 || !x->attrs().dot_dimension_numbers) return 1.0;
      double k = 1;
      for (int64_t d : x->attrs().dot_dimension_numbers->lhs_contracting_dimensions)
        if (d < x->operand(0)->shape().rank()) k *= static_cast<double>(x->operand(0)->shape().dimensions(d));
      return k;
    }
    case O::kConcatenate:
      return in / out;
    case O::kPad:
      return j == 0 ? in / out : 1.0;
    case O::kDynamicUpdateSlice:
      return j == 0 ? 1.0 : std::min(1.0, in / out);
    case O::kScatter:
      return j == 0 ? 1.0 : std::min(1.0, in / out);
    case O::kGather:
      return j == 0 ? 1.0 : std::min(1.0, in / out);
    default:
      return 1.0;
  }
}

std::vector<const HloInstruction*> PostOrder(const HloComputation* comp) {
  std::vector<const HloInstruction*> out;
  for (HloInstruction* i : comp->MakeInstructionPostOrder()) out.push_back(i);
  return out;
}

}  // namespace

int64_t ElementCount(const Shape& shape) {
  const Shape& leaf = FirstLeaf(shape);
  if (!leaf.IsArray()) return 1;
  absl::StatusOr<int64_t> n = leaf.ElementCount();
  return n.ok() ? *n : 1;
}

int64_t ByteSize(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) total += ByteSize(s);
    return total;
  }
  if (!shape.IsArray()) return 0;
  absl::StatusOr<int64_t> n = shape.ElementCount();
  return n.ok() ? *n * ByteWidth(shape.element_type()) : 0;
}

std::vector<const HloInstruction*> FusedInstructions(const HloInstruction* node) {
  if (node->opcode() != O::kFusion || node->called_computations().empty()) return {node};
  if (const FusionFactsCache::Facts* f = FusionFactsCache::Lookup(node)) return f->fused;
  std::vector<const HloInstruction*> out;
  for (const HloInstruction* i : PostOrder(node->fused_instructions_computation()))
    if (i->opcode() != O::kParameter) out.push_back(i);
  return out;
}

std::vector<const HloInstruction*> FusionOutputs(const HloInstruction* node) {
  if (node->opcode() != O::kFusion || node->called_computations().empty()) return {node};
  const HloInstruction* root = node->fused_instructions_computation()->root_instruction();
  if (root->opcode() == O::kTuple) return {root->operands().begin(), root->operands().end()};
  return {root};
}

bool IsMultiOutputFusion(const HloInstruction* node) {
  return node->opcode() == O::kFusion && !node->called_computations().empty() &&
         node->fused_instructions_computation()->root_instruction()->opcode() == O::kTuple;
}

bool IsInputFusibleReduction(const HloInstruction* inst) {
  if (inst->opcode() != O::kReduce || inst->operand_count() < 2) return false;
  const Shape& in = inst->operand(0)->shape();
  for (int64_t d : inst->attrs().dimensions)
    if (d >= 0 && d < in.rank() && in.dimensions(d) > 1) return true;
  return false;
}

bool IsRowReduction(const HloInstruction* inst) {
  if (!IsInputFusibleReduction(inst)) return false;
  const Shape& in = inst->operand(0)->shape();
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : inst->attrs().dimensions)
    if (d >= 0 && d < in.rank()) reduced[d] = true;
  // Walk minor to major, skipping size-1 dimensions: the reduced ones must all come first.
  bool seen_kept = false;
  for (int64_t d : MinorToMajor(in)) {
    if (in.dimensions(d) == 1) continue;
    if (!reduced[d]) seen_kept = true;
    else if (seen_kept) return false;
  }
  return true;
}

bool IsTiledTranspose(const HloInstruction* inst) {
  if (inst->opcode() != O::kTranspose) return false;
  const std::vector<int64_t>& perm = inst->attrs().dimensions;
  const Shape& in = inst->operand(0)->shape();
  const int64_t rank = in.rank();
  if (rank < 2 || static_cast<int64_t>(perm.size()) != rank) return false;
  // Ignoring size-1 dimensions, does the minor-most input dimension stay minor-most?
  std::vector<int64_t> kept;
  for (int64_t p : perm)
    if (in.dimensions(p) > 1) kept.push_back(p);
  if (kept.size() < 2) return false;
  int64_t in_minor = -1;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (in.dimensions(d) > 1) { in_minor = d; break; }
  if (kept.back() == in_minor) return false;
  // Smaller transposes are plain loops.
  return WorthTransposeTiling(in.dimensions(in_minor), in.dimensions(kept.back()), ElementCount(in));
}

const HloInstruction* FindHero(const HloInstruction* root) {
  const HloInstruction* cur = root;
  for (int steps = 0; steps < 1000; ++steps) {
    if (IsInputFusibleReduction(cur) || IsTiledTranspose(cur) || cur->opcode() == O::kScatter) return cur;
    if (!IsEpilogueOp(cur)) return root;
    const HloInstruction* next = nullptr;
    for (const HloInstruction* op : cur->operands()) {
      if (IsTrivialOperand(op)) continue;
      if (next != nullptr && next != op) return root;  // two data inputs: not an epilogue
      next = op;
    }
    if (next == nullptr || next->opcode() == O::kParameter) return root;
    cur = next;
  }
  return root;
}

bool HasReduction(const HloInstruction* node) { return !Reductions(node).empty(); }

std::vector<const HloInstruction*> Reductions(const HloInstruction* node) {
  if (const FusionFactsCache::Facts* f = FusionFactsCache::Lookup(node)) return f->reductions;
  std::vector<const HloInstruction*> out;
  for (const HloInstruction* i : FusedInstructions(node))
    if (IsInputFusibleReduction(i)) out.push_back(i);
  return out;
}

bool HasTiledTransposeHero(const HloInstruction* node) {
  for (const HloInstruction* o : FusionOutputs(node))
    if (IsTiledTranspose(FindHero(o))) return true;
  return false;
}

FusionKind FusionKindFor(const std::vector<const HloInstruction*>& instructions) {
  for (const HloInstruction* i : instructions)
    if (IsInputFusibleReduction(i) || i->opcode() == O::kScatter) return FusionKind::kInput;
  return FusionKind::kLoop;
}

namespace {

std::vector<HloOpcode> DistinctOpcodes(const std::vector<const HloInstruction*>& instructions) {
  std::vector<HloOpcode> out;
  std::array<bool, kNumOpcodes> seen{};
  for (const HloInstruction* i : instructions) {
    const int k = static_cast<int>(i->opcode());
    if (seen[k]) continue;
    seen[k] = true;
    out.push_back(i->opcode());
  }
  return out;
}

std::vector<const HloInstruction*> Representatives(const std::vector<const HloInstruction*>& instructions) {
  std::vector<const HloInstruction*> out;
  absl::flat_hash_set<std::pair<int, int>> seen;
  for (const HloInstruction* i : instructions) {
    const int type = i->shape().IsArray() ? static_cast<int>(i->shape().element_type()) : -1;
    if (seen.insert({static_cast<int>(i->opcode()), type}).second) out.push_back(i);
  }
  return out;
}

}  // namespace

std::vector<const HloInstruction*> FusedOpcodeTypeRepresentatives(const HloInstruction* node) {
  if (const FusionFactsCache::Facts* f = FusionFactsCache::Lookup(node)) return f->representatives;
  return Representatives(FusedInstructions(node));
}

bool HasFusedOpcode(const HloInstruction* node, HloOpcode opcode) {
  if (node->opcode() != O::kFusion || node->called_computations().empty()) return node->opcode() == opcode;
  for (HloOpcode op : FusedOpcodes(node))
    if (op == opcode) return true;
  return false;
}

std::vector<HloOpcode> FusedOpcodes(const HloInstruction* node) {
  if (const FusionFactsCache::Facts* f = FusionFactsCache::Lookup(node)) return f->opcodes;
  return DistinctOpcodes(FusedInstructions(node));
}

FusionKind NodeFusionKind(const HloInstruction* node) {
  if (const FusionFactsCache::Facts* f = FusionFactsCache::Lookup(node)) return f->kind;
  return FusionKindFor(FusedInstructions(node));
}

namespace {

// Per fused instruction: the element evaluations it gets, and how many distinct indexings
// the emitter generates its code for (XLA's FusionNodeIndexingEvaluation). A fused emitter
// computes a value once per (instruction, index): users that read it elementwise at the same
// index share one evaluation, so only index-changing users (broadcast, slice, reduce, ...)
// and outputs multiply the work.
bool SameIndexUser(const HloInstruction* user, const HloInstruction* operand) {
  if (!user->IsElementwise() && user->opcode() != O::kCopy && user->opcode() != O::kConvert) return false;
  return user->shape().IsArray() && operand->shape().IsArray() &&
         user->shape().dimensions() == operand->shape().dimensions();
}

thread_local int64_t body_analyses = 0;

void MaxInto(IndexingState::Readers& readers, int64_t v, double f) {
  for (auto& [w, g] : readers)
    if (w == v) {
      g = std::max(g, f);
      return;
    }
  readers.push_back({v, std::max(0.0, f)});
}

// Fills the state's positions [from, size) (counted from the end of the post order): each
// instruction from its users, which come later in the post order and so were done before it.
// Positions marked in `done` are kept as they are.
void IndexFrom(IndexingState& st, const HloComputation* comp, int64_t from,
               const std::vector<bool>* done = nullptr) {
  const int64_t n = static_cast<int64_t>(st.rpost.size());
  const HloInstruction* root = comp->root_instruction();
  const bool tuple_root = root->opcode() == O::kTuple;
  st.readers.resize(n);
  st.evals.resize(n, 0.0);
  st.index_count.resize(n, 0.0);
  absl::flat_hash_set<const HloInstruction*> outputs;
  if (tuple_root) outputs.insert(root->operands().begin(), root->operands().end());
  absl::flat_hash_set<const HloInstruction*> seen_users;
  for (int64_t i = from; i < n; ++i) {
    const HloInstruction* x = st.rpost[i];
    if ((x == root && tuple_root) || (done != nullptr && (*done)[i])) continue;
    const bool output = tuple_root ? outputs.contains(x) : x == root;
    IndexingState::Readers& mine = st.readers[i];
    mine.clear();
    if (output) mine.push_back({i, 1.0});
    // users() lists a user once per use; each distinct user is read once (its operands loop
    // below counts every use), else a concatenate of one operand n times costs n^2.
    seen_users.clear();
    for (const HloInstruction* u : x->users()) {
      if ((u == root && tuple_root) || !seen_users.insert(u).second) continue;
      const int64_t ui = st.pos.at(u);
      if (SameIndexUser(u, x)) {
        for (const auto& [v, f] : st.readers[ui]) MaxInto(mine, v, f);
      } else {
        double f = 0;
        for (int64_t j = 0; j < u->operand_count(); ++j)
          if (u->operand(j) == x) f += ReadFactor(u, j);
        MaxInto(mine, ui, f);
      }
    }
    double e = 0, count = 0;
    for (const auto& [v, f] : mine) {
      if (v == i) {
        e += Elems(x);
        count += 1;
      } else {
        e += st.evals[v] * f;
        count += st.index_count[v] * (st.rpost[v]->opcode() == O::kConcatenate ? st.rpost[v]->operand_count() : 1);
      }
    }
    // A reduction inside a kernel is computed once per output element and kept (in
    // registers or shared memory) for every later reader: a row-normalization kernel
    // broadcasts it over the row without recomputing it.
    if (IsInputFusibleReduction(x)) {
      e = std::min(e, Elems(x));
      count = std::min(count, 1.0);
    }
    st.evals[i] = e;
    st.index_count[i] = std::min(count, 1e12);
  }
}

IndexingState ComputeIndexing(const HloComputation* comp) {
  ++body_analyses;
  IndexingState st;
  std::vector<const HloInstruction*> post = PostOrder(comp);
  st.rpost.reserve(post.size());
  for (auto it = post.rbegin(); it != post.rend(); ++it)
    if ((*it)->opcode() != O::kParameter) st.rpost.push_back(*it);
  st.instructions = static_cast<int64_t>(st.rpost.size());
  // The parameters by number (as GrewInPlace appends them).
  for (const HloInstruction* p : comp->parameters())
    if (p != nullptr) st.rpost.push_back(p);
  st.pos.reserve(st.rpost.size());
  for (size_t i = 0; i < st.rpost.size(); ++i) st.pos[st.rpost[i]] = static_cast<int64_t>(i);
  IndexFrom(st, comp, 0);
  return st;
}

// The element evaluations of a body's instructions from its indexing: the non-parameters in
// post order, then the parameters (what flops and utilization read: parameters add no flops),
// and the index count of each parameter (by parameter position in the body).
std::vector<std::pair<const HloInstruction*, double>> EvaluationsOf(
    const IndexingState& st, const HloComputation* comp,
    std::vector<std::pair<const HloInstruction*, double>>* param_index_counts) {
  std::vector<std::pair<const HloInstruction*, double>> out;
  out.reserve(st.rpost.size());
  for (int64_t i = st.instructions; i-- > 0;) out.push_back({st.rpost[i], st.evals[i]});
  for (size_t i = st.instructions; i < st.rpost.size(); ++i) out.push_back({st.rpost[i], st.evals[i]});
  if (param_index_counts != nullptr) {
    param_index_counts->clear();
    for (const HloInstruction* p : comp->parameters()) {
      if (p == nullptr) continue;
      auto it = st.pos.find(p);
      param_index_counts->push_back({p, it != st.pos.end() ? st.index_count[it->second] : 0.0});
    }
  }
  return out;
}

}  // namespace

namespace {

// The same without the cache.
std::vector<std::pair<const HloInstruction*, double>> FusionElementEvaluations(
    const HloComputation* comp, std::vector<std::pair<const HloInstruction*, double>>* param_index_counts) {
  return EvaluationsOf(ComputeIndexing(comp), comp, param_index_counts);
}

std::vector<double> UtilizationFromEvaluations(const HloInstruction* node,
                                               const std::vector<std::pair<const HloInstruction*, double>>& evals) {
  std::vector<double> util(node->operand_count(), 0.0);
  for (const auto& [inst, e] : evals) {
    if (inst->opcode() != O::kParameter) continue;
    const int64_t p = inst->attrs().parameter_number;
    if (p >= 0 && p < node->operand_count()) util[p] = e / std::max(1.0, Elems(inst));
  }
  return util;
}

double FlopsFromEvaluations(const std::vector<std::pair<const HloInstruction*, double>>& evals);
void AddFlops(double& flops, const HloInstruction* x, double evals);

}  // namespace

int64_t FusionBodyAnalyses() { return body_analyses; }

std::vector<std::pair<const HloInstruction*, double>> ElementEvaluations(const HloInstruction* node) {
  if (node->opcode() != O::kFusion || node->called_computations().empty()) return {{node, Elems(node)}};
  // In post order (the cache keeps them in its own order, for flops and utilization).
  const HloComputation* comp = node->fused_instructions_computation();
  const IndexingState st = ComputeIndexing(comp);
  std::vector<std::pair<const HloInstruction*, double>> out;
  for (const HloInstruction* x : PostOrder(comp)) {
    auto it = st.pos.find(x);
    out.push_back({x, it != st.pos.end() ? st.evals[it->second] : 0.0});
  }
  return out;
}

std::vector<double> OperandUtilization(const HloInstruction* node) {
  std::vector<double> util(node->operand_count(), 0.0);
  if (node->opcode() != O::kFusion || node->called_computations().empty()) {
    const double out = Elems(node);
    for (int64_t j = 0; j < node->operand_count(); ++j)
      util[j] = ReadFactor(node, j) * out / std::max(1.0, Elems(node->operand(j)));
    return util;
  }
  if (const FusionFactsCache::Facts* f = FusionFactsCache::LookupIndexed(node)) return f->utilization;
  for (const auto& [inst, evals] : ElementEvaluations(node)) {
    if (inst->opcode() != O::kParameter) continue;
    const int64_t p = inst->attrs().parameter_number;
    if (p >= 0 && p < node->operand_count()) util[p] = evals / std::max(1.0, Elems(inst));
  }
  return util;
}

namespace {
// The generated op-cost table's row for an opcode: its relative cost (returned), SlowInF64 and
// Expensive fields.
int OpCostRow(HloOpcode opcode, bool* slow_in_f64, bool* expensive) {
  struct Table {
    std::array<int, kNumOpcodes> cost;
    std::array<bool, kNumOpcodes> slow_in_f64;
    std::array<bool, kNumOpcodes> expensive;
  };
  static const Table* table = [] {
    auto* t = new Table;
    t->cost.fill(1);
    t->slow_in_f64.fill(false);
    t->expensive.fill(false);
    for (const OpCostInfo* row : GeneratedTables::Global().op_costs) {
      if (row->opcode < 0 || row->opcode >= kNumOpcodes) continue;
      t->cost[row->opcode] = row->relative_cost;
      t->slow_in_f64[row->opcode] = row->slow_in_f64;
      t->expensive[row->opcode] = row->expensive;
    }
    return t;
  }();
  const int i = static_cast<int>(opcode);
  if (slow_in_f64) *slow_in_f64 = table->slow_in_f64[i];
  if (expensive) *expensive = table->expensive[i];
  return table->cost[i];
}
}  // namespace

bool IsExpensiveOpcode(HloOpcode opcode) {
  bool expensive = false;
  OpCostRow(opcode, nullptr, &expensive);
  return expensive;
}

int RelativeCost(HloOpcode opcode, bool* slow_in_f64) { return OpCostRow(opcode, slow_in_f64, nullptr); }

bool IsLibraryCallInstruction(const HloInstruction* node) {
  return node->opcode() == O::kCustomCall ||
         (node->opcode() == O::kFusion && node->attrs().fusion_kind == FusionKind::kCustom);
}

double Flops(const HloInstruction* node) {
  if (const FusionFactsCache::Facts* f = FusionFactsCache::LookupIndexed(node)) return f->flops;
  return FlopsFromEvaluations(ElementEvaluations(node));
}

namespace {

void AddFlops(double& flops, const HloInstruction* x, double evals) {
  switch (x->opcode()) {
    case O::kParameter: case O::kConstant: case O::kTuple: case O::kGetTupleElement:
      break;
    case O::kReduce: case O::kReduceWindow:
      // One application of the reducer per element read.
      flops += evals * ReadFactor(x, 0) * static_cast<double>(std::max<int64_t>(1, x->operand_count() / 2));
      break;
    case O::kDot: case O::kConvolution:
      flops += evals * 2.0 * ReadFactor(x, 0);
      break;
    default:
      flops += evals * RelativeCost(x->opcode());
  }
}

double FlopsFromEvaluations(const std::vector<std::pair<const HloInstruction*, double>>& all) {
  double flops = 0;
  for (const auto& [x, evals] : all) AddFlops(flops, x, evals);
  return flops;
}

}  // namespace

int64_t PathsFromProducer(const HloInstruction* producer, const HloInstruction* consumer) {
  constexpr double kCap = double{1 << 20};
  if (consumer->opcode() != O::kFusion || consumer->called_computations().empty()) {
    // A plain consumer reads each operand at one index (a concatenate at one per operand).
    for (const HloInstruction* op : consumer->operands())
      if (op == producer) return 1;
    return 0;
  }
  std::vector<std::pair<const HloInstruction*, double>> counts;
  const std::vector<std::pair<const HloInstruction*, double>>* param_counts = &counts;
  if (const FusionFactsCache::Facts* f = FusionFactsCache::LookupIndexed(consumer)) {
    param_counts = &f->param_index_counts;
  } else {
    FusionElementEvaluations(consumer->fused_instructions_computation(), &counts);
  }
  double total = 0;
  for (const auto& [p, count] : *param_counts) {
    const int64_t n = p->attrs().parameter_number;
    if (n >= 0 && n < consumer->operand_count() && consumer->operand(n) == producer) total += count;
  }
  return static_cast<int64_t>(std::min(total, kCap));
}

struct FusionFactsCache::Impl {
  absl::flat_hash_map<int64_t, std::unique_ptr<Facts>> by_id;
  int64_t cached_instructions = 0;
};

namespace {
thread_local FusionFactsCache* active_cache = nullptr;
// Past this many cached body instructions new fusions are not cached (bounded memory; the
// answers are computed as without a cache). Entries are never dropped while one is in use.
constexpr int64_t kMaxCachedInstructions = int64_t{1} << 24;
}  // namespace

FusionFactsCache::FusionFactsCache() : impl_(new Impl), previous_(active_cache) { active_cache = this; }
FusionFactsCache::~FusionFactsCache() {
  active_cache = previous_;
  delete impl_;
}

void FusionFactsCache::Forget(const HloInstruction* fusion) { Forget(fusion->unique_id()); }

void FusionFactsCache::Forget(int64_t id) {
  auto it = impl_->by_id.find(id);
  if (it == impl_->by_id.end()) return;
  impl_->cached_instructions -= it->second->size;
  impl_->by_id.erase(it);
}

const FusionFactsCache::Facts* FusionFactsCache::Lookup(const HloInstruction* node) {
  FusionFactsCache* cache = active_cache;
  if (cache == nullptr || node->opcode() != O::kFusion || node->called_computations().empty() ||
      node->unique_id() < 0)
    return nullptr;
  Impl& impl = *cache->impl_;
  auto it = impl.by_id.find(node->unique_id());
  if (it != impl.by_id.end()) return it->second.get();
  const HloComputation* comp = node->fused_instructions_computation();
  if (impl.cached_instructions + comp->instruction_count() > kMaxCachedInstructions) return nullptr;
  auto facts = std::make_unique<Facts>();
  facts->size = comp->instruction_count();
  const std::vector<const HloInstruction*> post = PostOrder(comp);
  for (const HloInstruction* x : post) {
    if (x->opcode() == O::kParameter) continue;
    facts->fused.push_back(x);
    if (IsInputFusibleReduction(x)) facts->reductions.push_back(x);
  }
  const auto& list = comp->instructions();
  facts->list_order = list.size() == post.size();
  for (size_t i = 0; i < post.size() && facts->list_order; ++i) facts->list_order = list[i].get() == post[i];
  facts->opcodes = DistinctOpcodes(facts->fused);
  facts->representatives = Representatives(facts->fused);
  facts->kind = FusionKindFor(facts->fused);
  impl.cached_instructions += facts->size;
  return impl.by_id.emplace(node->unique_id(), std::move(facts)).first->second.get();
}

const FusionFactsCache::Facts* FusionFactsCache::LookupIndexed(const HloInstruction* node) {
  const Facts* found = Lookup(node);
  if (found == nullptr || found->indexed) return found;
  // The entry Lookup made (or found) for this id: the cache owns it, and only fills it here.
  Facts* facts = const_cast<Facts*>(found);
  const HloComputation* comp = node->fused_instructions_computation();
  facts->indexing = ComputeIndexing(comp);
  FillFromIndexing(node, *facts);
  return facts;
}

void FusionFactsCache::FillFromIndexing(const HloInstruction* node, Facts& facts) {
  // What EvaluationsOf, UtilizationFromEvaluations and FlopsFromEvaluations give, without the
  // list: the flops summed in the same order (post order), so to the same bits.
  const IndexingState& st = facts.indexing;
  const HloComputation* comp = node->fused_instructions_computation();
  facts.flops = 0;
  for (int64_t i = st.instructions; i-- > 0;) AddFlops(facts.flops, st.rpost[i], st.evals[i]);
  facts.utilization.assign(node->operand_count(), 0.0);
  for (size_t i = st.instructions; i < st.rpost.size(); ++i) {
    const int64_t p = st.rpost[i]->attrs().parameter_number;
    if (p >= 0 && p < node->operand_count()) facts.utilization[p] = st.evals[i] / std::max(1.0, Elems(st.rpost[i]));
  }
  facts.param_index_counts.clear();
  for (const HloInstruction* p : comp->parameters()) {
    if (p == nullptr) continue;
    auto it = st.pos.find(p);
    facts.param_index_counts.push_back({p, it != st.pos.end() ? st.index_count[it->second] : 0.0});
  }
  facts.indexed = true;
}

void FusionFactsCache::GrewInPlace(int64_t old_id, const HloInstruction* node,
                                   const std::vector<const HloInstruction*>& clones) {
  FusionFactsCache* cache = active_cache;
  if (cache == nullptr) return;
  Impl& impl = *cache->impl_;
  auto it = impl.by_id.find(old_id);
  if (it == impl.by_id.end()) return;
  std::unique_ptr<Facts> facts = std::move(it->second);
  impl.by_id.erase(it);
  impl.cached_instructions -= facts->size;
  const HloComputation* comp = node->fused_instructions_computation();
  // Only a body kept in instruction order is known to have grown at its front (FuseInPlace
  // keeps the order); anything else is analysed again on its next question.
  if (!facts->list_order || node->unique_id() < 0 ||
      impl.cached_instructions + comp->instruction_count() > kMaxCachedInstructions)
    return;
  const std::vector<const HloInstruction*>& added = clones;
  // What Lookup would compute over `added` followed by the old instructions: first
  // appearances from `added` come first.
  facts->size = comp->instruction_count();
  facts->fused.insert(facts->fused.begin(), added.begin(), added.end());
  std::vector<const HloInstruction*> reductions;
  for (const HloInstruction* x : added)
    if (IsInputFusibleReduction(x)) reductions.push_back(x);
  facts->reductions.insert(facts->reductions.begin(), reductions.begin(), reductions.end());
  std::vector<HloOpcode> opcodes = DistinctOpcodes(added);
  for (HloOpcode op : facts->opcodes)
    if (std::find(opcodes.begin(), opcodes.end(), op) == opcodes.end()) opcodes.push_back(op);
  facts->opcodes = std::move(opcodes);
  std::vector<const HloInstruction*> representatives = added;
  representatives.insert(representatives.end(), facts->representatives.begin(), facts->representatives.end());
  facts->representatives = Representatives(representatives);
  if (facts->kind != FusionKind::kInput) facts->kind = FusionKindFor(added);
  if (facts->indexed) {
    // The old instructions keep their entries (their users are the same); the clones and the
    // parameters (some gained readers) are computed.
    IndexingState& st = facts->indexing;
    // So do the parameters no clone reads (their users are the same).
    absl::flat_hash_set<const HloInstruction*> read;
    for (const HloInstruction* x : added)
      for (const HloInstruction* op : x->operands())
        if (op->opcode() == O::kParameter) read.insert(op);
    struct Entry {
      IndexingState::Readers readers;
      double evals, index_count;
    };
    absl::flat_hash_map<const HloInstruction*, Entry> kept;
    for (size_t i = st.instructions; i < st.rpost.size(); ++i) {
      if (!read.contains(st.rpost[i]))
        kept[st.rpost[i]] = {std::move(st.readers[i]), st.evals[i], st.index_count[i]};
      st.pos.erase(st.rpost[i]);
    }
    st.rpost.resize(st.instructions);
    st.readers.resize(st.instructions);
    st.evals.resize(st.instructions);
    st.index_count.resize(st.instructions);
    auto append = [&](const HloInstruction* x) {
      st.pos[x] = static_cast<int64_t>(st.rpost.size());
      st.rpost.push_back(x);
    };
    const int64_t from = st.instructions;
    for (auto p = added.rbegin(); p != added.rend(); ++p) append(*p);
    st.instructions = static_cast<int64_t>(st.rpost.size());
    for (const HloInstruction* p : comp->parameters())
      if (p != nullptr) append(p);
    const size_t n = st.rpost.size();
    st.readers.resize(n);
    st.evals.resize(n, 0.0);
    st.index_count.resize(n, 0.0);
    std::vector<bool> done(n, false);
    for (size_t i = st.instructions; i < n; ++i) {
      auto it = kept.find(st.rpost[i]);
      if (it == kept.end()) continue;
      st.readers[i] = std::move(it->second.readers);
      st.evals[i] = it->second.evals;
      st.index_count[i] = it->second.index_count;
      done[i] = true;
    }
    IndexFrom(st, comp, from, &done);
    FillFromIndexing(node, *facts);
  }
  impl.cached_instructions += facts->size;
  impl.by_id[node->unique_id()] = std::move(facts);
}

}  // namespace hloc::fusion
