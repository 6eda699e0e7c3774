// Declarations shared by the evaluator's own files (evaluator.cc, eval_elementwise.cc,
// eval_shape_ops.cc, eval_control.cc, eval_rng.cc). Not part of the public API.
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eval/ops.h"
#include "ir/computation.h"
#include "ir/instruction.h"

namespace hloc {
namespace eval_internal {

// State of the random-number ops for one EvaluateModule/EvaluateComputation call.
struct RngState {
  // rng-get-and-update-state: one 128-bit counter per instruction, as XLA's CPU runtime keeps
  // one per thunk, starting at XLA's initial value 0x7012395.
  absl::flat_hash_map<const HloInstruction*, unsigned __int128> counters;
  // rng (uniform/normal): implementation-defined in XLA; a fixed seed keeps runs repeatable.
  std::mt19937_64 engine{0x5eed5eedULL};
};

// The context the evaluator hands to kernels. Kernels of the structured ops see it as an
// EvalContext; the control-flow kernels also use the extras.
struct InternalContext : EvalContext {
  // Runs a computation, handing it ownership of the arguments (a while body can then update
  // its loop state in place instead of copying it every trip).
  std::function<absl::StatusOr<Literal>(const HloComputation&, std::vector<Literal>&&)> call_owned;
  RngState* rng = nullptr;
};

// --- eval_elementwise.cc ---------------------------------------------------------------
// True for the opcodes EvalElementwise handles: the elementwise unary and binary ops,
// select, clamp, convert, bitcast-convert, reduce-precision, stochastic-convert, compare,
// complex, real, imag, is-finite.
bool IsHandledElementwise(HloOpcode op);
absl::StatusOr<Literal> EvalElementwise(const HloInstruction& inst, Operands ops);
// Converts an array literal to `type` with XLA's convert semantics (used by other kernels).
absl::StatusOr<Literal> ConvertLiteral(const Literal& in, PrimitiveType type);

// --- eval_shape_ops.cc -----------------------------------------------------------------
// iota, broadcast, reshape, transpose, slice, dynamic-slice, dynamic-update-slice,
// concatenate, pad, reverse, bitcast, copy, get-dimension-size, set-dimension-size,
// dynamic-reshape.
bool IsHandledShapeOp(HloOpcode op);
absl::StatusOr<Literal> EvalShapeOp(const HloInstruction& inst, Operands ops);
// select (a pred, scalar or not, picks between two arrays of any type) and bitcast-convert
// (same width: reinterpret each element's bits; different widths: split or merge elements
// along a new most-minor dimension, least significant part first): byte-level, here.
absl::StatusOr<Literal> EvalSelect(const HloInstruction& inst, Operands ops);
absl::StatusOr<Literal> EvalBitcastConvert(const HloInstruction& inst, const Literal& in);
// dynamic-update-slice into `target`, which holds the value of operand 0 (taken over by the
// caller when it was the operand's last use). ops[0] is not read.
absl::Status DynamicUpdateSliceInPlace(const HloInstruction& inst, Literal& target, Operands ops);

// --- eval_control.cc -------------------------------------------------------------------
// call, fusion, while, conditional, async-start/update/done, copy-start/done, custom-call,
// tuple-level identities (opt-barrier, domain, add-dependency), after-all, partition-id,
// replica-id, and the host-transfer ops (which fail with a clear error).
bool IsHandledControl(HloOpcode op);
absl::StatusOr<Literal> EvalControl(const HloInstruction& inst, Operands ops, InternalContext& ctx);
// while with its initial state already owned by the caller.
absl::StatusOr<Literal> EvalWhile(const HloInstruction& inst, Literal state, InternalContext& ctx);
// True for custom-call targets that are identities on one device (their result is operand
// 0, or the tuple of the operands).
bool IsIdentityCustomCall(const HloInstruction& inst);

// --- eval_rng.cc -----------------------------------------------------------------------
// rng, rng-bit-generator, rng-get-and-update-state.
bool IsHandledRng(HloOpcode op);
absl::StatusOr<Literal> EvalRng(const HloInstruction& inst, Operands ops, RngState& state);
// The block functions, exposed for known-answer tests: x is the counter in, the output out.
void ThreeFry2x32(uint32_t key0, uint32_t key1, uint32_t x[2]);
void Philox4x32(uint32_t key0, uint32_t key1, uint32_t x[4]);

// --- shared helpers (eval_shape_ops.cc) -------------------------------------------------
// A zero-filled literal of `shape`, with a checked size.
absl::StatusOr<Literal> NewLiteral(const Shape& shape);
// Reads element 0 of an integer (or pred) literal as int64 (index operands).
absl::StatusOr<int64_t> ReadScalarIndex(const Literal& lit);
// Error unless `lit` is an array (not a tuple/token).
absl::Status ExpectArray(const Literal& lit, const char* what);
// Copies elements between byte buffers: for every index `i` over `dims`,
//   dst[dst_off + sum i[d]*dst_strides[d]] = src[src_off + sum i[d]*src_strides[d]]
// with strides in elements (zero or negative allowed) and `esize` bytes per element.
void StridedCopy(uint8_t* dst, int64_t dst_off, const std::vector<int64_t>& dst_strides,
                 const uint8_t* src, int64_t src_off, const std::vector<int64_t>& src_strides,
                 const std::vector<int64_t>& dims, int esize);

}  // namespace eval_internal
}  // namespace hloc
