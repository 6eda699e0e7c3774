// The pieces of scatter, scan and select-and-scatter that the CPU kernels (cpu_special_kernels.cc)
// and the GPU's kernels (gpu_special_emitters.cc) share: each backend decides how the work is
// split (parts of a CPU kernel, threads of a GPU grid) and calls these for its share.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/elemental/computation_generators.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "codegen/elemental/ir_array.h"
#include "ir/computation.h"
#include "llvm/IR/IRBuilder.h"

namespace hloc::codegen {

// scatter, serially: each operand copied (or generated) into its output unless it is already
// there, then the updates combined in order, which is XLA's order exactly. `operand_gen` gives
// operand i's generator, `operand_array` operand i's array when it is a kernel argument (for
// the in-place check; null otherwise).
// Where a scatter's update elements go (XLA's scatter semantics), shared by the serial scatter
// and the GPU's scatter kernel: the operand index of update element `u` (its scatter indices
// read through `indices_gen`, plus the window offset) and whether the whole window fits the
// operand (a window that does not fit is skipped).
struct ScatterIndexing {
  struct Place {
    llvm::Value* ok = nullptr;     // i1: the window fits
    std::vector<llvm::Value*> at;  // the operand index (i64 per dimension)
  };
  // Checks that the update window matches the operand.
  static absl::StatusOr<ScatterIndexing> For(const ScatterDimensionNumbers& dn, const Shape& operand_shape,
                                             const Shape& indices_shape, const Shape& updates_shape);
  absl::StatusOr<Place> PlaceOf(llvm::IRBuilderBase& b, const ElementGenerator& indices_gen,
                                const IrArray::Index& u) const;

  const ScatterDimensionNumbers* dn = nullptr;
  const Shape* operand_shape = nullptr;
  const Shape* indices_shape = nullptr;
  const Shape* updates_shape = nullptr;
  std::vector<int64_t> update_scatter_dims;  // update dimensions that are not window dimensions
  std::vector<int64_t> window_operand_dims;  // operand dimensions the window covers, in order
  bool implicit_index_dim = false;           // index_vector_dim is past the indices' rank
};

absl::Status EmitSerialScatter(llvm::IRBuilderBase& b, ElementalIrEmitter& emitter, const HloInstruction& scatter,
                               const std::vector<IrArray>& outputs,
                               const std::function<ElementGenerator(int64_t)>& operand_gen,
                               const std::function<const IrArray*(int64_t)>& operand_array);

// A scan's serial form: the layout of its operands and results (checked: the body must be
// element-independent), and one slice position's whole recurrence, with the body's generators
// made by `make_generators` from the parameter readers.
struct ScanSlices {
  int64_t c = 0, nin = 0, nres = 0, nout = 0;  // carries, inputs, results, non-carry results
  int64_t dim = 0, len = 0;                   // the scanned dimension and its length
  std::vector<int64_t> slice_dims;            // the other dimensions
};
absl::StatusOr<ScanSlices> AnalyzeScan(const HloInstruction& scan, const std::vector<IrArray>& operands,
                                       const std::vector<IrArray>& outputs);
using ScanBodyGenerators = std::function<absl::StatusOr<std::shared_ptr<GeneratorMap>>(
    const std::function<ElementGenerator(int64_t)>& parameter)>;
absl::Status EmitScanSlice(llvm::IRBuilderBase& b, const HloInstruction& scan, const ScanSlices& p,
                           const std::vector<IrArray>& operands, const std::vector<IrArray>& outputs,
                           const IrArray::Index& s, const ScanBodyGenerators& make_generators);

// select-and-scatter as a gather (parallel over the operand's shape, no atomics): the checks of
// its operands, and output element `o` computed and written.
absl::Status CheckSelectAndScatter(const std::vector<IrArray>& operands, const std::vector<IrArray>& outputs,
                                   const HloInstruction& sas);
absl::Status EmitSelectAndScatterElement(llvm::IRBuilderBase& b, ElementalIrEmitter& emitter,
                                         const HloInstruction& sas, const IrArray& operand, const IrArray& source,
                                         llvm::Value* init_value, const IrArray& out, const IrArray::Index& o);

}  // namespace hloc::codegen
