// Helpers shared by hloc's passes, after the HloComputation / HloInstruction methods XLA's
// passes lean on: side-effect rules, safe removal and replacement of instructions, module-wide
// unique names, cloning of instructions and computations, structural equality, and the call
// graph's caller lists.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/module.h"

namespace hloc {

// --- Side effects ----------------------------------------------------------------------------
// XLA's HloInstruction::HasSideEffectNoRecurse: send/recv, infeed/outfeed, rng, the async
// collective starts/dones, collectives with constrain_layout, collectives with a channel id
// unless the module is SPMD partitioned (hloc takes num_partitions > 1 for XLA's
// use_spmd_partitioning, which the text form does not carry),
// and custom-calls marked custom_call_has_side_effect=true.
bool HasSideEffectNoRecurse(const HloInstruction& inst);
// Also true when a called computation (transitively) holds such an instruction. Iterative.
bool HasSideEffect(const HloInstruction& inst);
bool ComputationHasSideEffect(const HloComputation& computation);

// --- Structure ---------------------------------------------------------------------------------
// No users and not the root (XLA's IsDead).
inline bool IsDead(const HloInstruction& inst) { return inst.user_count() == 0 && !inst.IsRoot(); }
inline bool HasControlDependencies(const HloInstruction& inst) {
  return !inst.control_predecessors().empty() || !inst.control_successors().empty();
}
// XLA's HloComputation::IsSafelyRemovable: no control edges (unless ignored) and not a
// parameter (parameters are renumbered by their own code paths, e.g. DCE of fusion parameters).
bool IsSafelyRemovable(const HloInstruction& inst, bool ignore_control_dependencies = false);

// --- Removal and replacement --------------------------------------------------------------------
// HloComputation::RemoveInstruction, plus what the IR leaves to its callers: a removed fusion's
// fused computation stops naming it (it would keep a dangling pointer); that computation stays
// in the module, uncalled, until dce removes it. Every removal below goes through this.
absl::Status RemoveInstruction(HloInstruction* inst);
// Removes `inst` (dead, safely removable) and then every operand that became dead through it,
// transitively, except side-effecting ones, parameters and instructions with control edges
// (XLA's RemoveInstructionAndUnusedOperands). With ignore_control_dependencies, control edges
// of removed instructions are relayed from their predecessors to their successors. The
// removed instructions are destroyed; when `removed` is given it receives their (now
// dangling) addresses, for callers that hold lists of instructions.
absl::Status RemoveInstructionAndUnusedOperands(HloInstruction* inst, bool ignore_control_dependencies = false,
                                                std::vector<const HloInstruction*>* removed = nullptr);

struct ReplaceOptions {
  // Refuse (return false) when both carry shardings that differ.
  bool preserve_sharding = false;
  // Move old's control edges to the replacement; otherwise refuse when old has any.
  bool relay_control_dependency = false;
  // Also remove operands of old that become dead.
  bool remove_unused_operands = true;
};
// XLA's HloComputation::ReplaceInstruction: the replacement inherits old's metadata when it has
// no op_name, old's frontend attributes when it has none, and old's sharding when it has none;
// every use of old (and the root) moves to it; old is removed. Returns false when refused.
absl::StatusOr<bool> ReplaceInstruction(HloInstruction* old_inst, HloInstruction* replacement,
                                        const ReplaceOptions& options = {});

// --- Names ------------------------------------------------------------------------------------
// XLA's NameUniquer: a name is kept when unused; otherwise its numeric ".N" suffix is replaced
// by the next free number for its base ("add.3" -> "add.4", "x.clone" -> "x.clone.1").
class NameUniquer {
 public:
  NameUniquer() = default;
  // Records a name as taken (its base and number, when it has one).
  void Register(const std::string& name);
  std::string GetUniqueName(const std::string& hint);

 private:
  // The numbers taken for one base: a bit each below kDense (most are handed out in order, and
  // fusion passes ask for a name per parameter they renumber), a set for the rest.
  struct Ids {
    static constexpr int64_t kDense = int64_t{1} << 20;
    std::vector<uint64_t> dense;
    absl::flat_hash_set<int64_t> sparse;
    int64_t next = 1;
    bool Contains(int64_t n) const;
    bool Insert(int64_t n);  // false when already taken
  };
  absl::flat_hash_map<std::string, Ids> bases_;
};
// Uniquers seeded with every instruction name / computation name of `module`.
NameUniquer InstructionNameUniquer(const HloModule& module);
NameUniquer ComputationNameUniquer(const HloModule& module);

// --- Cloning ------------------------------------------------------------------------------------
// A copy of `inst` (opcode, shape, name, attributes, inline-gte flag, called computations) with
// `operands` as its operands. No parent, no control edges, no unique id yet.
std::unique_ptr<HloInstruction> CloneInstruction(const HloInstruction& inst, absl::Span<HloInstruction* const> operands);

// Adds `inst` to `computation` just before `before` (appended when null), renamed through
// `names` so it is unique in the module.
HloInstruction* AddInstructionWithUniqueName(HloComputation& computation, std::unique_ptr<HloInstruction> inst,
                                             NameUniquer& names, const HloInstruction* before = nullptr);

// Names for everything a clone adds to a module.
struct CloneNames {
  NameUniquer instructions;
  NameUniquer computations;
  static CloneNames ForModule(const HloModule& module) {
    return {InstructionNameUniquer(module), ComputationNameUniquer(module)};
  }
};

// Computations a clone of `inst` must not share with it: a fusion's fused computation and an
// async op's wrapped computation each belong to exactly one caller. Clones them (their names
// suffixed "clone") and points `clone` at the copies; `cloned` maps originals to copies so an
// async-update/done follows the copy its async-start made.
absl::Status CloneOwnedCallees(const HloInstruction& inst, HloInstruction& clone, HloModule& module, CloneNames& names,
                               absl::flat_hash_map<const HloComputation*, HloComputation*>& cloned);

// Deep copy of `computation` added to `module`: instruction and computation names get the
// suffix (XLA's Clone("clone")), control edges are kept, fused and async-wrapped computations
// are copied too, other callees are shared. Returns the copy.
absl::StatusOr<HloComputation*> CloneComputation(const HloComputation& computation, HloModule& module,
                                                 CloneNames& names, const std::string& suffix = "clone");

// --- Equality -------------------------------------------------------------------------------------
// XLA's HloInstruction::Identical minus the operand and called-computation checks, which the
// callbacks decide: same opcode, shape (with layout when layout_sensitive), operand count,
// backend config and opcode-specific attributes; metadata, frontend attributes, names and
// original values are ignored, shardings only count when sharding_sensitive and both have one.
// after-all and add-dependency are never identical to another instruction.
struct IdenticalOptions {
  bool layout_sensitive = true;
  bool sharding_sensitive = false;
  // For binary commutative opcodes, (a, b) also matches (b, a).
  bool ignore_commutative_operand_order = false;
};
bool InstructionsIdentical(const HloInstruction& a, const HloInstruction& b,
                           const std::function<bool(const HloInstruction*, const HloInstruction*)>& eq_operands,
                           const std::function<bool(const HloComputation*, const HloComputation*)>& eq_computations,
                           const IdenticalOptions& options = {});
// XLA's HloComputation::operator== / Equal: the graphs from the two roots are identical
// instruction by instruction (parameters by number), called computations compared the same way.
bool ComputationsEqual(const HloComputation& a, const HloComputation& b, bool layout_sensitive = true);
// XLA's HloOpcodeIsBinaryCommutative.
bool IsBinaryCommutative(HloOpcode op);

// --- Call graph --------------------------------------------------------------------------------
// XLA's CallContext of an opcode: control flow (call, while, conditional, async ops: the callee
// runs as a sequential computation) or embedded (reduce, map, sort, fusion, ...: the callee is
// applied to elements).
enum class CallContext { kNone, kControlFlow, kEmbedded, kBoth };
CallContext GetInstructionCallContext(HloOpcode op);
// Every instruction that calls each computation, in module order then instruction order.
absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>> ComputeCallers(const HloModule& module);
// Computations called (directly) by async-start/update/done.
absl::flat_hash_set<const HloComputation*> AsyncComputations(const HloModule& module);

}  // namespace hloc
