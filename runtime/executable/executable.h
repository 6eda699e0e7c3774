// The executable: what the compiler hands the runtime, and the only thing the runtime reads.
// It holds the object code (CPU: an ELF object for LLVM's JIT linker; GPU: PTX), the buffer
// allocations from BufferAssignment, the ThunkSequence that walks them, and the optimized HLO
// text (for dumps and error messages). Serialized to one `.hlox` file. This header includes
// nothing from src/: a runtime built without the compiler can load what a compiler built
// elsewhere wrote (deviceless compilation).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hloc::runtime {

// XLA's PrimitiveType names ("f32", "bf16", "s32", "pred", ...) keep the format independent of
// src/ir; sizes in bytes per element are stored beside them.
struct ArrayShape {
  std::string element_type;          // "f32"
  int64_t element_size_in_bytes = 0; // 4 (sub-byte types: rounded up to 1)
  std::vector<int64_t> dimensions;   // logical dims
  std::vector<int64_t> minor_to_major;  // layout
  int64_t byte_size() const;
};

// One allocation of BufferAssignment (XLA's BufferAllocation).
struct BufferAllocation {
  int64_t index = 0;
  int64_t size = 0;                  // bytes
  bool is_entry_parameter = false;
  int64_t parameter_number = -1;
  std::vector<int64_t> parameter_shape_index;
  bool is_constant = false;
  std::vector<uint8_t> constant_data;  // is_constant: the bytes, in the allocation's layout
  bool maybe_live_out = false;       // part of the entry result
  bool is_temp = false;              // neither parameter, constant nor output
};

// A byte range of one allocation (XLA's BufferAllocation::Slice).
struct BufferSlice {
  int64_t allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
  bool valid() const { return allocation >= 0; }
};

// Launch geometry. CPU kernels read only `partitions` (how many parallel parts the runtime may
// run; each call gets its part index); GPU kernels the grid and block.
struct LaunchDimensions {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int64_t block_x = 1, block_y = 1, block_z = 1;
  int64_t shared_memory_bytes = 0;
  int64_t partitions = 1;
};

// A matrix product (dot) as cuBLASLt (GPU) or the CPU runtime's GEMM runs it:
// D = alpha * op(A) x op(B) + beta * C, batched, with an optional epilogue.
struct GemmConfig {
  std::string lhs_type, rhs_type, output_type, compute_type;  // element type names
  int64_t batch = 1, m = 0, n = 0, k = 0;
  // Row-major strides in elements of the [batch, rows, cols] views of A, B and D.
  bool lhs_transposed = false, rhs_transposed = false;  // op(X) = X^T when set
  int64_t lhs_leading_dim = 0, rhs_leading_dim = 0, output_leading_dim = 0;
  int64_t lhs_batch_stride = 0, rhs_batch_stride = 0, output_batch_stride = 0;
  double alpha = 1.0, beta = 0.0;
  // Complex GEMMs (c64, c128; XLA's GemmBackendConfig): alpha is alpha + alpha_imag * i, beta
  // stays real. Always 0 for real types.
  double alpha_imag = 0.0;
  std::string epilogue = "DEFAULT";  // DEFAULT, BIAS, RELU, BIAS_RELU, GELU, BIAS_GELU
  int64_t algorithm = -1;             // chosen by autotuning; -1: the library's default
  // How the CPU runtime (runtime/cpu/gemm.h) reads these: A is stored [m, k] ([k, m] when
  // lhs_transposed), B [k, n] ([n, k]), D [m, n]; a leading dim is the stored row stride and a
  // batch stride the distance between batches, both in elements; <= 0 means compact (the stored
  // column count; rows * leading dim). With 4 arguments the third is the bias (n elements of
  // output_type, added to every row) for BIAS* epilogues, else C (output_type, D's strides);
  // with 3 arguments and beta != 0, C is D's previous contents. GELU is the tanh approximation.
};

// A discrete Fourier transform as XLA's FftThunk runs it (FFTW on the CPU runtime, cuFFT on the
// GPU): over the last fft_length.size() (1 to 3) dimensions of row-major (default-layout)
// arrays, batched over the leading ones. Unnormalized forward transforms; IFFT and IRFFT are
// scaled by 1/prod(fft_length) as XLA does. RFFT writes the fft_length.back()/2+1
// non-negative frequencies of the last dimension; IRFFT reads that many. Arguments {input,
// output}. Checks and the derived geometry: runtime/executable/fft_config.h.
struct FftConfig {
  std::string fft_type;                 // "FFT", "IFFT", "RFFT", "IRFFT" (XLA's FftType)
  std::string input_type, output_type;  // "c64"/"c128" (complex) or "f32"/"f64" (RFFT in, IRFFT out)
  std::vector<int64_t> fft_length;      // the transformed dims' logical lengths, major to minor
  std::vector<int64_t> input_dimensions, output_dimensions;  // logical, row-major in memory
};

// A collective over devices (kCollective thunks of executables for several devices), decided at
// compile time so the runtime reads no HLO: device ids are global (replica * num_partitions +
// partition), the HLO's replica groups already resolved for its group mode.
// Arguments: the operand leaves (read) then as many result leaves (written), pairwise.
//   "all-reduce": result i = operand i reduced over the group, in group order.
//   "all-gather": result i = the group's operand i concatenated in group order: viewed as
//     [outer[i], group size, chunk_bytes[i]], member k's operand ([outer, chunk]) fills [., k, .].
//   "reduce-scatter": operand i viewed as [outer, group size, chunk]; member k gets the reduction
//     of every member's [., k, .].
//   "all-to-all": with dimension >= 0, operand and result viewed as [outer, group size, chunk]:
//     result[., j, .] of member k = member j's operand[., k, .]. With dimension -1 (the tuple form)
//     result j of member k = member j's operand k.
//   "collective-permute": the result of a target is its source's operand; zero where no pair
//     names the device as target. "collective-broadcast": every member gets group[0]'s operand.
//   "partition-id" / "replica-id": one argument, the running device's id as u32.
//   "collective-done": no arguments; the end of the async collective started by the thunk
//     with the same async_id (XLA's collective done thunk). Runtimes that run every collective
//     where it starts (the CPU) pass over it.
struct CollectiveConfig {
  std::string op;                          // XLA's opcode name (above); empty: a one-device copy
  std::string reduction;                   // "add", "mul", "min", "max", "and", "or", "xor"
  std::vector<std::string> element_types;  // per operand leaf
  std::vector<std::vector<int64_t>> groups;  // participants, every device in at most one group
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;  // collective-permute (devices)
  int64_t dimension = -1;                  // the HLO's dimension (all-gather, reduce-scatter, all-to-all)
  std::vector<int64_t> outer;              // per operand leaf (see above)
  std::vector<int64_t> chunk_bytes;        // per operand leaf
  // >= 0: an async start (all-reduce-start, ...; async-start of a collective): it may run on a
  // stream of its own, and the "collective-done" thunk with this id waits for it. -1: in order.
  int64_t async_id = -1;
};

enum class ThunkKind {
  kKernel,       // a compiled kernel: kernel_name over `arguments`
  kGemm,         // GemmConfig over arguments {A, B, (C or bias), D}
  kConvolution,  // a library convolution (cuDNN); config in `backend_config`
  kCopy,         // copy `size` bytes from arguments[0] to arguments[1]
  kMemset,       // set arguments[0] to `memset_value` (a 32-bit pattern repeated)
  kWhile,        // run `condition`, read the pred at `predicate`, run `body`, repeat
  kConditional,  // read the branch index (s32) or pred at `predicate`, run branches[i]
  kSequential,   // run `body` in order
  kCustomCall,   // a runtime-registered custom call `target` over arguments (results last)
  kCollective,   // a collective: `collective` (several devices), or with collective.op empty a
                 // one-device collective that copies operand i to result i; `target` names the op
  kCommandBuffer,  // `body` (kernel/GEMM thunks, CommandBufferConversionPass) captured once into a
                   // CUDA graph and replayed; arguments = the union of body's slices
  kFft,          // FftConfig over arguments {input, output}; on the GPU `kernel_name` (if set) is
                 // the compiler's kernel that scales an IFFT/IRFFT result, launched with `launch`
                 // over the same two arguments after cuFFT
};
const char* ThunkKindName(ThunkKind kind);  // "kKernel", ...

struct Thunk;
using ThunkSequence = std::vector<Thunk>;

struct Thunk {
  ThunkKind kind = ThunkKind::kKernel;
  std::string name;                     // the HLO instruction it came from (profiles, errors)
  std::vector<BufferSlice> arguments;   // kernel/library arguments, in the kernel's order
  std::vector<bool> written;            // per argument: whether the thunk writes it
  // kKernel
  std::string kernel_name;
  LaunchDimensions launch;
  // kGemm
  GemmConfig gemm;
  // kFft
  FftConfig fft;
  // kConvolution, kCustomCall, kCollective
  std::string backend_config;
  std::string target;                   // kCustomCall target / kCollective op name
  // kCollective
  CollectiveConfig collective;
  // kMemset
  uint32_t memset_value = 0;
  // kCopy
  int64_t size = 0;
  // kWhile / kConditional
  BufferSlice predicate;
  ThunkSequence condition;
  ThunkSequence body;
  std::vector<ThunkSequence> branches;
  int64_t trip_count = -1;              // known trip count of a while, -1 when unknown
  // kCommandBuffer: streams its CUDA-graph capture may fork onto (graph_lanes.h), the
  // compiler's choice (the profile's command_buffer_lanes); 1: the graph is a chain.
  int64_t lanes = 1;
  // Compile-time annotations (not serialized): which emitter made a kKernel ("loop", "scatter",
  // ...) and, when it launches fewer threads than its work wants, why the op is inherently
  // serial (the launch check, codegen/gpu/launch_check.h, then does not report it).
  std::string emitter;
  std::string serial_reason;
  // Bytes the kernel reads and writes (operand bytes scaled by how much of each it reads: a
  // gather of a few rows of a large table touches those rows); -1: its argument slices' sizes.
  int64_t bytes_touched = -1;
};

// Bytes of a thunk's argument slices, a slice read and written in place counted once.
int64_t DistinctArgumentBytes(const Thunk& t);

struct Executable {
  std::string module_name;
  std::string platform;                 // "cpu" or "gpu"
  std::string target;                   // CPU: LLVM target triple; GPU: "sm_90"
  std::string profile;                  // the hardware profile it was compiled for
  std::vector<uint8_t> code;            // CPU: ELF object; GPU: PTX text
  std::vector<BufferAllocation> allocations;
  std::vector<ArrayShape> parameter_shapes;   // entry parameters (flattened tuples in order)
  std::vector<ArrayShape> result_shapes;      // entry result leaves, in tuple order
  std::vector<BufferSlice> parameter_slices;  // where each parameter leaf lives
  std::vector<BufferSlice> result_slices;     // where each result leaf lives
  bool result_is_tuple = false;
  // The devices one run spans (the module's config): CpuExecutable::RunPartitioned runs
  // num_partitions * replica_count of them, device = replica * num_partitions + partition.
  int64_t num_partitions = 1;
  int64_t replica_count = 1;
  int64_t num_devices() const { return num_partitions * replica_count; }
  ThunkSequence thunks;
  std::string hlo_text;                 // the optimized, scheduled module
  std::string buffer_assignment_text;   // the ...buffer-assignment.txt dump

  // The `.hlox` file: magic "HLOX", a format version, then length-prefixed sections. Errors
  // (truncated file, wrong magic or version) name the file and the byte offset.
  std::string Serialize() const;
  static absl::StatusOr<Executable> Deserialize(const std::string& bytes, const std::string& origin);
};

// What the runtime relies on: allocation indices in order, every slice inside its allocation,
// entry shapes with sane sizes and layouts, written flags matching arguments, partitions in
// [1, 65536].
// Deserialize runs it; CpuExecutable::Load runs it on executables built in memory.
absl::Status ValidateExecutable(const Executable& executable, const std::string& origin);

// thunk_sequence.txt, in the form of XLA's dumps: one line per thunk, nested sequences indented.
std::string ThunkSequenceToString(const ThunkSequence& thunks);
// The numbers thunk_sequence.txt gives the thunks (pre-order across nested sequences, from 1),
// as (thunk address, number) sorted by address, for joining other records (per-thunk times) to
// its lines.
std::vector<std::pair<const Thunk*, int64_t>> NumberThunks(const ThunkSequence& thunks);
// The same for a whole executable: an executable for several devices starts with the line
// "devices: num_partitions=P replica_count=R" (a one-device one prints exactly as above).
std::string ExecutableThunksToString(const Executable& executable);

}  // namespace hloc::runtime
