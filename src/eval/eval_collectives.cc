// Collectives. With a rendezvous (EvaluatePartitioned, eval/spmd_eval.h) they are exact over
// the devices of the run: every device deposits its operands, each computes its own result
// from the deposits of its group, following XLA's operation semantics.
//
// Without one, the evaluator is the only device, in replica groups of one: all-reduce
// reduces one copy (the operand itself), all-gather / reduce-scatter / all-to-all /
// collective-broadcast return their operand, collective-permute returns its operand where a
// 0->0 pair exists and zeros otherwise, ragged-all-to-all copies the one send block into the
// output. The async start/done forms carry what XLA's shapes say. Anything that would need a
// second device (replica_count > 1, a group of more than one, a result larger than the
// operand) is then an error: that needs EvaluatePartitioned.
#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"
#include "eval/spmd_eval.h"

namespace hloc {
namespace {

// What the user can do: declare the devices in the module header; `hloc eval` (and `hloc run`)
// then run one device per replica and partition (EvaluatePartitioned for callers of the library).
// `replicas`: the evaluator options' replica count, when larger than the module's.
absl::Status MultiDevice(const HloInstruction& inst, const std::string& why, int64_t replicas = 1) {
  int64_t partitions = 1;
  if (inst.parent() != nullptr && inst.parent()->parent() != nullptr) {
    replicas = std::max(replicas, inst.parent()->parent()->config().replica_count);
    partitions = inst.parent()->parent()->config().num_partitions;
  }
  const std::string what = absl::StrCat(std::string(HloOpcodeString(inst.opcode())), " ", inst.name(),
                                        ": this collective communicates between devices (", why, ")");
  if (replicas * partitions > 1) {
    return absl::UnimplementedError(absl::StrCat(
        what, ", and the module runs on ", replicas * partitions, " devices (replica_count=", replicas,
        ", num_partitions=", partitions, "), but it is evaluated here as one: hloc eval evaluates every device "
        "(from C++: EvaluatePartitioned, not EvaluateModule)"));
  }
  return absl::UnimplementedError(absl::StrCat(
      what, ", but the module declares one device (replica_count=1, num_partitions=1): set replica_count or "
      "num_partitions in the HloModule header to the number of devices it runs on, and hloc eval evaluates every "
      "device"));
}

// Error unless every replica group has at most one member.
absl::Status CheckSingleDeviceGroups(const HloInstruction& inst) {
  const CollectiveDeviceList& g = inst.attrs().replica_groups;
  for (const auto& group : g.groups)
    if (group.size() > 1) return MultiDevice(inst, absl::StrCat("a replica group has ", group.size(), " members"));
  if (g.iota && !g.iota->dims.empty() && g.iota->dims.back() > 1)
    return MultiDevice(inst, absl::StrCat("replica groups of ", g.iota->dims.back()));
  return absl::OkStatus();
}

// A copy of `src` carrying `shape` (same dimensions and type, the layout of `shape`).
// `one_device`: a bigger result is then a sign of a multi-device program (a different message).
absl::StatusOr<Literal> CopyAs(const HloInstruction& inst, const Literal& src, const Shape& shape,
                               bool one_device = true) {
  if (!src.shape().EqualIgnoringLayout(shape)) {
    if (one_device && src.shape().IsArray() && shape.IsArray() && src.element_type() == shape.element_type() &&
        src.shape().rank() == shape.rank())
      return MultiDevice(inst, absl::StrCat("result ", shape.ToString(false), " differs from operand ",
                                            src.shape().ToString(false)));
    return evalops::Malformed(inst, absl::StrCat("result ", shape.ToString(false), " does not match operand ",
                                                 src.shape().ToString(false)));
  }
  Literal out = src;
  out.mutable_shape() = shape;
  return out;
}

// Result `shape` made of the operands themselves: one array for one operand, a tuple otherwise.
absl::StatusOr<Literal> Identity(const HloInstruction& inst, Operands ops, const Shape& shape,
                                 bool one_device = true) {
  if (ops.size() == 1 && !shape.IsTuple()) return CopyAs(inst, *ops[0], shape, one_device);
  if (!shape.IsTuple() || shape.tuple_shapes().size() != ops.size())
    return evalops::Malformed(inst, absl::StrCat("result ", shape.ToString(false), " should hold one element per operand"));
  std::vector<Literal> parts;
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<Literal> p = CopyAs(inst, *ops[i], shape.tuple_shapes(i), one_device);
    if (!p.ok()) return p.status();
    parts.push_back(std::move(*p));
  }
  Literal out = Literal::MakeTuple(std::move(parts));
  out.mutable_shape() = shape;
  return out;
}

// Zeros of `shape` (arrays and tuples).
absl::StatusOr<Literal> Zeros(const Shape& shape) { return Literal::Create(shape); }

bool HasSelfPair(const HloInstruction& inst) {
  for (const auto& [src, dst] : inst.attrs().source_target_pairs)
    if (src == 0 && dst == 0) return true;
  return false;
}

absl::Status CheckSelfOnlyPairs(const HloInstruction& inst) {
  for (const auto& [src, dst] : inst.attrs().source_target_pairs)
    if (src < 0 || dst < 0) return evalops::Malformed(inst, "negative device id in source_target_pairs");
  return absl::OkStatus();
}

// collective-permute's value: the operands where 0->0 is a pair, else zeros of their shapes.
absl::StatusOr<Literal> Permuted(const HloInstruction& inst, Operands ops, const Shape& shape) {
  if (auto s = CheckSelfOnlyPairs(inst); !s.ok()) return s;
  if (HasSelfPair(inst)) return Identity(inst, ops, shape);
  absl::StatusOr<Literal> check = Identity(inst, ops, shape);  // shape validation only
  if (!check.ok()) return check.status();
  return Zeros(shape);
}

// The element of an async start's tuple that a done extracts.
absl::StatusOr<Literal> DoneOf(const HloInstruction& inst, Operands ops, int64_t index) {
  if (ops.size() != 1) return evalops::Malformed(inst, "expected one operand");
  const Literal& start = *ops[0];
  if (index < 0) return CopyAs(inst, start, inst.shape());
  if (!start.shape().IsTuple() || start.tuple_size() <= index)
    return evalops::Malformed(inst, absl::StrCat("operand ", start.shape().ToString(false),
                                                 " is not a start tuple with element ", index));
  return CopyAs(inst, start.tuple_element(index), inst.shape());
}

// all-gather-start / collective-permute-start: (operand(s), result(s), [context scalars...]).
absl::StatusOr<Literal> StartTuple(const HloInstruction& inst, Operands ops, bool permute) {
  const Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_shapes().size() < 2)
    return evalops::Malformed(inst, "result must be a tuple (operands, results, ...)");
  std::vector<Literal> parts;
  absl::StatusOr<Literal> in = Identity(inst, ops, shape.tuple_shapes(0));
  if (!in.ok()) return in.status();
  absl::StatusOr<Literal> res = permute ? Permuted(inst, ops, shape.tuple_shapes(1))
                                        : Identity(inst, ops, shape.tuple_shapes(1));
  if (!res.ok()) return res.status();
  parts.push_back(std::move(*in));
  parts.push_back(std::move(*res));
  for (size_t i = 2; i < shape.tuple_shapes().size(); ++i) {
    absl::StatusOr<Literal> z = Zeros(shape.tuple_shapes(i));
    if (!z.ok()) return z.status();
    parts.push_back(std::move(*z));
  }
  Literal out = Literal::MakeTuple(std::move(parts));
  out.mutable_shape() = shape;
  return out;
}

// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes) with
// one participant: rows [input_offsets[0], +send_sizes[0]) of the input land at
// output_offsets[0] in (a copy of) the output buffer.
absl::StatusOr<Literal> RaggedAllToAll(const HloInstruction& inst, Operands ops) {
  if (ops.size() != 6) return evalops::Malformed(inst, "expected 6 operands");
  const Literal& input = *ops[0];
  const Literal& output = *ops[1];
  if (!input.shape().IsArray() || !output.shape().IsArray() || input.shape().rank() < 1 ||
      input.shape().rank() != output.shape().rank() || input.element_type() != output.element_type())
    return evalops::Malformed(inst, "input and output must be arrays of one type and rank >= 1");
  for (int i = 2; i < 6; ++i) {
    if (!ops[i]->shape().IsArray() || !IsIntegral(ops[i]->element_type()))
      return evalops::Malformed(inst, "offsets and sizes must be integer arrays");
    if (ops[i]->element_count() != 1)
      return MultiDevice(inst, absl::StrCat("offset/size arrays have ", ops[i]->element_count(), " entries"));
  }
  for (int64_t d = 1; d < input.shape().rank(); ++d)
    if (input.shape().dimensions(d) != output.shape().dimensions(d))
      return evalops::Malformed(inst, "input and output differ beyond dimension 0");
  const int64_t in_off = ops[2]->GetInt(0), send = ops[3]->GetInt(0), out_off = ops[4]->GetInt(0);
  const int64_t in_rows = input.shape().dimensions(0), out_rows = output.shape().dimensions(0);
  if (send < 0 || in_off < 0 || out_off < 0 || in_off > in_rows - send || out_off > out_rows - send)
    return evalops::Malformed(inst, "ragged-all-to-all block out of bounds");
  absl::StatusOr<Literal> out = CopyAs(inst, output, inst.shape());
  if (!out.ok()) return out.status();
  const int64_t row = in_rows ? input.element_count() / in_rows : 0;
  for (int64_t r = 0; r < send; ++r)
    for (int64_t e = 0; e < row; ++e)
      evalops::CopyElement(input, (in_off + r) * row + e, *out, (out_off + r) * row + e);
  return out;
}

// ---- Many devices (a rendezvous is present) ------------------------------------------------

// One device's view of a collective it takes part in: its deposits and its peers'.
struct Meeting {
  const HloInstruction& inst;
  Operands ops;  // this device's operands
  EvalContext& ctx;
  SpmdRendezvous& rv;
  int64_t device = 0;
  std::vector<int64_t> group;  // participants in group order (flattened device ids)
  int64_t index = 0;           // this device's position in `group`

  Operands of(int64_t member) const { return rv.operands(group[member]); }
  int64_t size() const { return static_cast<int64_t>(group.size()); }
};

absl::StatusOr<Meeting> MeetGroup(const HloInstruction& inst, Operands ops, EvalContext& ctx, int64_t device) {
  SpmdRendezvous& rv = *ctx.options->rendezvous;
  absl::StatusOr<std::vector<int64_t>> group =
      CollectiveParticipants(inst, device, rv.replica_count(), rv.num_partitions());
  if (!group.ok()) return group.status();
  auto at = std::find(group->begin(), group->end(), device);
  if (at == group->end()) return evalops::Malformed(inst, absl::StrCat("device ", device, " is not in its own group"));
  Meeting m{inst, ops, ctx, rv, device, std::move(*group), 0};
  m.index = at - m.group.begin();
  return m;
}

// Leaf `k` of a result made of `count` arrays (the shape itself for one non-tuple result).
absl::StatusOr<Shape> LeafShape(const HloInstruction& inst, const Shape& shape, size_t k, size_t count) {
  if (count == 1 && !shape.IsTuple()) return shape;
  if (!shape.IsTuple() || shape.tuple_shapes().size() != count)
    return evalops::Malformed(inst, absl::StrCat("result ", shape.ToString(false), " should hold one element per operand"));
  if (!shape.tuple_shapes(k).IsArray()) return evalops::Malformed(inst, "result elements must be arrays");
  return shape.tuple_shapes(k);
}

// One array for one part of a non-tuple shape, else the tuple of the parts carrying `shape`.
Literal Pack(std::vector<Literal> parts, const Shape& shape) {
  if (parts.size() == 1 && !shape.IsTuple()) return std::move(parts[0]);
  Literal out = Literal::MakeTuple(std::move(parts));
  out.mutable_shape() = shape;
  return out;
}

// Operand `k` of every member: arrays of one type and the same dims (one SPMD program).
absl::Status CheckPeerOperands(const Meeting& m, size_t k) {
  const Literal* mine = m.ops[k];
  if (!mine->shape().IsArray()) return evalops::Malformed(m.inst, "operands must be arrays");
  for (int64_t j = 0; j < m.size(); ++j) {
    Operands theirs = m.of(j);
    if (theirs.size() != m.ops.size() || !theirs[k]->shape().EqualIgnoringLayout(mine->shape()))
      return evalops::Malformed(m.inst, absl::StrCat("device ", m.group[j], " brought other operands than device ", m.device));
  }
  return absl::OkStatus();
}

absl::Status ExpectDims(const HloInstruction& inst, const Shape& result, const Shape& operand,
                        const std::vector<int64_t>& dims) {
  if (result.element_type() != operand.element_type() || result.dimensions() != dims)
    return evalops::Malformed(inst, absl::StrCat("result ", result.ToString(false), " does not fit operand ",
                                                 operand.ToString(false), " and ", dims.size(), "-d dims"));
  return absl::OkStatus();
}

// Copies `count` positions along dimension `d` from `src` (from src_start) to `dst` (at
// dst_start); the two agree on every other dimension. Row-major data makes each outer index
// one contiguous block.
void CopySlab(const Literal& src, int64_t src_start, Literal& dst, int64_t dst_start, int64_t count, int64_t d) {
  const Shape& s = src.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= s.dimensions(i);
  for (int64_t i = d + 1; i < s.rank(); ++i) inner *= s.dimensions(i);
  const int64_t w = ByteWidth(src.element_type());
  const int64_t src_len = s.dimensions(d), dst_len = dst.shape().dimensions(d);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst.untyped_data() + ((o * dst_len + dst_start) * inner) * w,
                src.untyped_data() + ((o * src_len + src_start) * inner) * w, count * inner * w);
}

absl::StatusOr<int64_t> SingleDimension(const HloInstruction& inst, int64_t rank) {
  const std::vector<int64_t>& dims = inst.attrs().dimensions;
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= rank)
    return evalops::Malformed(inst, absl::StrCat("needs dimensions={d} with d < rank ", rank));
  return dims[0];
}

// Operand `k` reduced over the group in group order with to_apply, so every member computes
// the same bits. Recognized reducers run without calling the computation.
absl::StatusOr<Literal> ReduceOverGroup(const Meeting& m, size_t k, const Shape& result) {
  if (auto st = CheckPeerOperands(m, k); !st.ok()) return st;
  const Literal& mine = *m.ops[k];
  if (auto st = ExpectDims(m.inst, result, mine.shape(), mine.shape().dimensions()); !st.ok()) return st;
  const HloComputation* f = m.inst.to_apply();
  if (f == nullptr) return evalops::Malformed(m.inst, "missing to_apply");
  Literal acc = *m.of(0)[k];
  acc.mutable_shape() = result;
  const int64_t n = acc.element_count();
  if (std::optional<evalops::ScalarReducer> fast = evalops::FastReducerFor(f, mine.element_type())) {
    for (int64_t j = 1; j < m.size(); ++j) {
      const Literal& x = *m.of(j)[k];
      for (int64_t i = 0; i < n; ++i) fast->Store(acc, i, fast->Combine(fast->Load(acc, i), fast->Load(x, i)));
    }
    return acc;
  }
  Literal a(Shape(mine.element_type(), {})), b(Shape(mine.element_type(), {}));
  for (int64_t j = 1; j < m.size(); ++j) {
    const Literal& x = *m.of(j)[k];
    for (int64_t i = 0; i < n; ++i) {
      evalops::CopyElement(acc, i, a, 0);
      evalops::CopyElement(x, i, b, 0);
      const Literal* args[] = {&a, &b};
      absl::StatusOr<Literal> r = m.ctx.call(*f, args);
      if (!r.ok()) return r.status();
      if (!r->shape().IsArray() || r->element_type() != acc.element_type() || r->element_count() != 1)
        return evalops::Malformed(m.inst, "to_apply must return one scalar of the operand's type");
      evalops::CopyElement(*r, 0, acc, i);
    }
  }
  return acc;
}

absl::StatusOr<Literal> AllReduceN(const Meeting& m, const Shape& shape) {
  std::vector<Literal> parts;
  for (size_t k = 0; k < m.ops.size(); ++k) {
    absl::StatusOr<Shape> leaf = LeafShape(m.inst, shape, k, m.ops.size());
    if (!leaf.ok()) return leaf.status();
    absl::StatusOr<Literal> r = ReduceOverGroup(m, k, *leaf);
    if (!r.ok()) return r.status();
    parts.push_back(std::move(*r));
  }
  return Pack(std::move(parts), shape);
}

// Every member's operand k, concatenated along dimensions={d} in group order.
absl::StatusOr<Literal> AllGatherN(const Meeting& m, const Shape& shape) {
  std::vector<Literal> parts;
  for (size_t k = 0; k < m.ops.size(); ++k) {
    absl::StatusOr<Shape> leaf = LeafShape(m.inst, shape, k, m.ops.size());
    if (!leaf.ok()) return leaf.status();
    if (auto st = CheckPeerOperands(m, k); !st.ok()) return st;
    const Literal& mine = *m.ops[k];
    absl::StatusOr<int64_t> d = SingleDimension(m.inst, mine.shape().rank());
    if (!d.ok()) return d.status();
    std::vector<int64_t> dims = mine.shape().dimensions();
    const int64_t piece = dims[*d];
    dims[*d] *= m.size();
    if (auto st = ExpectDims(m.inst, *leaf, mine.shape(), dims); !st.ok()) return st;
    absl::StatusOr<Literal> out = Literal::Create(*leaf);
    if (!out.ok()) return out.status();
    for (int64_t j = 0; j < m.size(); ++j) CopySlab(*m.of(j)[k], 0, *out, j * piece, piece, *d);
    parts.push_back(std::move(*out));
  }
  return Pack(std::move(parts), shape);
}

// The all-reduce of operand k, of which this member keeps piece `index` along dimensions={d}.
absl::StatusOr<Literal> ReduceScatterN(const Meeting& m, const Shape& shape) {
  std::vector<Literal> parts;
  for (size_t k = 0; k < m.ops.size(); ++k) {
    absl::StatusOr<Shape> leaf = LeafShape(m.inst, shape, k, m.ops.size());
    if (!leaf.ok()) return leaf.status();
    const Literal& mine = *m.ops[k];
    if (!mine.shape().IsArray()) return evalops::Malformed(m.inst, "operands must be arrays");
    absl::StatusOr<int64_t> d = SingleDimension(m.inst, mine.shape().rank());
    if (!d.ok()) return d.status();
    std::vector<int64_t> dims = mine.shape().dimensions();
    if (dims[*d] % m.size() != 0)
      return evalops::Malformed(m.inst, absl::StrCat("dimension ", *d, " of size ", dims[*d],
                                                     " does not split over ", m.size(), " devices"));
    dims[*d] /= m.size();
    if (auto st = ExpectDims(m.inst, *leaf, mine.shape(), dims); !st.ok()) return st;
    absl::StatusOr<Literal> full = ReduceOverGroup(m, k, Shape(mine.element_type(), mine.shape().dimensions()));
    if (!full.ok()) return full.status();
    absl::StatusOr<Literal> out = Literal::Create(*leaf);
    if (!out.ok()) return out.status();
    CopySlab(*full, m.index * dims[*d], *out, 0, dims[*d], *d);
    parts.push_back(std::move(*out));
  }
  return Pack(std::move(parts), shape);
}

// all-to-all: with dimensions={d} the operand splits along d into one piece per member, piece
// i goes to member i, and the received pieces concatenate along d in group order; without,
// operand i goes to member i and the result is the tuple of what each member sent here.
absl::StatusOr<Literal> AllToAll(const Meeting& m) {
  const Shape& shape = m.inst.shape();
  for (size_t k = 0; k < m.ops.size(); ++k)
    if (auto st = CheckPeerOperands(m, k); !st.ok()) return st;
  if (m.inst.attrs().dimensions.empty()) {
    if (static_cast<int64_t>(m.ops.size()) != m.size())
      return evalops::Malformed(m.inst, absl::StrCat("the tuple form needs one operand per member (", m.size(), "), got ",
                                                     m.ops.size()));
    if (!shape.IsTuple() || static_cast<int64_t>(shape.tuple_shapes().size()) != m.size())
      return evalops::Malformed(m.inst, "the tuple form's result must be a tuple with one element per member");
    std::vector<Literal> parts;
    for (int64_t j = 0; j < m.size(); ++j) {
      absl::StatusOr<Literal> p = CopyAs(m.inst, *m.of(j)[m.index], shape.tuple_shapes(j), /*one_device=*/false);
      if (!p.ok()) return p.status();
      parts.push_back(std::move(*p));
    }
    return Pack(std::move(parts), shape);
  }
  if (m.ops.size() != 1) return evalops::Malformed(m.inst, "with dimensions={d}, all-to-all takes one operand");
  const Literal& mine = *m.ops[0];
  absl::StatusOr<int64_t> d = SingleDimension(m.inst, mine.shape().rank());
  if (!d.ok()) return d.status();
  if (mine.shape().dimensions(*d) % m.size() != 0)
    return evalops::Malformed(m.inst, absl::StrCat("dimension ", *d, " of size ", mine.shape().dimensions(*d),
                                                   " does not split over ", m.size(), " devices"));
  if (!shape.IsArray()) return evalops::Malformed(m.inst, "result must be an array");
  if (auto st = ExpectDims(m.inst, shape, mine.shape(), mine.shape().dimensions()); !st.ok()) return st;
  const int64_t piece = mine.shape().dimensions(*d) / m.size();
  absl::StatusOr<Literal> out = Literal::Create(shape);
  if (!out.ok()) return out.status();
  for (int64_t j = 0; j < m.size(); ++j) CopySlab(*m.of(j)[0], m.index * piece, *out, j * piece, piece, *d);
  return out;
}

// collective-permute: the operands of the device that targets this one, zeros when none does.
absl::StatusOr<Literal> PermuteFrom(const HloInstruction& inst, Operands ops, const Shape& shape, SpmdRendezvous& rv,
                                    int64_t device) {
  absl::StatusOr<std::optional<int64_t>> src = PermuteSource(inst, device, rv.replica_count(), rv.num_partitions());
  if (!src.ok()) return src.status();
  absl::StatusOr<Literal> mine = Identity(inst, ops, shape, false);  // shape validation
  if (!mine.ok()) return mine.status();
  if (!*src) return Zeros(shape);
  return Identity(inst, rv.operands(**src), shape, false);
}

// ragged-all-to-all: sender j's rows [input_offsets[i], +send_sizes[i]) of its input land in
// member i's output at sender j's output_offsets[i] (offsets and sizes: one entry per member).
absl::StatusOr<Literal> RaggedAllToAllN(const Meeting& m) {
  if (m.ops.size() != 6) return evalops::Malformed(m.inst, "expected 6 operands");
  for (size_t k = 0; k < 6; ++k)
    if (auto st = CheckPeerOperands(m, k); !st.ok()) return st;
  const Literal& input = *m.ops[0];
  const Literal& output = *m.ops[1];
  if (input.shape().rank() < 1 || input.shape().rank() != output.shape().rank() ||
      input.element_type() != output.element_type())
    return evalops::Malformed(m.inst, "input and output must be arrays of one type and rank >= 1");
  for (int64_t d = 1; d < input.shape().rank(); ++d)
    if (input.shape().dimensions(d) != output.shape().dimensions(d))
      return evalops::Malformed(m.inst, "input and output differ beyond dimension 0");
  for (int k = 2; k < 6; ++k)
    if (!IsIntegral(m.ops[k]->element_type()) || m.ops[k]->element_count() != m.size())
      return evalops::Malformed(m.inst, absl::StrCat("offsets and sizes must be integer arrays of ", m.size(), " entries"));
  absl::StatusOr<Literal> out = CopyAs(m.inst, output, m.inst.shape(), false);
  if (!out.ok()) return out.status();
  const int64_t in_rows = input.shape().dimensions(0), out_rows = output.shape().dimensions(0);
  for (int64_t j = 0; j < m.size(); ++j) {
    Operands s = m.of(j);
    const int64_t in_off = s[2]->GetInt(m.index), n = s[3]->GetInt(m.index), out_off = s[4]->GetInt(m.index);
    if (n < 0 || in_off < 0 || out_off < 0 || in_off > in_rows - n || out_off > out_rows - n)
      return evalops::Malformed(m.inst, absl::StrCat("the block device ", m.group[j], " sends is out of bounds"));
    CopySlab(*s[0], in_off, *out, out_off, n, 0);
  }
  return out;
}

// (operands, results, context scalars...) of all-gather-start / collective-permute-start.
absl::StatusOr<Literal> StartOf(const HloInstruction& inst, Operands ops, absl::StatusOr<Literal> result) {
  if (!result.ok()) return result.status();
  const Shape& shape = inst.shape();
  absl::StatusOr<Literal> in = Identity(inst, ops, shape.tuple_shapes(0), false);
  if (!in.ok()) return in.status();
  std::vector<Literal> parts;
  parts.push_back(std::move(*in));
  parts.push_back(std::move(*result));
  for (size_t i = 2; i < shape.tuple_shapes().size(); ++i) {
    absl::StatusOr<Literal> z = Zeros(shape.tuple_shapes(i));
    if (!z.ok()) return z.status();
    parts.push_back(std::move(*z));
  }
  return Pack(std::move(parts), shape);
}

bool IsStartTuple(const Shape& shape) { return shape.IsTuple() && shape.tuple_shapes().size() >= 2; }

// This device's result of a communicating collective, from the deposits of its group.
absl::StatusOr<Literal> ComputeAcrossDevices(const HloInstruction& inst, Operands ops, EvalContext& ctx,
                                             int64_t device) {
  using O = HloOpcode;
  const O op = inst.opcode();
  if (ops.empty()) return evalops::Malformed(inst, "expected operands");
  if ((op == O::kAllGatherStart || op == O::kCollectivePermuteStart) && !IsStartTuple(inst.shape()))
    return evalops::Malformed(inst, "result must be a tuple (operands, results, ...)");
  if ((op == O::kCollectivePermute || op == O::kCollectivePermuteStart) && ops.size() == 4)
    return evalops::Malformed(inst, "the in-place (4-operand) collective-permute form is not supported");
  if (op == O::kCollectivePermute) return PermuteFrom(inst, ops, inst.shape(), *ctx.options->rendezvous, device);
  if (op == O::kCollectivePermuteStart)
    return StartOf(inst, ops, PermuteFrom(inst, ops, inst.shape().tuple_shapes(1), *ctx.options->rendezvous, device));
  absl::StatusOr<Meeting> m = MeetGroup(inst, ops, ctx, device);
  if (!m.ok()) return m.status();
  switch (op) {
    case O::kAllReduce: case O::kAllReduceStart: return AllReduceN(*m, inst.shape());
    case O::kAllGather: return AllGatherN(*m, inst.shape());
    case O::kAllGatherStart: return StartOf(inst, ops, AllGatherN(*m, inst.shape().tuple_shapes(1)));
    case O::kReduceScatter: return ReduceScatterN(*m, inst.shape());
    case O::kAllToAll: return AllToAll(*m);
    case O::kRaggedAllToAll: return RaggedAllToAllN(*m);
    case O::kCollectiveBroadcast: return Identity(inst, m->of(0), inst.shape(), false);  // the group's first member is the root
    default: return evalops::Malformed(inst, "not a collective");
  }
}

// Meets the other devices: deposit, compute this device's result, wait until every device has
// read the deposits. A failure to compute still waits at the second barrier so that the
// others never read a deposit that is gone.
absl::StatusOr<Literal> AcrossDevices(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  switch (inst.opcode()) {  // the done halves only unpack what their start computed
    case HloOpcode::kAllReduceDone: return DoneOf(inst, ops, -1);
    case HloOpcode::kAllGatherDone: case HloOpcode::kCollectivePermuteDone: return DoneOf(inst, ops, 1);
    default: break;
  }
  SpmdRendezvous& rv = *ctx.options->rendezvous;
  const int64_t device = ctx.options->replica_id * rv.num_partitions() + ctx.options->partition_id;
  if (absl::Status st = rv.Arrive(device, inst, ops); !st.ok()) return st;
  absl::StatusOr<Literal> result = ComputeAcrossDevices(inst, ops, ctx, device);
  absl::Status left = rv.Leave(device, inst);
  if (!result.ok()) return result.status();
  if (!left.ok()) return left;
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalCollective(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ctx.options != nullptr && ctx.options->rendezvous != nullptr) return AcrossDevices(inst, ops, ctx);
  if (evalops::ReplicaCount(ctx) > 1)
    return MultiDevice(inst, absl::StrCat("replica_count=", evalops::ReplicaCount(ctx)), evalops::ReplicaCount(ctx));
  if (auto s = CheckSingleDeviceGroups(inst); !s.ok()) return s;
  switch (inst.opcode()) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
      if (ops.empty()) return evalops::Malformed(inst, "expected operands");
      return Identity(inst, ops, inst.shape());
    case HloOpcode::kAllReduceDone:
      return DoneOf(inst, ops, -1);
    case HloOpcode::kAllGatherStart:
      return StartTuple(inst, ops, /*permute=*/false);
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
      return DoneOf(inst, ops, 1);
    case HloOpcode::kCollectivePermute:
      if (ops.size() == 4)
        return evalops::Malformed(inst, "the in-place (4-operand) collective-permute form is not supported");
      if (ops.empty()) return evalops::Malformed(inst, "expected operands");
      return Permuted(inst, ops, inst.shape());
    case HloOpcode::kCollectivePermuteStart:
      if (ops.size() == 4)
        return evalops::Malformed(inst, "the in-place (4-operand) collective-permute form is not supported");
      if (ops.empty()) return evalops::Malformed(inst, "expected operands");
      return StartTuple(inst, ops, /*permute=*/true);
    case HloOpcode::kRaggedAllToAll:
      return RaggedAllToAll(inst, ops);
    default:
      return evalops::Malformed(inst, "not a collective");
  }
}

}  // namespace hloc
