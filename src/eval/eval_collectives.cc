// Collectives as on one device in replica groups of one: every participant is this device, so
// all-reduce reduces one copy (the operand itself), all-gather / reduce-scatter / all-to-all /
// collective-broadcast return their operand, collective-permute returns its operand where a
// 0->0 pair exists and zeros otherwise, ragged-all-to-all copies the one send block into the
// output. The async start/done forms carry what XLA's shapes say. Anything that would need a
// second device (replica_count > 1, a group of more than one, a result larger than the
// operand) is an error: that needs the SPMD runtime.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"

namespace hloc {
namespace {

absl::Status MultiDevice(const HloInstruction& inst, const std::string& why) {
  return absl::UnimplementedError(absl::StrCat(std::string(HloOpcodeString(inst.opcode())), " ", inst.name(),
                                               ": multi-device collectives need the SPMD runtime (", why, ")"));
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
absl::StatusOr<Literal> CopyAs(const HloInstruction& inst, const Literal& src, const Shape& shape) {
  if (!src.shape().EqualIgnoringLayout(shape)) {
    if (src.shape().IsArray() && shape.IsArray() && src.element_type() == shape.element_type() &&
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
absl::StatusOr<Literal> Identity(const HloInstruction& inst, Operands ops, const Shape& shape) {
  if (ops.size() == 1 && !shape.IsTuple()) return CopyAs(inst, *ops[0], shape);
  if (!shape.IsTuple() || shape.tuple_shapes().size() != ops.size())
    return evalops::Malformed(inst, absl::StrCat("result ", shape.ToString(false), " should hold one element per operand"));
  std::vector<Literal> parts;
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<Literal> p = CopyAs(inst, *ops[i], shape.tuple_shapes(i));
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

}  // namespace

absl::StatusOr<Literal> EvalCollective(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (evalops::ReplicaCount(ctx) > 1)
    return MultiDevice(inst, absl::StrCat("replica_count=", evalops::ReplicaCount(ctx)));
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
