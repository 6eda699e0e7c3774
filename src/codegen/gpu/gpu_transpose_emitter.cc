// Tiled transposes (XLA's TransposeFusion, xla/backends/gpu/codegen/emitters/transpose.cc): when
// the output's minor dimension is not the input's, a block of 32x8 threads reads a 32x32 tile
// with consecutive threads along the input's minor dimension, parks it in shared memory (33
// columns, so the transposed reads hit distinct banks), and writes it with consecutive threads
// along the output's minor dimension: both global accesses coalesce.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/cpu/kernel_util.h"
#include "codegen/gpu/gpu_emitters.h"

namespace hloc::codegen::gpu {

absl::StatusOr<bool> TryEmitTiledTranspose(GpuKernel& k, const HloInstruction& transpose, const ElementGenerator& operand) {
  if (k.outputs.size() != 1 || transpose.operand_count() != 1) return false;
  const Shape& in = transpose.operand(0)->shape();
  const Shape& out_shape = k.outputs[0].shape();
  const std::vector<int64_t>& perm = transpose.attrs().dimensions;
  const int64_t rank = in.rank();
  if (rank < 2 || static_cast<int64_t>(perm.size()) != rank) return false;
  if (IsComplex(in.element_type())) return false;
  const int64_t x = MinorToMajorOf(in)[0];            // the input's minor dimension
  const int64_t y = perm[MinorToMajorOf(out_shape)[0]];  // the input dimension the output has minor
  if (x == y) return false;
  constexpr int64_t kTile = 32, kRowsPerPass = 8;
  const int64_t X = in.dimensions(x), Y = in.dimensions(y);
  if (X < 16 || Y < 16 || in.num_elements() < 4096) return false;
  std::vector<int64_t> others, other_dims;
  for (int64_t d = 0; d < rank; ++d)
    if (d != x && d != y) {
      others.push_back(d);
      other_dims.push_back(in.dimensions(d));
    }
  int64_t batch = 1;
  for (int64_t d : other_dims) batch *= d;
  const int64_t tiles_x = (X + kTile - 1) / kTile, tiles_y = (Y + kTile - 1) / kTile;
  const int64_t tiles = batch * tiles_x * tiles_y;

  llvm::IRBuilderBase& b = *k.b;
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = kTile;
  k.launch.block_y = kRowsPerPass;
  const int64_t resident = std::max<int64_t>(1, k.device->max_threads_per_sm / (kTile * kRowsPerPass)) * k.device->sm_count;
  k.launch.grid_x = std::max<int64_t>(1, std::min(tiles, resident * k.device->waves));
  llvm::Type* elem = PrimitiveTypeToIrType(in.element_type(), b.getContext());
  llvm::Type* row_ty = llvm::ArrayType::get(elem, kTile + 1);
  llvm::Type* tile_ty = llvm::ArrayType::get(row_ty, kTile);
  llvm::Value* tile = k.SharedArray(row_ty, kTile, "tile");
  llvm::Value* tx = k.ThreadIdX();
  llvm::Value* ty = k.ThreadIdY();
  absl::Status s = EmitStridedLoop(b, k.BlockIdX(), b.getInt64(tiles), b.getInt64(k.launch.grid_x), "tiles",
                                   [&](llvm::Value* t) -> absl::Status {
    llvm::Value* bx = b.CreateURem(t, b.getInt64(tiles_x));
    llvm::Value* rest = b.CreateUDiv(t, b.getInt64(tiles_x));
    llvm::Value* by = b.CreateURem(rest, b.getInt64(tiles_y));
    llvm::Value* bi = b.CreateUDiv(rest, b.getInt64(tiles_y));
    IrArray::Index other = DelinearizeRowMajor(bi, other_dims, b);
    llvm::Value* x0 = b.CreateMul(bx, b.getInt64(kTile));
    llvm::Value* y0 = b.CreateMul(by, b.getInt64(kTile));
    auto input_index = [&](llvm::Value* yy, llvm::Value* xx) {
      std::vector<llvm::Value*> idx(rank);
      for (size_t j = 0; j < others.size(); ++j) idx[others[j]] = other[j];
      idx[x] = xx;
      idx[y] = yy;
      return idx;
    };
    for (int64_t pass = 0; pass < kTile / kRowsPerPass; ++pass) {
      llvm::Value* r = b.CreateAdd(ty, b.getInt64(pass * kRowsPerPass));
      llvm::Value* yy = b.CreateAdd(y0, r);
      llvm::Value* xx = b.CreateAdd(x0, tx);
      llvm::Value* inside = b.CreateAnd(b.CreateICmpULT(yy, b.getInt64(Y)), b.CreateICmpULT(xx, b.getInt64(X)));
      absl::Status rs = cpu::EmitIf(b, inside, "load", [&]() -> absl::Status {
        absl::StatusOr<llvm::Value*> v = operand(IrArray::Index(input_index(yy, xx)));
        if (!v.ok()) return v.status();
        b.CreateStore(*v, b.CreateInBoundsGEP(tile_ty, tile, {b.getInt64(0), r, tx}));
        return absl::OkStatus();
      });
      if (!rs.ok()) return rs;
    }
    k.Barrier();
    for (int64_t pass = 0; pass < kTile / kRowsPerPass; ++pass) {
      llvm::Value* c = b.CreateAdd(ty, b.getInt64(pass * kRowsPerPass));
      llvm::Value* yy = b.CreateAdd(y0, tx);
      llvm::Value* xx = b.CreateAdd(x0, c);
      llvm::Value* inside = b.CreateAnd(b.CreateICmpULT(yy, b.getInt64(Y)), b.CreateICmpULT(xx, b.getInt64(X)));
      absl::Status ws = cpu::EmitIf(b, inside, "store", [&]() -> absl::Status {
        llvm::Value* v = b.CreateLoad(elem, b.CreateInBoundsGEP(tile_ty, tile, {b.getInt64(0), tx, c}));
        std::vector<llvm::Value*> in_idx = input_index(yy, xx);
        std::vector<llvm::Value*> out_idx(rank);
        for (int64_t j = 0; j < rank; ++j) out_idx[j] = in_idx[perm[j]];
        k.outputs[0].EmitWriteArrayElement(IrArray::Index(out_idx), v, b);
        return absl::OkStatus();
      });
      if (!ws.ok()) return ws;
    }
    // The next tile overwrites shared memory.
    k.Barrier();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return true;
}

}  // namespace hloc::codegen::gpu
