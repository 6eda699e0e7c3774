// The logical-buffer model of a computation and its heap-simulated peak for a given order.
#include "schedule/buffer_model.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "schedule/heap_simulator.h"
#include "schedule/hlo_scheduling.h"

namespace hloc {

int64_t ShapeSizeBytes(const Shape& shape) {
  if (shape.IsTuple()) return 8 * static_cast<int64_t>(shape.tuple_shapes().size());
  if (shape.IsToken()) return 0;
  if (shape.IsOpaque()) return 8;
  int64_t n = 1;
  for (int64_t d : shape.dimensions()) {
    if (d <= 0) return 0;
    // Saturate rather than overflow on absurd shapes: the size only ranks schedules.
    if (n > (int64_t{1} << 62) / d) return int64_t{1} << 62;
    n *= d;
  }
  const int64_t width = std::max(1, ByteWidth(shape.element_type()));
  if (n > (int64_t{1} << 62) / width) return int64_t{1} << 62;
  return n * width;
}

namespace schedule_internal {
namespace {

using O = HloOpcode;

// Leaves of a shape in flattened order (an empty tuple has none).
int64_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& s : shape.tuple_shapes()) n += LeafCount(s);
  return n;
}

void CollectLeafSizes(const Shape& shape, std::vector<int64_t>& out) {
  if (!shape.IsTuple()) {
    out.push_back(ShapeSizeBytes(shape));
    return;
  }
  for (const Shape& s : shape.tuple_shapes()) CollectLeafSizes(s, out);
}

bool PassesOperandThrough(O op) {
  switch (op) {
    case O::kBitcast: case O::kGetTupleElement: case O::kTuple: case O::kOptimizationBarrier:
    case O::kAddDependency: case O::kDomain:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool IsSequentialCaller(HloOpcode op) {
  return op == O::kWhile || op == O::kConditional || op == O::kCall || op == O::kAsyncStart ||
         op == O::kAsyncUpdate || op == O::kAsyncDone;
}

absl::StatusOr<LogicalBuffers> ComputeLogicalBuffers(const HloComputation& computation) {
  LogicalBuffers b;
  auto define_leaves = [&](const HloInstruction* inst, bool fixed) {
    std::vector<int64_t> sizes;
    CollectLeafSizes(inst->shape(), sizes);
    std::vector<int64_t>& defined = b.defined[inst];
    std::vector<int64_t>& points = b.points_to[inst];
    for (int64_t s : sizes) {
      const int64_t id = b.num_buffers();
      b.size.push_back(s);
      b.definer.push_back(inst);
      b.fixed.push_back(fixed);
      b.is_parameter.push_back(inst->opcode() == O::kParameter);
      b.live_out.push_back(false);
      defined.push_back(id);
      points.push_back(id);
    }
  };
  // Operands first, so pass-through instructions find their operands' buffers.
  for (const HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    for (const HloInstruction* op : inst->operands()) {
      if (!b.points_to.contains(op))
        return absl::InvalidArgumentError(absl::StrCat(computation.name(), ": operand ", op->name(), " of ",
                                                       inst->name(), " is not in the computation"));
    }
    const O op = inst->opcode();
    if (op == O::kParameter || op == O::kConstant) {
      define_leaves(inst, /*fixed=*/true);
    } else if (PassesOperandThrough(op) && inst->operand_count() > 0) {
      std::vector<int64_t> points;
      if (op == O::kTuple) {
        for (const HloInstruction* operand : inst->operands()) {
          const auto& p = b.points_to.at(operand);
          points.insert(points.end(), p.begin(), p.end());
        }
      } else if (op == O::kGetTupleElement) {
        const HloInstruction* tuple = inst->operand(0);
        const int64_t index = inst->attrs().tuple_index;
        if (!tuple->shape().IsTuple() || index < 0 || index >= (int64_t)tuple->shape().tuple_shapes().size())
          return absl::InvalidArgumentError(absl::StrCat(inst->name(), ": tuple index ", index, " out of range"));
        int64_t first = 0;
        for (int64_t i = 0; i < index; ++i) first += LeafCount(tuple->shape().tuple_shapes(i));
        const int64_t count = LeafCount(tuple->shape().tuple_shapes(index));
        const auto& p = b.points_to.at(tuple);
        if (first + count > (int64_t)p.size())
          return absl::InvalidArgumentError(absl::StrCat(inst->name(), ": operand shape and leaves disagree"));
        points.assign(p.begin() + first, p.begin() + first + count);
      } else {
        points = b.points_to.at(inst->operand(0));  // bitcast, add-dependency, domain, opt-barrier
      }
      if ((int64_t)points.size() != LeafCount(inst->shape())) {
        // A shape that does not match its operand's (e.g. a bitcast between tuple shapes): give
        // it buffers of its own rather than guess.
        define_leaves(inst, false);
      } else {
        b.points_to[inst] = std::move(points);
        b.defined[inst];  // defines nothing
      }
    } else {
      define_leaves(inst, false);
    }
    absl::flat_hash_set<int64_t> seen;
    std::vector<int64_t>& uses = b.uses[inst];
    for (const HloInstruction* operand : inst->operands())
      for (int64_t id : b.points_to.at(operand))
        if (seen.insert(id).second) uses.push_back(id);
  }
  if (const HloInstruction* root = computation.root_instruction(); root && b.points_to.contains(root))
    for (int64_t id : b.points_to.at(root)) b.live_out[id] = true;
  return b;
}

int64_t SubcomputationBytes(const HloInstruction& inst, const MemoryByComputation& memory, int64_t bytes_defined) {
  int64_t most = 0;
  for (const HloComputation* c : inst.called_computations()) {
    auto it = memory.find(c);
    if (it != memory.end()) most = std::max(most, it->second);
  }
  if (most == 0) return 0;
  const O op = inst.opcode();
  if (op == O::kWhile || op == O::kCall || op == O::kConditional) return std::max<int64_t>(0, most - bytes_defined);
  return most;
}

absl::StatusOr<int64_t> PeakOfSequence(const std::vector<HloInstruction*>& sequence, const LogicalBuffers& buffers,
                                       const MemoryByComputation& memory, bool include_parameters) {
  std::vector<HeapEvent> events;
  std::vector<int64_t> remaining(buffers.num_buffers(), 0);
  for (const HloInstruction* inst : sequence) {
    auto it = buffers.uses.find(inst);
    if (it == buffers.uses.end())
      return absl::InvalidArgumentError(absl::StrCat("instruction ", inst->name(), " is not in the buffer model"));
    for (int64_t id : it->second) ++remaining[id];
  }
  auto alloc = [&](int64_t id, int64_t size) { events.push_back({HeapEvent::kAlloc, id, size, -1}); };
  auto free = [&](int64_t id) { events.push_back({HeapEvent::kFree, id, 0, -1}); };
  for (int64_t id = 0; id < buffers.num_buffers(); ++id)
    if (buffers.fixed[id] && (include_parameters || !buffers.is_parameter[id])) alloc(id, buffers.size[id]);
  int64_t synthetic = buffers.num_buffers();
  for (const HloInstruction* inst : sequence) {
    int64_t defined_bytes = 0;
    const std::vector<int64_t>& defined = buffers.defined.at(inst);
    for (int64_t id : defined) {
      if (buffers.fixed[id]) continue;
      alloc(id, buffers.size[id]);
      defined_bytes += buffers.size[id];
    }
    // What a called computation needs lives only while this instruction runs.
    if (int64_t extra = SubcomputationBytes(*inst, memory, defined_bytes); extra > 0) {
      alloc(synthetic, extra);
      free(synthetic++);
    }
    for (int64_t id : buffers.uses.at(inst))
      if (--remaining[id] == 0 && !buffers.live_out[id] && !buffers.fixed[id]) free(id);
    for (int64_t id : defined)
      if (!buffers.fixed[id] && remaining[id] == 0 && !buffers.live_out[id]) free(id);
  }
  HeapSimulatorOptions options;
  options.compute_offsets = false;
  absl::StatusOr<HeapSimulatorResult> result = SimulateHeap(events, options);
  if (!result.ok()) return result.status();
  return result->peak_bytes;
}

absl::StatusOr<std::vector<int64_t>> LiveBytesPerStep(const std::vector<HloInstruction*>& sequence,
                                                      const LogicalBuffers& buffers, const MemoryByComputation& memory,
                                                      bool include_parameters) {
  std::vector<int64_t> remaining(buffers.num_buffers(), 0);
  for (const HloInstruction* inst : sequence) {
    auto it = buffers.uses.find(inst);
    if (it == buffers.uses.end())
      return absl::InvalidArgumentError(absl::StrCat("instruction ", inst->name(), " is not in the buffer model"));
    for (int64_t id : it->second) ++remaining[id];
  }
  int64_t live = 0;
  for (int64_t id = 0; id < buffers.num_buffers(); ++id)
    if (buffers.fixed[id] && (include_parameters || !buffers.is_parameter[id])) live += buffers.size[id];
  std::vector<int64_t> out;
  out.reserve(sequence.size());
  for (const HloInstruction* inst : sequence) {
    int64_t defined_bytes = 0;
    for (int64_t id : buffers.defined.at(inst))
      if (!buffers.fixed[id]) defined_bytes += buffers.size[id];
    live += defined_bytes;
    out.push_back(live + SubcomputationBytes(*inst, memory, defined_bytes));
    for (int64_t id : buffers.uses.at(inst))
      if (--remaining[id] == 0 && !buffers.live_out[id] && !buffers.fixed[id]) live -= buffers.size[id];
    for (int64_t id : buffers.defined.at(inst))
      if (!buffers.fixed[id] && remaining[id] == 0 && !buffers.live_out[id]) live -= buffers.size[id];
  }
  return out;
}

absl::Status CheckSequence(const HloComputation& computation, const std::vector<HloInstruction*>& sequence) {
  if (sequence.size() != computation.instructions().size())
    return absl::InternalError(absl::StrCat("schedule of ", computation.name(), " has ", sequence.size(),
                                            " instructions; the computation has ",
                                            computation.instructions().size()));
  absl::flat_hash_map<const HloInstruction*, size_t> position;
  for (size_t i = 0; i < sequence.size(); ++i)
    if (sequence[i]->parent() != &computation || !position.emplace(sequence[i], i).second)
      return absl::InternalError(absl::StrCat("schedule of ", computation.name(), " repeats or misplaces ",
                                              sequence[i]->name()));
  for (size_t i = 0; i < sequence.size(); ++i) {
    const HloInstruction* inst = sequence[i];
    auto check = [&](const HloInstruction* dep) -> absl::Status {
      auto it = position.find(dep);
      if (it == position.end() || it->second > i)
        return absl::InternalError(absl::StrCat("schedule of ", computation.name(), " runs ", inst->name(),
                                                " before its dependency ", dep->name()));
      return absl::OkStatus();
    };
    for (const HloInstruction* op : inst->operands())
      if (absl::Status s = check(op); !s.ok()) return s;
    for (const HloInstruction* pred : inst->control_predecessors())
      if (absl::Status s = check(pred); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<HloComputation*> SequentialComputations(const HloModule& module) {
  absl::flat_hash_set<const HloComputation*> sequential, embedded;
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions())
      for (const HloComputation* callee : inst->called_computations()) {
        if (callee == nullptr) continue;
        (IsSequentialCaller(inst->opcode()) ? sequential : embedded).insert(callee);
      }
  std::vector<HloComputation*> out;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    const bool uncalled = !sequential.contains(c) && !embedded.contains(c);
    if (c == module.entry_computation() || sequential.contains(c) || uncalled) out.push_back(c);
  }
  return out;
}

absl::StatusOr<MemoryByComputation> CurrentMemoryByComputation(const HloModule& module) {
  MemoryByComputation memory;
  for (HloComputation* c : SequentialComputations(module)) {
    if (c == module.entry_computation()) continue;
    absl::StatusOr<LogicalBuffers> buffers = ComputeLogicalBuffers(*c);
    if (!buffers.ok()) return buffers.status();
    std::vector<HloInstruction*> order;
    for (const auto& inst : c->instructions()) order.push_back(inst.get());
    absl::StatusOr<int64_t> peak = PeakOfSequence(order, *buffers, memory, /*include_parameters=*/false);
    if (!peak.ok()) return peak.status();
    memory[c] = *peak;
  }
  return memory;
}

std::string HumanBytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, "B");
  if (bytes < 1024 * 1024) return absl::StrFormat("%.2fKiB", bytes / 1024.0);
  if (bytes < int64_t{1024} * 1024 * 1024) return absl::StrFormat("%.2fMiB", bytes / (1024.0 * 1024));
  return absl::StrFormat("%.2fGiB", bytes / (1024.0 * 1024 * 1024));
}

}  // namespace schedule_internal
}  // namespace hloc
