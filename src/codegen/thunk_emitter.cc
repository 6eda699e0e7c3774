// The backend-neutral walk from a scheduled module to a ThunkSequence (see thunk_emitter.h).
#include "codegen/thunk_emitter.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen/collective_thunks.h"
#include "codegen/fft_thunk.h"
#include "ir/opcode.h"

namespace hloc::codegen {
namespace {

// Guards nested while/conditional/call sequences against unbounded recursion on bad input.
constexpr int kMaxNesting = 64;

bool IsDefaultLayout(const Shape& s) {
  if (!s.has_layout()) return true;
  const auto& m2m = s.layout().minor_to_major;
  for (size_t i = 0; i < m2m.size(); ++i)
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  return true;
}

// Stride (in elements) of each logical dimension of `shape` under its layout.
std::vector<int64_t> LayoutStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  if (IsDefaultLayout(shape)) return RowMajorStrides(shape.dimensions());
  int64_t s = 1;
  for (int64_t d : shape.layout().minor_to_major) {
    strides[d] = s;
    s *= shape.dimensions(d);
  }
  return strides;
}

// An error while emitting `inst`, said to be about it: its place in the HLO text (when it has
// one) and its name. An error already placed (by an instruction of a called computation) or
// naming `inst` (an inner emitter did) stays as it is.
absl::Status AboutInstruction(const absl::Status& s, const HloInstruction& inst) {
  const HloModule* module = inst.parent() != nullptr ? inst.parent()->parent() : nullptr;
  if (module != nullptr && !module->source_file().empty() && absl::StartsWith(s.message(), module->source_file() + ":"))
    return s;
  std::string message(s.message());
  if (message.find("%" + inst.name()) == std::string::npos)
    message = absl::StrCat("%", inst.name(), " (", std::string(HloOpcodeString(inst.opcode())), "): ", message);
  return absl::Status(s.code(), absl::StrCat(inst.LocationPrefix(), message));
}

class Walker {
 public:
  Walker(const HloModule& module, const BufferAssignment& assignment, ThunkEmitterBackend& backend,
         const ThunkEmitterOptions& options)
      : module_(module), assignment_(assignment), backend_(backend), options_(options) {}

  absl::Status EmitComputation(const HloComputation& computation, runtime::ThunkSequence& out, int depth) {
    if (depth > kMaxNesting) return absl::InvalidArgumentError("computations nested too deeply");
    // The schedule is the instruction order (HloModule::is_scheduled).
    for (const auto& inst : computation.instructions()) {
      absl::Status s = EmitInstruction(*inst, out, depth);
      if (!s.ok()) return AboutInstruction(s, *inst);
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<runtime::BufferSlice> Slice(const HloInstruction* inst, const ShapeIndex& index) {
    absl::StatusOr<BufferAllocation::Slice> s = assignment_.GetUniqueSlice(inst, index);
    if (!s.ok()) return s.status();
    return ToRuntimeSlice(*s);
  }

  // kCopy of leaf `src_index` of `src` into leaf `dst_index` of `dst`, for every array leaf
  // below those indices, where the two are not already one slice.
  absl::Status CopyIfDifferent(const HloInstruction* src, const ShapeIndex& src_index, const HloInstruction* dst,
                               const ShapeIndex& dst_index, runtime::ThunkSequence& out) {
    absl::StatusOr<const Shape*> dst_shape = GetSubshape(dst->shape(), dst_index);
    if (!dst_shape.ok()) return dst_shape.status();
    for (const auto& [leaf, shape] : ArrayLeaves(**dst_shape)) {
      ShapeIndex si = src_index, di = dst_index;
      si.insert(si.end(), leaf.begin(), leaf.end());
      di.insert(di.end(), leaf.begin(), leaf.end());
      if (!assignment_.HasAllocationAt(dst, di)) continue;
      absl::StatusOr<runtime::BufferSlice> from = Slice(src, si);
      if (!from.ok()) return from.status();
      absl::StatusOr<runtime::BufferSlice> to = Slice(dst, di);
      if (!to.ok()) return to.status();
      if (from->allocation == to->allocation && from->offset == to->offset) continue;
      runtime::Thunk t;
      t.kind = runtime::ThunkKind::kCopy;
      t.name = absl::StrCat(dst->name(), dst_index.empty() && leaf.empty() ? "" : ShapeIndexToString(di), ".copy");
      t.arguments = {*from, *to};
      t.written = {false, true};
      t.size = std::min(from->size, to->size);
      out.push_back(std::move(t));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<KernelArgument>> KernelArguments(const HloInstruction& inst) {
    std::vector<KernelArgument> args;
    auto add = [&](const HloInstruction* value, bool is_output) -> absl::Status {
      for (const auto& [index, shape] : ArrayLeaves(value->shape())) {
        KernelArgument a;
        a.instruction = value;
        a.index = index;
        a.shape = *shape;
        if (!a.shape.has_layout()) a.shape.SetDefaultLayout();
        absl::StatusOr<runtime::BufferSlice> s = Slice(value, index);
        if (!s.ok()) return s.status();
        a.slice = *s;
        a.is_output = is_output;
        // Kernels address every element (one byte or more each, as Literal and the runtime
        // store them): a smaller slice would be written past its end.
        const int64_t needed = a.shape.num_elements() * std::max(1, ByteWidth(a.shape.element_type()));
        if (a.slice.size < needed)
          return absl::InternalError(absl::StrCat("buffer assignment gave %", value->name(),
                                                  index.empty() ? "" : ShapeIndexToString(index), " (",
                                                  a.shape.ToString(), ") ", a.slice.size, " bytes but it needs ",
                                                  needed));
        args.push_back(std::move(a));
      }
      return absl::OkStatus();
    };
    for (const HloInstruction* op : inst.operands()) {
      if (absl::Status s = add(op, false); !s.ok()) return s;
    }
    if (absl::Status s = add(&inst, true); !s.ok()) return s;
    return args;
  }

  absl::Status EmitKernel(const HloInstruction& inst, runtime::ThunkSequence& out) {
    absl::StatusOr<std::vector<KernelArgument>> args = KernelArguments(inst);
    if (!args.ok()) return args.status();
    absl::StatusOr<runtime::Thunk> thunk = backend_.EmitKernel(inst, *args);
    if (!thunk.ok()) return thunk.status();
    thunk->kind = runtime::ThunkKind::kKernel;
    if (thunk->name.empty()) thunk->name = inst.name();
    thunk->arguments.clear();
    thunk->written.clear();
    for (const KernelArgument& a : *args) {
      thunk->arguments.push_back(a.slice);
      thunk->written.push_back(a.is_output);
    }
    out.push_back(std::move(*thunk));
    return absl::OkStatus();
  }

  absl::Status EmitGemm(const HloInstruction& dot, const GemmPlan& plan, runtime::ThunkSequence& out) {
    runtime::Thunk t;
    t.kind = runtime::ThunkKind::kGemm;
    t.name = dot.name();
    t.gemm = plan.config;
    absl::StatusOr<runtime::BufferSlice> a = Slice(dot.operand(0), {});
    absl::StatusOr<runtime::BufferSlice> b = Slice(dot.operand(1), {});
    absl::StatusOr<runtime::BufferSlice> d = Slice(&dot, {});
    if (!a.ok()) return a.status();
    if (!b.ok()) return b.status();
    if (!d.ok()) return d.status();
    if (plan.swap_operands) std::swap(a, b);
    t.arguments = {*a, *b, *d};
    t.written = {false, false, true};
    out.push_back(std::move(t));
    return absl::OkStatus();
  }

  absl::Status EmitWhile(const HloInstruction& w, runtime::ThunkSequence& out, int depth) {
    if (w.called_computations().size() < 2 || w.operand_count() != 1)
      return absl::InvalidArgumentError("malformed while");
    const HloComputation& cond = *w.while_condition();
    const HloComputation& body = *w.while_body();
    // The loop state lives in the while's buffers; XLA's alias analysis makes init, body
    // parameter and root, condition parameter and the while share them, so these copies are
    // normally none.
    if (absl::Status s = CopyIfDifferent(w.operand(0), {}, &w, {}, out); !s.ok()) return s;
    runtime::Thunk t;
    t.kind = runtime::ThunkKind::kWhile;
    t.name = w.name();
    if (absl::Status s = CopyIfDifferent(&w, {}, cond.parameter_instruction(0), {}, t.condition); !s.ok()) return s;
    if (absl::Status s = EmitComputation(cond, t.condition, depth + 1); !s.ok()) return s;
    absl::StatusOr<runtime::BufferSlice> pred = Slice(cond.root_instruction(), {});
    if (!pred.ok()) return pred.status();
    t.predicate = *pred;
    if (absl::Status s = CopyIfDifferent(&w, {}, body.parameter_instruction(0), {}, t.body); !s.ok()) return s;
    if (absl::Status s = EmitComputation(body, t.body, depth + 1); !s.ok()) return s;
    if (absl::Status s = CopyIfDifferent(body.root_instruction(), {}, &w, {}, t.body); !s.ok()) return s;
    t.trip_count = KnownTripCount(w);
    out.push_back(std::move(t));
    return absl::OkStatus();
  }

  // backend_config={"known_trip_count":{"n":"5"}} as XLA's WhileLoopTripCountAnnotator writes it.
  static int64_t KnownTripCount(const HloInstruction& w) {
    const std::string& bc = w.attrs().backend_config;
    size_t p = bc.find("known_trip_count");
    if (p == std::string::npos) return -1;
    p = bc.find("\"n\"", p);
    if (p == std::string::npos) return -1;
    p = bc.find_first_of("0123456789", p + 3);
    if (p == std::string::npos) return -1;
    int64_t n = 0;
    while (p < bc.size() && bc[p] >= '0' && bc[p] <= '9' && n < (int64_t{1} << 58)) n = n * 10 + (bc[p++] - '0');
    return n;
  }

  absl::Status EmitConditional(const HloInstruction& c, runtime::ThunkSequence& out, int depth) {
    const auto& branches = c.called_computations();
    if (branches.empty() || c.operand_count() != static_cast<int64_t>(branches.size()) + 1)
      return absl::InvalidArgumentError("malformed conditional");
    runtime::Thunk t;
    t.kind = runtime::ThunkKind::kConditional;
    t.name = c.name();
    absl::StatusOr<runtime::BufferSlice> index = Slice(c.operand(0), {});
    if (!index.ok()) return index.status();
    t.predicate = *index;
    for (size_t i = 0; i < branches.size(); ++i) {
      const HloComputation& b = *branches[i];
      runtime::ThunkSequence seq;
      if (b.num_parameters() == 1) {
        if (absl::Status s = CopyIfDifferent(c.operand(i + 1), {}, b.parameter_instruction(0), {}, seq); !s.ok())
          return s;
      }
      if (absl::Status s = EmitComputation(b, seq, depth + 1); !s.ok()) return s;
      if (absl::Status s = CopyIfDifferent(b.root_instruction(), {}, &c, {}, seq); !s.ok()) return s;
      t.branches.push_back(std::move(seq));
    }
    out.push_back(std::move(t));
    return absl::OkStatus();
  }

  absl::Status EmitCall(const HloInstruction& call, runtime::ThunkSequence& out, int depth) {
    const HloComputation* callee = call.to_apply();
    if (callee == nullptr || callee->num_parameters() != call.operand_count())
      return absl::InvalidArgumentError("malformed call");
    for (int64_t i = 0; i < call.operand_count(); ++i) {
      if (absl::Status s = CopyIfDifferent(call.operand(i), {}, callee->parameter_instruction(i), {}, out); !s.ok())
        return s;
    }
    if (absl::Status s = EmitComputation(*callee, out, depth + 1); !s.ok()) return s;
    return CopyIfDifferent(callee->root_instruction(), {}, &call, {}, out);
  }

  // The operand leaves of collective `inst` and its result leaves (below CollectiveResultIndex),
  // as (instruction, index) pairs. `value` holds the buffers: `inst` itself, or a fusion whose
  // fused computation is `inst` over parameters (XLA:GPU's collective fusions), whose parameter
  // k is the fusion's operand k.
  using Leaf = std::pair<const HloInstruction*, ShapeIndex>;
  absl::Status CollectiveLeaves(const HloInstruction& inst, const HloInstruction& value, std::vector<Leaf>& ins,
                                std::vector<Leaf>& outs) {
    for (const HloInstruction* op : inst.operands()) {
      if (&value != &inst) op = value.operand(op->attrs().parameter_number);
      for (const auto& [index, shape] : ArrayLeaves(op->shape())) ins.push_back({op, index});
    }
    const ShapeIndex result = CollectiveResultIndex(inst);
    absl::StatusOr<const Shape*> results = GetSubshape(value.shape(), result);
    if (!results.ok()) return results.status();
    for (const auto& [index, shape] : ArrayLeaves(**results)) {
      ShapeIndex full = result;
      full.insert(full.end(), index.begin(), index.end());
      outs.push_back({&value, full});
    }
    if (outs.size() != ins.size())
      return absl::UnimplementedError("collective with a different number of inputs and outputs");
    return absl::OkStatus();
  }

  // The collective a fusion wraps: its fused root when that is a collective of the fusion's
  // parameters (nothing to compute around it), else null.
  static const HloInstruction* WrappedCollective(const HloInstruction& fusion) {
    if (fusion.called_computations().empty()) return nullptr;
    const HloComputation* fused = fusion.fused_instructions_computation();
    const HloInstruction* root = fused->root_instruction();
    if (root == nullptr || !IsCollective(root->opcode())) return nullptr;
    for (const HloInstruction* op : root->operands()) {
      if (op->opcode() != HloOpcode::kParameter || op->attrs().parameter_number >= fusion.operand_count())
        return nullptr;
    }
    return root;
  }

  absl::Status EmitCollective(const HloInstruction& inst, const HloInstruction& value, runtime::ThunkSequence& out) {
    if (inst.opcode() == HloOpcode::kRaggedAllToAll)
      return absl::UnimplementedError("ragged-all-to-all is not supported by the code generator");
    if (options_.num_devices == 1 && !options_.library_collectives_on_one_device)
      return EmitOneDeviceCollective(inst, value, out);
    if (!options_.device_collectives)
      return absl::UnimplementedError(absl::StrCat("collectives over ", options_.num_devices,
                                                   " devices are not supported by this backend yet"));
    std::vector<Leaf> ins, outs;
    if (absl::Status s = CollectiveLeaves(inst, value, ins, outs); !s.ok()) return s;
    runtime::Thunk t;
    t.kind = runtime::ThunkKind::kCollective;
    t.name = value.name();
    std::vector<Shape> in_shapes, out_shapes;
    for (const std::vector<Leaf>* leaves : {&ins, &outs}) {
      for (const auto& [holder, index] : *leaves) {
        absl::StatusOr<const Shape*> shape = GetSubshape(holder->shape(), index);
        if (!shape.ok()) return shape.status();
        Shape s = **shape;
        if (!s.has_layout()) s.SetDefaultLayout();
        absl::StatusOr<runtime::BufferSlice> slice = Slice(holder, index);
        if (!slice.ok()) return slice.status();
        if (slice->size < s.byte_size())
          return absl::InternalError(absl::StrCat("buffer assignment gave %", holder->name(), ShapeIndexToString(index),
                                                  " ", slice->size, " bytes but it needs ", s.byte_size()));
        (leaves == &ins ? in_shapes : out_shapes).push_back(std::move(s));
        t.arguments.push_back(*slice);
        t.written.push_back(leaves == &outs);
      }
    }
    DeviceCounts counts{options_.num_devices / options_.num_partitions, options_.num_partitions};
    absl::StatusOr<runtime::CollectiveConfig> config = CollectiveConfigFor(inst, in_shapes, out_shapes, counts);
    if (!config.ok()) return config.status();
    t.collective = std::move(*config);
    t.target = t.collective.op;
    out.push_back(std::move(t));
    return absl::OkStatus();
  }

  // async-start runs its wrapped computation (whose parameters and root buffer assignment shares
  // with the start's operands and {1}, as for a call) where it stands; update and done only pass
  // that result on. The runtime has no streams to overlap on, so nothing is lost.
  absl::Status EmitAsyncStart(const HloInstruction& start, runtime::ThunkSequence& out, int depth) {
    if (start.called_computations().empty()) return absl::InvalidArgumentError("async-start without a computation");
    const HloComputation& callee = *start.called_computations()[0];
    if (callee.num_parameters() != start.operand_count())
      return absl::InvalidArgumentError("async-start operands do not match its computation's parameters");
    for (int64_t i = 0; i < start.operand_count(); ++i) {
      if (absl::Status s = CopyIfDifferent(start.operand(i), {}, callee.parameter_instruction(i), {}, out); !s.ok())
        return s;
    }
    const size_t before = out.size();
    if (absl::Status s = EmitComputation(callee, out, depth + 1); !s.ok()) return s;
    MarkAsync(start, out, before);
    return CopyIfDifferent(callee.root_instruction(), {}, &start, {1}, out);
  }

  // When what `start` emitted from `before` on is one device collective, it becomes an async
  // start: its own id, which its done waits for. (Anything else runs where it stands.)
  void MarkAsync(const HloInstruction& start, runtime::ThunkSequence& out, size_t before) {
    if (!options_.async_collectives || out.size() != before + 1) return;
    runtime::Thunk& t = out.back();
    if (t.kind != runtime::ThunkKind::kCollective || t.collective.op.empty() || t.collective.op == "partition-id" ||
        t.collective.op == "replica-id")
      return;
    t.collective.async_id = next_async_id_++;
    async_ids_[&start] = t.collective.async_id;
  }

  // The wait of an async start marked by MarkAsync; nothing for one that ran in order.
  void EmitDone(const HloInstruction& start, runtime::ThunkSequence& out) {
    auto it = async_ids_.find(&start);
    if (it == async_ids_.end()) return;
    runtime::Thunk t;
    t.kind = runtime::ThunkKind::kCollective;
    t.name = absl::StrCat(start.name(), ".done");
    t.collective.op = "collective-done";
    t.collective.async_id = it->second;
    t.target = t.collective.op;
    out.push_back(std::move(t));
  }

  // partition-id / replica-id over several devices: the runtime writes the running device's id.
  absl::Status EmitDeviceId(const HloInstruction& inst, runtime::ThunkSequence& out) {
    absl::StatusOr<runtime::BufferSlice> to = Slice(&inst, {});
    if (!to.ok()) return to.status();
    runtime::Thunk t;
    t.name = inst.name();
    t.arguments = {*to};
    t.written = {true};
    if (options_.num_devices == 1) {
      t.kind = runtime::ThunkKind::kMemset;  // device 0 of one
    } else if (!options_.device_collectives) {
      return absl::UnimplementedError("replica/partition id over several devices");
    } else {
      t.kind = runtime::ThunkKind::kCollective;
      t.collective.op = std::string(HloOpcodeString(inst.opcode()));
      t.target = t.collective.op;
    }
    out.push_back(std::move(t));
    return absl::OkStatus();
  }

  // One-device collectives leave each participant's data as it is: a copy per leaf.
  absl::Status EmitOneDeviceCollective(const HloInstruction& inst, const HloInstruction& value,
                                       runtime::ThunkSequence& out) {
    std::vector<Leaf> ins, outs;
    if (absl::Status s = CollectiveLeaves(inst, value, ins, outs); !s.ok()) return s;
    bool self_pair = inst.opcode() != HloOpcode::kCollectivePermute &&
                     inst.opcode() != HloOpcode::kCollectivePermuteStart;
    for (const auto& [s, t] : inst.attrs().source_target_pairs)
      if (s == 0 && t == 0) self_pair = true;
    for (size_t i = 0; i < ins.size(); ++i) {
      absl::StatusOr<runtime::BufferSlice> from = Slice(ins[i].first, ins[i].second);
      absl::StatusOr<runtime::BufferSlice> to = Slice(outs[i].first, outs[i].second);
      if (!from.ok()) return from.status();
      if (!to.ok()) return to.status();
      runtime::Thunk t;
      t.name = value.name();
      if (!self_pair) {
        // A permute that sends nothing to device 0 leaves its output zero (XLA's semantics).
        t.kind = runtime::ThunkKind::kMemset;
        t.arguments = {*to};
        t.written = {true};
        t.memset_value = 0;
      } else {
        t.kind = runtime::ThunkKind::kCollective;
        t.target = std::string(HloOpcodeString(inst.opcode()));
        t.arguments = {*from, *to};
        t.written = {false, true};
        t.size = to->size;
      }
      out.push_back(std::move(t));
    }
    return absl::OkStatus();
  }

  bool IsPlainCopy(const HloInstruction& copy) {
    const Shape& a = copy.operand(0)->shape();
    const Shape& b = copy.shape();
    if (!a.IsArray() || !b.IsArray() || a.element_type() != b.element_type()) return false;
    if (!a.SameDimensions(b)) return false;
    return LayoutStrides(a) == LayoutStrides(b);
  }

  absl::Status EmitInstruction(const HloInstruction& inst, runtime::ThunkSequence& out, int depth) {
    switch (inst.opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kAfterAll:
        return absl::OkStatus();
      case HloOpcode::kConstant: {
        // A constant lives in its own read-only allocation; one placed elsewhere (XLA never
        // does this) is written by a kernel.
        if (!inst.shape().IsArray() || !assignment_.HasAllocationAt(&inst, {})) return absl::OkStatus();
        absl::StatusOr<BufferAllocation::Slice> s = assignment_.GetUniqueSlice(&inst, {});
        if (!s.ok()) return s.status();
        if (assignment_.allocations()[s->index].is_constant()) return absl::OkStatus();
        return EmitKernel(inst, out);
      }
      case HloOpcode::kTuple:
        for (int64_t i = 0; i < inst.operand_count(); ++i) {
          if (absl::Status s = CopyIfDifferent(inst.operand(i), {}, &inst, {i}, out); !s.ok()) return s;
        }
        return absl::OkStatus();
      case HloOpcode::kGetTupleElement:
        return CopyIfDifferent(inst.operand(0), {inst.attrs().tuple_index}, &inst, {}, out);
      case HloOpcode::kBitcast:
        if (!inst.shape().IsArray()) return absl::OkStatus();
        if (!assignment_.HasAllocationAt(&inst, {})) return absl::OkStatus();
        {
          absl::StatusOr<runtime::BufferSlice> from = Slice(inst.operand(0), {});
          absl::StatusOr<runtime::BufferSlice> to = Slice(&inst, {});
          if (!from.ok()) return from.status();
          if (!to.ok()) return to.status();
          if (from->allocation == to->allocation && from->offset == to->offset) return absl::OkStatus();
          runtime::Thunk t;
          t.kind = runtime::ThunkKind::kCopy;
          t.name = inst.name();
          t.arguments = {*from, *to};
          t.written = {false, true};
          t.size = std::min(from->size, to->size);
          out.push_back(std::move(t));
          return absl::OkStatus();
        }
      case HloOpcode::kOptimizationBarrier:
        return CopyIfDifferent(inst.operand(0), {}, &inst, {}, out);
      case HloOpcode::kAddDependency:
      case HloOpcode::kDomain:
        return CopyIfDifferent(inst.operand(0), {}, &inst, {}, out);
      // copy-start's result is (destination, source, context), as XLA's: the copy fills the
      // destination {0}, which copy-done returns (the same buffer, so no second copy).
      case HloOpcode::kCopyDone:
        return CopyIfDifferent(inst.operand(0), {0}, &inst, {}, out);
      case HloOpcode::kCopyStart:
        return CopyIfDifferent(inst.operand(0), {}, &inst, {0}, out);
      case HloOpcode::kWhile:
        return EmitWhile(inst, out, depth);
      case HloOpcode::kConditional:
        return EmitConditional(inst, out, depth);
      case HloOpcode::kCall:
        return EmitCall(inst, out, depth);
      case HloOpcode::kDot:
        if (std::optional<GemmPlan> g = backend_.GemmFor(inst)) return EmitGemm(inst, *g, out);
        return EmitKernel(inst, out);
      case HloOpcode::kFft: {
        absl::StatusOr<std::vector<KernelArgument>> args = KernelArguments(inst);
        if (!args.ok()) return args.status();
        absl::StatusOr<runtime::Thunk> fft = FftThunk(inst, *args);
        if (!fft.ok()) return fft.status();
        if (absl::Status s = backend_.FinishFft(inst, *fft); !s.ok()) return s;
        out.push_back(std::move(*fft));
        return absl::OkStatus();
      }
      case HloOpcode::kCopy:
        if (IsPlainCopy(inst)) {
          absl::StatusOr<runtime::BufferSlice> from = Slice(inst.operand(0), {});
          absl::StatusOr<runtime::BufferSlice> to = Slice(&inst, {});
          if (!from.ok()) return from.status();
          if (!to.ok()) return to.status();
          if (from->allocation == to->allocation && from->offset == to->offset) return absl::OkStatus();
          runtime::Thunk t;
          t.kind = runtime::ThunkKind::kCopy;
          t.name = inst.name();
          t.arguments = {*from, *to};
          t.written = {false, true};
          t.size = std::min(from->size, to->size);
          out.push_back(std::move(t));
          return absl::OkStatus();
        }
        return EmitKernel(inst, out);
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllGather:
      case HloOpcode::kReduceScatter:
      case HloOpcode::kAllToAll:
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectiveBroadcast:
      case HloOpcode::kRaggedAllToAll:
        return EmitCollective(inst, inst, out);
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllGatherStart:
      case HloOpcode::kCollectivePermuteStart: {
        const size_t before = out.size();
        if (absl::Status s = EmitCollective(inst, inst, out); !s.ok()) return s;
        MarkAsync(inst, out, before);
        return absl::OkStatus();
      }
      case HloOpcode::kAllReduceDone:
      case HloOpcode::kAllGatherDone:
      case HloOpcode::kCollectivePermuteDone:
        // The start op wrote the results (once its collective finishes); done aliases them.
        EmitDone(*inst.operand(0), out);
        return CopyIfDifferent(inst.operand(0), CollectiveResultIndex(*inst.operand(0)), &inst, {}, out);
      case HloOpcode::kReplicaId:
      case HloOpcode::kPartitionId:
        return EmitDeviceId(inst, out);
      case HloOpcode::kRng:
      case HloOpcode::kRngGetAndUpdateState:
      case HloOpcode::kRngBitGenerator:
        return absl::UnimplementedError("random-number ops must be expanded by the pipeline "
                                        "(rng-bit-generator-expander) before code generation");
      case HloOpcode::kInfeed:
      case HloOpcode::kOutfeed:
      case HloOpcode::kSend:
      case HloOpcode::kSendDone:
      case HloOpcode::kRecv:
      case HloOpcode::kRecvDone:
        return absl::UnimplementedError("not supported by the code generator (host transfers)");
      case HloOpcode::kAsyncStart:
        return EmitAsyncStart(inst, out, depth);
      case HloOpcode::kAsyncUpdate:
        return CopyIfDifferent(inst.operand(0), {}, &inst, {}, out);
      case HloOpcode::kAsyncDone: {
        const HloInstruction* start = inst.operand(0);
        for (int guard = 0; start->opcode() == HloOpcode::kAsyncUpdate && guard < 1000; ++guard)
          start = start->operand(0);
        EmitDone(*start, out);
        return CopyIfDifferent(inst.operand(0), {1}, &inst, {}, out);
      }
      case HloOpcode::kFusion:
        if (const HloInstruction* collective = WrappedCollective(inst)) return EmitCollective(*collective, inst, out);
        return EmitKernel(inst, out);
      case HloOpcode::kCholesky:
      case HloOpcode::kTriangularSolve:  // library thunks where the backend has them (LAPACK, cuSOLVER)
      case HloOpcode::kCustomCall: {
        absl::StatusOr<std::vector<KernelArgument>> args = KernelArguments(inst);
        if (!args.ok()) return args.status();
        absl::StatusOr<std::optional<runtime::Thunk>> library = backend_.EmitLibraryCall(inst, *args);
        if (!library.ok()) return library.status();
        if (library->has_value()) {
          if ((*library)->name.empty()) (*library)->name = inst.name();
          out.push_back(std::move(**library));
          return absl::OkStatus();
        }
        return EmitKernel(inst, out);
      }
      default:
        return EmitKernel(inst, out);
    }
  }

  const HloModule& module_;
  const BufferAssignment& assignment_;
  ThunkEmitterBackend& backend_;
  ThunkEmitterOptions options_;
  int64_t next_async_id_ = 0;
  absl::flat_hash_map<const HloInstruction*, int64_t> async_ids_;  // async starts marked by MarkAsync
};

void CollectLeaves(const Shape& shape, ShapeIndex& prefix, std::vector<std::pair<ShapeIndex, const Shape*>>& out) {
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < static_cast<int64_t>(shape.tuple_shapes().size()); ++i) {
      prefix.push_back(i);
      CollectLeaves(shape.tuple_shapes(i), prefix, out);
      prefix.pop_back();
    }
    return;
  }
  if (shape.IsArray()) out.push_back({prefix, &shape});
}

runtime::ArrayShape ToArrayShapeImpl(const Shape& shape) {
  runtime::ArrayShape a;
  a.element_type = std::string(PrimitiveTypeName(shape.element_type()));
  a.element_size_in_bytes = std::max(1, ByteWidth(shape.element_type()));
  a.dimensions = shape.dimensions();
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major.size()) == shape.rank()) {
    a.minor_to_major = shape.layout().minor_to_major;
  } else {
    for (int64_t d = shape.rank() - 1; d >= 0; --d) a.minor_to_major.push_back(d);
  }
  return a;
}

}  // namespace

std::vector<std::pair<ShapeIndex, const Shape*>> ArrayLeaves(const Shape& shape) {
  std::vector<std::pair<ShapeIndex, const Shape*>> out;
  ShapeIndex prefix;
  CollectLeaves(shape, prefix, out);
  return out;
}

runtime::BufferSlice ToRuntimeSlice(const BufferAllocation::Slice& slice) {
  runtime::BufferSlice s;
  s.allocation = slice.index;
  s.offset = slice.offset;
  s.size = slice.size;
  return s;
}

runtime::ArrayShape ToArrayShape(const Shape& shape) { return ToArrayShapeImpl(shape); }

std::vector<uint8_t> LiteralBytesInLayout(const Literal& literal, const Shape& shape) {
  const int64_t width = std::max(1, ByteWidth(literal.element_type()));
  const int64_t n = literal.element_count();
  std::vector<uint8_t> bytes(static_cast<size_t>(n * width));
  if (n == 0) return bytes;
  if (IsDefaultLayout(shape) || shape.rank() <= 1) {
    std::memcpy(bytes.data(), literal.untyped_data(), bytes.size());
    return bytes;
  }
  const std::vector<int64_t> strides = LayoutStrides(shape);
  const std::vector<int64_t>& dims = shape.dimensions();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t physical = 0;
    for (size_t d = 0; d < dims.size(); ++d) physical += index[d] * strides[d];
    std::memcpy(bytes.data() + physical * width, literal.untyped_data() + linear * width, width);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return bytes;
}

absl::StatusOr<runtime::ThunkSequence> EmitThunks(const HloModule& module, const BufferAssignment& assignment,
                                                  ThunkEmitterBackend& backend, const ThunkEmitterOptions& options) {
  if (module.entry_computation() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  if (!module.is_scheduled()) return absl::FailedPreconditionError("thunk emission needs a scheduled module");
  Walker walker(module, assignment, backend, options);
  runtime::ThunkSequence seq;
  if (absl::Status s = walker.EmitComputation(*module.entry_computation(), seq, 0); !s.ok()) return s;
  return seq;
}

namespace {

// The bytes of a constant allocation: the leaf of the constant's literal it holds (a tuple
// constant has one allocation per element), in that leaf's layout. A tuple leaf (the pointer
// table) has no bytes of its own.
absl::StatusOr<std::vector<uint8_t>> ConstantBytes(const BufferAllocation& a) {
  const HloInstruction* c = a.constant();
  if (!c->attrs().literal) return absl::InternalError(absl::StrCat("constant %", c->name(), " has no literal"));
  absl::StatusOr<const Shape*> leaf = GetSubshape(c->shape(), a.constant_shape_index());
  if (!leaf.ok()) return leaf.status();
  if (!(*leaf)->IsArray()) return std::vector<uint8_t>();
  Shape shape = **leaf;
  if (!shape.has_layout()) shape.SetDefaultLayout();
  return LiteralBytesInLayout(c->attrs().literal->at(a.constant_shape_index()), shape);
}

}  // namespace

absl::Status FillExecutableBuffers(const HloModule& module, const BufferAssignment& assignment,
                                   runtime::Executable& exe) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  exe.allocations.clear();
  for (const BufferAllocation& a : assignment.allocations()) {
    runtime::BufferAllocation r;
    r.index = a.index();
    r.size = a.size();
    r.is_entry_parameter = a.is_entry_computation_parameter();
    r.parameter_number = a.parameter_number();
    r.parameter_shape_index = a.param_shape_index();
    r.is_constant = a.is_constant();
    r.maybe_live_out = a.maybe_live_out();
    r.is_temp = !r.is_entry_parameter && !r.is_constant && !r.maybe_live_out;
    if (a.is_constant()) {
      absl::StatusOr<std::vector<uint8_t>> bytes = ConstantBytes(a);
      if (!bytes.ok()) return bytes.status();
      r.constant_data = *std::move(bytes);
      if (static_cast<int64_t>(r.constant_data.size()) > r.size) r.constant_data.resize(r.size);
    }
    exe.allocations.push_back(std::move(r));
  }
  exe.parameter_shapes.clear();
  exe.parameter_slices.clear();
  for (const HloInstruction* p : entry->parameters()) {
    for (const auto& [index, shape] : ArrayLeaves(p->shape())) {
      exe.parameter_shapes.push_back(ToArrayShape(*shape));
      if (!assignment.HasAllocationAt(p, index)) {
        exe.parameter_slices.push_back(runtime::BufferSlice{});  // unused parameter: nowhere to copy
        continue;
      }
      absl::StatusOr<BufferAllocation::Slice> s = assignment.GetUniqueSlice(p, index);
      if (!s.ok()) return s.status();
      exe.parameter_slices.push_back(ToRuntimeSlice(*s));
    }
  }
  const HloInstruction* root = entry->root_instruction();
  exe.result_is_tuple = root->shape().IsTuple();
  exe.result_shapes.clear();
  exe.result_slices.clear();
  for (const auto& [index, shape] : ArrayLeaves(root->shape())) {
    exe.result_shapes.push_back(ToArrayShape(*shape));
    absl::StatusOr<BufferAllocation::Slice> s = assignment.GetUniqueSlice(root, index);
    if (!s.ok())
      return absl::Status(s.status().code(), absl::StrCat("entry result leaf ", ShapeIndexToString(index), ": ",
                                                          s.status().message()));
    exe.result_slices.push_back(ToRuntimeSlice(*s));
  }
  return absl::OkStatus();
}

}  // namespace hloc::codegen
