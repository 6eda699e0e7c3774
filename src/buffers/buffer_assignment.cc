// BufferAssignment (XLA's buffer_assignment.cc, simplified): HloAliasAnalysis buffers become
// slices of allocations. Live ranges come from one flattened timeline of the schedule (each
// while/conditional/call's computations inlined at the instruction, before it), as XLA's
// HloLiveRange does; temps are packed into one preallocated-temp allocation by the heap
// simulator (global decreasing-size best fit), so temps whose ranges do not overlap share bytes.
#include "buffers/buffer_assignment.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "absl/container/flat_hash_set.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "buffers/hlo_alias_analysis.h"
#include "schedule/heap_simulator.h"

namespace hloc {

namespace {

constexpr int64_t kLiveOut = std::numeric_limits<int64_t>::max();

bool RunsCalleesInline(HloOpcode op) {
  return op == HloOpcode::kWhile || op == HloOpcode::kConditional || op == HloOpcode::kCall ||
         op == HloOpcode::kAsyncStart;
}

bool ReadsOperandsUntilDone(HloOpcode op) {
  return op == HloOpcode::kAllReduceStart || op == HloOpcode::kAllGatherStart ||
         op == HloOpcode::kCollectivePermuteStart;
}

}  // namespace

// Builds a BufferAssignment; a friend of BufferAssignment and BufferAllocation.
class BufferAssigner {
 public:
  BufferAssigner(const HloModule& module, const BufferAssignmentOptions& options)
      : module_(module), options_(options) {}

  absl::StatusOr<std::unique_ptr<BufferAssignment>> Run() {
    if (!module_.is_scheduled())
      return absl::FailedPreconditionError(
          absl::StrCat("module ", module_.name(), " is not scheduled; buffer assignment needs a schedule"));
    absl::StatusOr<std::unique_ptr<HloAliasAnalysis>> alias = HloAliasAnalysis::Run(module_);
    if (!alias.ok()) return alias.status();
    alias_ = std::move(*alias);
    if (absl::Status s = BuildTimeline(module_.entry_computation(), 0); !s.ok()) return s;
    ComputeValueRanges();
    result_ = std::make_unique<BufferAssignment>();
    result_->module_ = &module_;
    result_->timeline_length_ = next_time_;
    if (absl::Status s = Assign(); !s.ok()) return s;
    FillSlices();
    return std::move(result_);
  }

 private:
  // Flattened schedule: callees of while/conditional/call run at their caller's place, before it.
  absl::Status BuildTimeline(const HloComputation* comp, int depth) {
    if (depth > 256) return absl::InvalidArgumentError("computations nest more than 256 deep");
    if (!visited_.insert(comp).second)
      return absl::InvalidArgumentError(absl::StrCat("computation ", comp->name(), " runs from two call sites"));
    for (const auto& inst : comp->instructions()) {
      if (RunsCalleesInline(inst->opcode())) {
        for (const HloComputation* callee : inst->called_computations()) {
          if (visited_.contains(callee)) continue;  // a conditional naming one branch twice
          if (absl::Status s = BuildTimeline(callee, depth + 1); !s.ok()) return s;
        }
      }
      time_[inst.get()] = next_time_++;
    }
    // The schedule must put operands first, or live ranges would be meaningless.
    for (const auto& inst : comp->instructions())
      for (const HloInstruction* op : inst->operands())
        if (op->parent() == comp && time_[op] >= time_[inst.get()])
          return absl::InvalidArgumentError(absl::StrCat("schedule of ", comp->name(), " runs ", inst->name(),
                                                         " before its operand ", op->name()));
    return absl::OkStatus();
  }

  void ComputeValueRanges() {
    const HloDataflowAnalysis& df = alias_->dataflow();
    const HloInstruction* entry_root = module_.entry_computation()->root_instruction();
    ranges_.assign(df.values().size(), {0, 0});
    for (const auto& v : df.values()) {
      auto t = time_.find(v->defining_instruction());
      if (t == time_.end()) continue;  // embedded (thread-local): no timeline
      int64_t start = t->second, end = start;
      for (const HloPosition& p : v->positions()) {
        const HloInstruction* inst = p.instruction;
        auto it = time_.find(inst);
        if (it == time_.end()) continue;
        end = std::max(end, it->second);
        for (const HloInstruction* u : inst->users()) {
          auto ut = time_.find(u);
          if (ut != time_.end()) end = std::max(end, ut->second);
          // An async collective reads its operands until its done: the GPU runs it on a stream
          // of its own while the instructions between start and done run.
          if (ReadsOperandsUntilDone(u->opcode()))
            for (const HloInstruction* done : u->users())
              if (auto dt = time_.find(done); dt != time_.end()) end = std::max(end, dt->second);
        }
        if (inst == entry_root) end = kLiveOut;
        if (inst->IsRoot() && inst->parent() != module_.entry_computation()) {
          const HloInstruction* caller = df.caller(inst->parent());
          if (caller != nullptr && time_.contains(caller)) end = std::max(end, time_[caller]);
        }
      }
      ranges_[v->id()] = {start, end};
    }
  }

  absl::Status Assign() {
    const HloDataflowAnalysis& df = alias_->dataflow();
    const HloComputation* entry = module_.entry_computation();
    enum Kind { kParameter, kConstant, kOutput, kThreadLocal, kTemp };
    struct Info {
      std::vector<const HloBuffer*> buffers;  // one, or several colocated by operand sharing
      Kind kind;
      int64_t size;
      const HloValue* param_value = nullptr;  // kParameter: the parameter's value
      const HloValue* constant_value = nullptr;
      bool live_out = false;
      int64_t start = kLiveOut, end = 0;
      const HloValue* first = nullptr;  // the value defined earliest
      int64_t merged_into = -1;         // colocated into another buffer's info
    };
    std::vector<Info> infos;
    auto donated = [&](const HloValue* v) {
      for (const InputOutputAlias& a : module_.config().input_output_alias)
        if (a.parameter_number == v->defining_instruction()->attrs().parameter_number &&
            a.parameter_index == v->defining_index())
          return true;
      return false;
    };
    for (const HloBuffer& b : alias_->buffers()) {
      Info info{{&b}, kTemp, 0};
      bool thread_local_buffer = false, writes = false;
      for (const HloValue* v : b.values()) {
        info.size = std::max(info.size, BufferSizeOfShape(v->shape()));
        const HloInstruction* d = v->defining_instruction();
        if (df.context(d->parent()) == ComputationKind::kEmbedded) thread_local_buffer = true;
        if (d->opcode() == HloOpcode::kParameter && d->parent() == entry) {
          if (info.param_value == nullptr) info.param_value = v;
        } else if (d->opcode() == HloOpcode::kConstant) {
          if (info.constant_value == nullptr) info.constant_value = v;
        } else if (!v->is_phi()) {
          writes = true;
        }
        info.live_out |= v->live_out_of_module();
        if (time_.contains(d)) {
          if (info.first == nullptr || ranges_[v->id()].first < info.start) info.first = v;
          info.start = std::min(info.start, ranges_[v->id()].first);
          info.end = std::max(info.end, ranges_[v->id()].second);
        }
      }
      // Parameters (unless donated) and constants are read-only: something that writes into their
      // buffer needs a copy first (copy-insertion adds it). Values of an embedded computation
      // (a loop inside a map's computation, which a kernel's thread runs) live in registers.
      if (writes && !thread_local_buffer && ((info.param_value != nullptr && !donated(info.param_value)) || info.constant_value != nullptr))
        return absl::FailedPreconditionError(absl::StrCat(
            "buffer of ", (info.param_value ? info.param_value : info.constant_value)->ToShortString(),
            " is read-only but is written in place (e.g. by ",
            [&] {
              for (const HloValue* v : b.values())
                if (!v->is_phi() && v != info.param_value && v != info.constant_value) return v->ToShortString();
              return std::string("?");
            }(),
            "); run copy-insertion first"));
      if (thread_local_buffer) info.kind = kThreadLocal;
      else if (info.param_value != nullptr) info.kind = kParameter;
      else if (info.constant_value != nullptr) info.kind = kConstant;
      else if (info.live_out) info.kind = kOutput;
      infos.push_back(info);
    }

    // XLA's operand sharing: an op that may write its output over an operand (elementwise ops,
    // elementwise loop fusions) reuses the operand's temp buffer when the operand dies there, so
    // a chain of elementwise kernels needs no temp at all; an output may take over a temp too.
    if (options_.share_operand_buffers) {
      std::vector<int64_t> order;
      for (int64_t k = 0; k < static_cast<int64_t>(infos.size()); ++k)
        if (infos[k].kind == kTemp || infos[k].kind == kOutput) order.push_back(k);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return infos[a].start < infos[b].start; });
      auto root = [&](int64_t k) {
        while (infos[k].merged_into >= 0) k = infos[k].merged_into;
        return k;
      };
      for (int64_t k : order) {
        Info& b = infos[k];
        if (b.first == nullptr || b.first->is_phi()) continue;
        const HloInstruction* inst = b.first->defining_instruction();
        auto t = time_.find(inst);
        if (t == time_.end() || b.start != t->second) continue;
        bool merged = false;
        for (int64_t op = 0; op < inst->operand_count() && !merged; ++op) {
          const HloInstruction* operand = inst->operand(op);
          for (const ShapeIndex& idx : AllShapeIndices(operand->shape())) {
            if (!CanShareOperandBufferWithUser(operand, idx, inst, b.first->defining_index())) continue;
            std::vector<const HloBuffer*> at = alias_->ComputeBuffersAt(operand, idx);
            if (at.size() != 1) continue;
            int64_t o = root(at[0]->id());
            Info& oi = infos[o];
            if (o == k || oi.kind != kTemp || oi.end != t->second || oi.size < b.size) continue;
            // The op must not reach the same bytes through another operand (a bitcast of it, a
            // tuple holding it): those reads need not be at the positions it writes.
            bool other_path = false;
            for (int64_t op2 = 0; op2 < inst->operand_count() && !other_path; ++op2) {
              if (inst->operand(op2) == operand) continue;
              for (const ShapeIndex& i2 : AllShapeIndices(inst->operand(op2)->shape()))
                for (const HloBuffer* ob : alias_->ComputeBuffersAt(inst->operand(op2), i2))
                  other_path |= root(ob->id()) == o;
            }
            if (other_path) continue;
            oi.buffers.insert(oi.buffers.end(), b.buffers.begin(), b.buffers.end());
            oi.end = b.end;
            oi.live_out |= b.live_out;
            if (b.kind == kOutput) oi.kind = kOutput;
            b.merged_into = o;
            merged = true;
            break;
          }
        }
      }
      infos.erase(std::remove_if(infos.begin(), infos.end(), [](const Info& i) { return i.merged_into >= 0; }),
                  infos.end());
    }

    auto add_allocation = [&](int64_t size) -> BufferAllocation& {
      BufferAllocation a;
      a.index_ = static_cast<int64_t>(result_->allocations_.size());
      a.size_ = size;
      result_->allocations_.push_back(std::move(a));
      return result_->allocations_.back();
    };
    auto place = [&](const Info& info, BufferAllocation& alloc, int64_t offset) {
      for (const HloBuffer* buffer : info.buffers) {
        for (const HloValue* v : buffer->values()) {
          BufferAllocation::Assigned a{v->defining_instruction(), v->defining_index(), offset,
                                       BufferSizeOfShape(v->shape()), v->id(), v->is_phi()};
          if (time_.contains(v->defining_instruction())) {
            a.live_start = ranges_[v->id()].first;
            a.live_end = std::min(ranges_[v->id()].second, next_time_);
          }
          alloc.assigned_.push_back(a);
          if (v->shape().IsTuple()) alloc.is_tuple_ = true;
        }
        buffer_slot_[buffer->id()] = {alloc.index_, offset};
      }
    };

    // Parameters, constants and outputs each get an allocation, largest first (XLA's order).
    std::vector<const Info*> own;
    for (const Info& i : infos)
      if (i.kind == kParameter || i.kind == kConstant || i.kind == kOutput) own.push_back(&i);
    std::stable_sort(own.begin(), own.end(), [](const Info* a, const Info* b) {
      if (a->size != b->size) return a->size > b->size;
      return a->live_out && !b->live_out;
    });
    BufferAssignmentStats& stats = result_->stats_;
    // Output allocations and the live ranges already in them (temps may reuse them, below).
    std::vector<std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>> outputs;
    for (const Info* i : own) {
      BufferAllocation& alloc = add_allocation(i->size);
      alloc.maybe_live_out_ = i->live_out;
      if (i->kind == kOutput) outputs.push_back({alloc.index_, {{i->start, i->end}}});
      if (i->kind == kParameter) {
        alloc.parameter_number_ = i->param_value->defining_instruction()->attrs().parameter_number;
        alloc.param_shape_index_ = i->param_value->defining_index();
        stats.parameter_bytes += i->size;
      } else if (i->kind == kConstant) {
        alloc.constant_ = i->constant_value->defining_instruction();
        alloc.constant_shape_index_ = i->constant_value->defining_index();
        stats.constant_bytes += i->size;
      } else {
        stats.output_bytes += i->size;
      }
      place(*i, alloc, 0);
    }
    for (const Info& i : infos) {
      if (i.kind != kThreadLocal) continue;
      BufferAllocation& alloc = add_allocation(i.size);
      alloc.is_thread_local_ = true;
      place(i, alloc, 0);
    }

    // Temps: one heap. Events in timeline order; at one time step buffers are allocated before
    // those whose last use is that step are freed, so an instruction never writes over its inputs.
    std::vector<const Info*> temps;
    for (const Info& i : infos)
      if (i.kind == kTemp) temps.push_back(&i);
    // Like XLA, a temp that is dead before an output is written (or after its last use... an
    // output lives to the end, so: before) can live in that output's allocation; largest first.
    if (options_.reuse_output_allocations && !outputs.empty()) {
      std::stable_sort(temps.begin(), temps.end(), [](const Info* a, const Info* b) { return a->size > b->size; });
      std::vector<const Info*> rest;
      for (const Info* t : temps) {
        bool placed = false;
        for (auto& [index, ranges] : outputs) {
          if (t->size == 0 || t->size > result_->allocations_[index].size_ || t->start == kLiveOut) continue;
          bool overlaps = false;
          for (const auto& [a, b] : ranges) overlaps |= !(t->end < a || b < t->start);
          if (overlaps) continue;
          place(*t, result_->allocations_[index], 0);
          ranges.push_back({t->start, t->end});
          placed = true;
          break;
        }
        if (!placed) rest.push_back(t);
      }
      temps = std::move(rest);
    }
    if (!temps.empty()) {
      struct Ev { int64_t time; int order; int64_t temp; };
      std::vector<Ev> evs;
      for (int64_t k = 0; k < static_cast<int64_t>(temps.size()); ++k) {
        if (temps[k]->size == 0 || temps[k]->start == kLiveOut) continue;
        evs.push_back({temps[k]->start, 0, k});
        evs.push_back({temps[k]->end, 1, k});
      }
      std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
        return std::tie(a.time, a.order, a.temp) < std::tie(b.time, b.order, b.temp);
      });
      std::vector<HeapEvent> events;
      for (const Ev& e : evs) {
        HeapEvent h;
        h.kind = e.order == 0 ? HeapEvent::kAlloc : HeapEvent::kFree;
        h.buffer = e.temp;
        h.size = e.order == 0 ? temps[e.temp]->size : 0;
        events.push_back(h);
      }
      HeapSimulatorOptions ho;
      ho.alignment = std::max<int64_t>(1, options_.alignment);
      absl::StatusOr<HeapSimulatorResult> heap = SimulateHeap(events, ho);
      if (!heap.ok()) return heap.status();
      BufferAllocation& alloc = add_allocation(heap->heap_size);
      alloc.is_preallocated_temp_ = true;
      std::vector<int64_t> offsets(temps.size(), 0);
      for (const auto& [buf, off] : heap->offsets) offsets[buf] = off;
      for (int64_t k = 0; k < static_cast<int64_t>(temps.size()); ++k) place(*temps[k], alloc, offsets[k]);
      stats.temp_bytes = heap->heap_size;
    }
    for (BufferAllocation& a : result_->allocations_) {
      std::sort(a.assigned_.begin(), a.assigned_.end(),
                [](const BufferAllocation::Assigned& x, const BufferAllocation::Assigned& y) {
                  return x.value_id < y.value_id;
                });
      stats.total_allocation_bytes += a.size_;
    }
    return absl::OkStatus();
  }

  // Every position of every placed value gets its slice; a position two buffers may reach is
  // ambiguous and gets none.
  void FillSlices() {
    const HloInstruction* entry_root = module_.entry_computation()->root_instruction();
    absl::flat_hash_map<const HloInstruction*, absl::flat_hash_map<ShapeIndex, BufferAllocation::Slice>> slices;
    absl::flat_hash_map<const HloInstruction*, absl::flat_hash_set<ShapeIndex>> ambiguous;
    for (const HloBuffer& b : alias_->buffers()) {
      auto slot = buffer_slot_.find(b.id());
      if (slot == buffer_slot_.end()) continue;
      for (const HloValue* v : b.values()) {
        BufferAllocation::Slice slice{slot->second.first, slot->second.second, BufferSizeOfShape(v->shape())};
        for (const HloPosition& p : v->positions()) {
          if (p.instruction == entry_root && p.index.empty()) result_->output_allocation_ = slice.index;
          auto [at, inserted] = slices[p.instruction].try_emplace(p.index, slice);
          if (!inserted && (at->second.index != slice.index || at->second.offset != slice.offset))
            ambiguous[p.instruction].insert(p.index);
        }
      }
    }
    for (const auto& [inst, indices] : ambiguous)
      for (const ShapeIndex& index : indices) slices[inst].erase(index);
    result_->slices_ = std::move(slices);
  }

  const HloModule& module_;
  BufferAssignmentOptions options_;
  std::unique_ptr<HloAliasAnalysis> alias_;
  std::unique_ptr<BufferAssignment> result_;
  absl::flat_hash_set<const HloComputation*> visited_;
  absl::flat_hash_map<const HloInstruction*, int64_t> time_;
  int64_t next_time_ = 0;
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // per value id: [first, last] time
  absl::flat_hash_map<int64_t, std::pair<int64_t, int64_t>> buffer_slot_;  // buffer -> (allocation, offset)
};

absl::StatusOr<BufferAllocation::Slice> BufferAssignment::GetUniqueSlice(const HloInstruction* instruction,
                                                                         const ShapeIndex& index) const {
  auto it = slices_.find(instruction);
  if (it != slices_.end()) {
    auto s = it->second.find(index);
    if (s != it->second.end()) return s->second;
  }
  return absl::NotFoundError(absl::StrCat("no unique buffer slice for ", instruction->name(),
                                          ShapeIndexToString(index),
                                          " (fused or thread-local value, or one of several buffers)"));
}

bool BufferAssignment::HasAllocationAt(const HloInstruction* instruction, const ShapeIndex& index) const {
  return GetUniqueSlice(instruction, index).ok();
}

std::string BufferAssignment::ToString() const {
  std::string out = "BufferAssignment:\n";
  const HloComputation* entry = module_ ? module_->entry_computation() : nullptr;
  for (const BufferAllocation& a : allocations_) {
    absl::StrAppend(&out, "allocation ", a.index(), ": size ", a.size(), ", page 0");
    if (a.is_entry_computation_parameter() && entry != nullptr && a.parameter_number() < entry->num_parameters())
      absl::StrAppend(&out, ", parameter ", a.parameter_number(), ", shape |",
                      entry->parameter_instruction(a.parameter_number())->shape().ToString(false),
                      "| at ShapeIndex ", ShapeIndexToString(a.param_shape_index()));
    if (a.index() == output_allocation_ && entry != nullptr)
      absl::StrAppend(&out, ", output shape is |", entry->root_instruction()->shape().ToString(false), "|");
    if (a.is_constant()) absl::StrAppend(&out, ", constant");
    if (a.is_thread_local()) absl::StrAppend(&out, ", thread-local");
    if (a.maybe_live_out()) absl::StrAppend(&out, ", maybe-live-out");
    if (a.is_preallocated_temp()) absl::StrAppend(&out, ", preallocated-temp");
    absl::StrAppend(&out, ":\n");
    for (const BufferAllocation::Assigned& v : a.assigned()) {
      absl::StatusOr<const Shape*> shape = GetSubshape(v.instruction->shape(), v.index);
      absl::StrAppend(&out, absl::StrFormat(" value: <%d %s%s%s @0> (size=%d,offset=%d): %s\n", v.value_id,
                                            v.instruction->name(),
                                            v.instruction->shape().IsTuple() ? ShapeIndexToString(v.index) : "",
                                            v.is_phi ? " (phi)" : "", v.size, v.offset,
                                            shape.ok() ? (*shape)->ToString(true) : "?"));
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(const HloModule& module,
                                                                const BufferAssignmentOptions& options) {
  return BufferAssigner(module, options).Run();
}

absl::StatusOr<std::string> BufferAssignmentDump(const HloModule& module) {
  absl::StatusOr<std::unique_ptr<BufferAssignment>> a = AssignBuffers(module, BufferAssignmentOptions{});
  if (!a.ok()) return a.status();
  return (*a)->ToString();
}

}  // namespace hloc
