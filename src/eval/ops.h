// Kernels of the reference evaluator for the structured ops. Each takes the instruction, its
// evaluated operands and a context to call computations (reducers, comparators, ...).
#pragma once
#include <functional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "eval/evaluator.h"
#include "ir/instruction.h"

namespace hloc {

struct EvalContext {
  const EvaluatorOptions* options = nullptr;
  // Runs a called computation on argument literals (used for reducers, comparators,
  // scatter combiners, ...).
  std::function<absl::StatusOr<Literal>(const HloComputation&, absl::Span<const Literal* const>)> call;
};

using Operands = absl::Span<const Literal* const>;

absl::StatusOr<Literal> EvalDot(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalRaggedDot(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalConvolution(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalReduce(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalReduceWindow(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalGather(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalScatter(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalSort(const HloInstruction& inst, Operands ops, EvalContext& ctx);
// XLA:CPU's custom_call_target="TopK" (values, s32 indices of the k first elements of each
// row along the last dim under the called comparator; k from the result shape): a stable sort
// of (x, iota) by the comparator, cut to k.
absl::StatusOr<Literal> EvalXlaTopKCall(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalTopK(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalScan(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalMap(const HloInstruction& inst, Operands ops, EvalContext& ctx);
// all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute, collective-broadcast,
// ragged-all-to-all and their async start/done forms, as on one device.
absl::StatusOr<Literal> EvalCollective(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalCholesky(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalTriangularSolve(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalFft(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalBatchNorm(const HloInstruction& inst, Operands ops, EvalContext& ctx);

}  // namespace hloc
