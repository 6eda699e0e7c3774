// Tiled transposes (XLA's TransposeFusion, xla/backends/gpu/codegen/emitters/transpose.cc).
//
// A "hero" is a transpose (or a copy that changes the layout) whose physically minor dimension
// moves. Normalized over physical dimensions (size-1 dimensions dropped, dimensions that stay
// adjacent merged: f32[32,256,256,64] -> {3,1,2,0} becomes [32,65536,64] with permutation
// {2,1,0}), it swaps two dimensions: x, the input's minor one, and y, the one the output has
// minor; the rest is a batch. A block of 32 x kRows threads walks tiles of kTileY (y) by 32 (x)
// in a grid-stride loop:
//  - load phase: consecutive threads along x (coalesced reads) compute each hero's operand and
//    park it in shared memory (33 columns, so the transposed reads hit distinct banks); roots
//    without a hero ("side outputs", bitcast-compatible with the hero's operand) are computed
//    and written at these input positions too;
//  - store phase: consecutive threads along y (coalesced writes) compute every root that is an
//    elementwise function of the heroes at the output position, the heroes' values read from
//    shared memory (their generators are overridden with the tile element), and write it.
// Tiles that lie wholly inside the array take a path without bounds checks that issues all of
// a thread's loads before any of their uses (the memory-level parallelism a copy needs).
#include <algorithm>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/gpu_emitters.h"
#include "passes/fusion/fusion_analysis.h"
#include "llvm/IR/Constants.h"

namespace hloc::codegen::gpu {
namespace {

constexpr int64_t kTileX = 32;  // one warp along x in the load phase, along y when storing
// Tile height (y extent, a multiple of 32) and rows of threads per block: 32x8 threads, 4
// elements each. On the H200 (transpose_copy.large, one kernel, 1.5 GiB moved) 32x8 took
// 0.484 ms, 32x4 0.482 ms, 32x16 0.542 ms.
constexpr int64_t kTileY = 32;
constexpr int64_t kRows = 8;

// A hero's transposition over physical dimensions.
struct NormalizedTranspose {
  std::vector<int64_t> dims;  // normalized input dimensions, major to minor
  std::vector<int64_t> perm;  // normalized output dimension q is input dimension perm[q]
  // Per normalized dimension: the logical input dimensions it merges, major to minor.
  std::vector<std::vector<int64_t>> groups;
  std::vector<int64_t> logical_perm;  // output logical dimension j is input dimension logical_perm[j]
  std::vector<int64_t> in_dims;       // the operand's logical dimensions
  bool SameForm(const NormalizedTranspose& o) const { return dims == o.dims && perm == o.perm; }
  int64_t x() const { return static_cast<int64_t>(dims.size()) - 1; }
  int64_t y() const { return perm.back(); }
};

// `in` is the operand, `out` the result (its layout decides the physical output order);
// result logical dimension j is operand dimension perm[j]. Empty when the physically minor
// dimension does not move (a plain loop reads and writes that coalesced).
std::optional<NormalizedTranspose> Normalize(const Shape& in, const Shape& out, const std::vector<int64_t>& perm) {
  const int64_t rank = in.rank();
  if (!in.IsArray() || !out.IsArray() || out.rank() != rank || static_cast<int64_t>(perm.size()) != rank)
    return std::nullopt;
  for (int64_t j = 0; j < rank; ++j)
    if (perm[j] < 0 || perm[j] >= rank || out.dimensions(j) != in.dimensions(perm[j])) return std::nullopt;
  std::vector<int64_t> m2m_in = MinorToMajorOf(in), m2m_out = MinorToMajorOf(out);
  std::vector<int64_t> pos(rank, -1);  // physical position (major first) of input dimension d
  std::vector<int64_t> phys_in;
  for (auto it = m2m_in.rbegin(); it != m2m_in.rend(); ++it)
    if (in.dimensions(*it) > 1) {
      pos[*it] = static_cast<int64_t>(phys_in.size());
      phys_in.push_back(*it);
    }
  // Runs of input dimensions that stay adjacent, in output order.
  std::vector<std::vector<int64_t>> runs;
  int64_t prev = -2;
  for (auto it = m2m_out.rbegin(); it != m2m_out.rend(); ++it) {
    const int64_t d = perm[*it];
    if (in.dimensions(d) <= 1) continue;
    if (runs.empty() || pos[d] != prev + 1) runs.emplace_back();
    runs.back().push_back(d);
    prev = pos[d];
  }
  if (runs.size() < 2) return std::nullopt;
  std::vector<int64_t> order(runs.size());  // runs by input position
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return pos[runs[a][0]] < pos[runs[b][0]]; });
  NormalizedTranspose t;
  std::vector<int64_t> rank_of(runs.size());
  for (size_t g = 0; g < order.size(); ++g) {
    rank_of[order[g]] = static_cast<int64_t>(g);
    int64_t size = 1;
    for (int64_t d : runs[order[g]]) size *= in.dimensions(d);
    t.dims.push_back(size);
    t.groups.push_back(runs[order[g]]);
  }
  for (size_t r = 0; r < runs.size(); ++r) t.perm.push_back(rank_of[r]);
  if (t.perm.back() == t.x()) return std::nullopt;
  t.logical_perm = perm;
  t.in_dims = in.dimensions();
  return t;
}

// The normalized form of a transpose or layout-changing copy (inside a fused computation).
std::optional<NormalizedTranspose> HeroForm(const HloInstruction* h) {
  if (h->operand_count() != 1 || !h->shape().IsArray()) return std::nullopt;
  if (IsComplex(h->shape().element_type())) return std::nullopt;
  if (h->opcode() == HloOpcode::kTranspose) return Normalize(h->operand(0)->shape(), h->shape(), h->attrs().dimensions);
  if (h->opcode() == HloOpcode::kCopy) {
    std::vector<int64_t> identity(h->shape().rank());
    for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int64_t>(i);
    return Normalize(h->operand(0)->shape(), h->shape(), identity);
  }
  return std::nullopt;
}

// Large enough to gain from tiling: the fusion analysis's bound (fusion::WorthTransposeTiling),
// so a transpose the fusion pass treats as a loop is emitted as one.
bool WorthTiling(const NormalizedTranspose& t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  return fusion::WorthTransposeTiling(t.dims[t.x()], t.dims[t.y()], n);
}

struct TileHero {
  NormalizedTranspose form;
  ElementGenerator operand;  // at the operand's logical index
  llvm::Type* type = nullptr;
  llvm::Value* tile = nullptr;  // shared memory [tile_y][33]
  std::shared_ptr<llvm::Value*> value = std::make_shared<llvm::Value*>(nullptr);  // store phase
};

struct TileRoot {
  IrArray target;   // the output (or a view of it in the shape of the value bitcast into it)
  ElementGenerator gen;
  int64_t hero = -1;          // hero roots: whose output index; -1: a side output
  // Side outputs: indexed like the first hero's operand (same_dims), or like a transpose of it
  // (index j is operand index perm[j]: a root over transpose(operand) then reads the very
  // element the tile holds), else through the physical linear position.
  bool same_dims = false;
  std::vector<int64_t> perm;
};

struct TilePlan {
  std::vector<TileHero> heroes;
  std::vector<TileRoot> roots;
};

// Logical operand index of the hero at normalized coordinates `c`.
std::vector<llvm::Value*> OperandIndex(const NormalizedTranspose& t, const std::vector<llvm::Value*>& c,
                                       llvm::IRBuilderBase& b) {
  std::vector<llvm::Value*> idx(t.in_dims.size(), b.getInt64(0));
  for (size_t g = 0; g < t.groups.size(); ++g) {
    const std::vector<int64_t>& dims = t.groups[g];
    if (dims.size() == 1) {
      idx[dims[0]] = c[g];
      continue;
    }
    // Merged dimensions: split the coordinate (32-bit division when it fits: 64-bit division by
    // a constant is a long multiply sequence on the GPU).
    const bool narrow = t.dims[g] < (int64_t{1} << 31);
    llvm::Type* ty = narrow ? b.getInt32Ty() : b.getInt64Ty();
    llvm::Value* rest = narrow ? b.CreateTrunc(c[g], ty) : c[g];
    for (size_t i = dims.size(); i-- > 0;) {
      llvm::Value* v = rest;
      if (i > 0) {
        llvm::Value* size = llvm::ConstantInt::get(ty, t.in_dims[dims[i]]);
        v = b.CreateURem(rest, size);
        rest = b.CreateUDiv(rest, size);
      }
      idx[dims[i]] = narrow ? b.CreateZExt(v, b.getInt64Ty()) : v;
    }
  }
  return idx;
}

std::vector<llvm::Value*> ResultIndex(const NormalizedTranspose& t, const std::vector<llvm::Value*>& in_idx) {
  std::vector<llvm::Value*> out(t.logical_perm.size());
  for (size_t j = 0; j < out.size(); ++j) out[j] = in_idx[t.logical_perm[j]];
  return out;
}


bool SlicesOverlap(const runtime::BufferSlice& a, const runtime::BufferSlice& b) {
  if (a.allocation != b.allocation) return false;
  return a.offset < b.offset + std::max<int64_t>(1, b.size) && b.offset < a.offset + std::max<int64_t>(1, a.size);
}

// Outputs written at transposed positions must not share bytes with what other threads still
// read (an in-place fusion is only safe when every element is read and written at one index).
bool OutputsOverlapOperands(const GpuKernel& k) {
  for (const runtime::BufferSlice& o : k.output_slices)
    for (const runtime::BufferSlice& i : k.operand_slices)
      if (SlicesOverlap(o, i)) return true;
  return false;
}

// Emits `body(checked)` once without bounds checks when `full` is a constant true, else as
// if (full) body(false) else body(true).
absl::Status EmitChecked(llvm::IRBuilderBase& b, llvm::Value* full, const std::string& name,
                         const std::function<absl::Status(bool)>& body) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(full); c != nullptr && c->isOne()) return body(false);
  return EmitIfElse(b, full, name, [&] { return body(false); }, [&] { return body(true); });
}

// Tiles of kTileY x kTileX over the hero's normalized form.
int64_t TileCount(const NormalizedTranspose& form) {
  const int64_t n = static_cast<int64_t>(form.dims.size());
  const int64_t xd = form.x(), yd = form.y();
  int64_t batch = 1;
  for (int64_t d = 0; d < n; ++d)
    if (d != xd && d != yd) batch *= form.dims[d];
  return batch * ((form.dims[xd] + kTileX - 1) / kTileX) * ((form.dims[yd] + kTileY - 1) / kTileY);
}

// The tiles' launch plan: blocks of kTileX x kRows threads, a grid-stride loop over the tiles
// of at most `waves` waves of resident blocks.
runtime::LaunchDimensions TileLaunch(const NormalizedTranspose& form, const GpuDeviceInfo& dev) {
  runtime::LaunchDimensions l;
  l.block_x = kTileX;
  l.block_y = kRows;
  const int64_t resident = std::max<int64_t>(1, dev.max_threads_per_sm / (kTileX * kRows)) * dev.sm_count;
  l.grid_x = std::max<int64_t>(1, std::min(TileCount(form), resident * dev.waves));
  return l;
}

absl::Status EmitTiles(GpuKernel& k, TilePlan& plan) {
  llvm::IRBuilderBase& b = *k.b;
  const NormalizedTranspose& form = plan.heroes[0].form;
  const int64_t n = static_cast<int64_t>(form.dims.size());
  const int64_t xd = form.x(), yd = form.y();
  const int64_t X = form.dims[xd], Y = form.dims[yd];
  const int64_t TY = kTileY, R = kRows;
  std::vector<int64_t> batch_dims, batch_sizes;
  for (int64_t d = 0; d < n; ++d)
    if (d != xd && d != yd) {
      batch_dims.push_back(d);
      batch_sizes.push_back(form.dims[d]);
    }
  const int64_t tiles_x = (X + kTileX - 1) / kTileX, tiles_y = (Y + TY - 1) / TY;
  const int64_t tiles = TileCount(form);

  k.launch = TileLaunch(form, *k.device);

  std::vector<llvm::Type*> tile_types;
  for (size_t i = 0; i < plan.heroes.size(); ++i) {
    TileHero& h = plan.heroes[i];
    llvm::Type* row = llvm::ArrayType::get(h.type, kTileX + 1);
    tile_types.push_back(llvm::ArrayType::get(row, TY));
    h.tile = k.SharedArray(row, TY, absl::StrCat("tile", i));
  }
  // Normalized strides of the first hero's operand (side outputs of other dimensions).
  std::vector<int64_t> strides(n, 1);
  for (int64_t d = n - 2; d >= 0; --d) strides[d] = strides[d + 1] * form.dims[d + 1];

  llvm::Value* tx = k.ThreadIdX();
  llvm::Value* ty = k.ThreadIdY();
  return EmitStridedLoop(b, k.BlockIdX(), b.getInt64(tiles), b.getInt64(k.launch.grid_x), "tiles",
                         [&](llvm::Value* t) -> absl::Status {
    llvm::Value* bx = b.CreateURem(t, b.getInt64(tiles_x));
    llvm::Value* rest = b.CreateUDiv(t, b.getInt64(tiles_x));
    llvm::Value* by = b.CreateURem(rest, b.getInt64(tiles_y));
    llvm::Value* bi = b.CreateUDiv(rest, b.getInt64(tiles_y));
    IrArray::Index batch_index = DelinearizeRowMajor(bi, batch_sizes, b);
    std::vector<llvm::Value*> base(n, nullptr);
    for (size_t j = 0; j < batch_dims.size(); ++j) base[batch_dims[j]] = batch_index[j];
    llvm::Value* x0 = b.CreateMul(bx, b.getInt64(kTileX), "x0", true, true);
    llvm::Value* y0 = b.CreateMul(by, b.getInt64(TY), "y0", true, true);
    llvm::Value* full = b.getTrue();
    if (X % kTileX != 0) full = b.CreateAnd(full, b.CreateICmpULE(b.CreateAdd(x0, b.getInt64(kTileX)), b.getInt64(X)));
    if (Y % TY != 0) full = b.CreateAnd(full, b.CreateICmpULE(b.CreateAdd(y0, b.getInt64(TY)), b.getInt64(Y)));
    auto coords = [&](llvm::Value* xx, llvm::Value* yy) {
      std::vector<llvm::Value*> c = base;
      c[xd] = xx;
      c[yd] = yy;
      return c;
    };
    auto inside = [&](llvm::Value* xx, llvm::Value* yy) {
      return b.CreateAnd(b.CreateICmpULT(xx, b.getInt64(X)), b.CreateICmpULT(yy, b.getInt64(Y)));
    };
    auto tile_ptr = [&](size_t h, llvm::Value* row, llvm::Value* col) {
      return b.CreateInBoundsGEP(tile_types[h], plan.heroes[h].tile, {b.getInt64(0), row, col});
    };
    auto side_index = [&](const TileRoot& r, const std::vector<llvm::Value*>& c,
                          const std::vector<llvm::Value*>& operand_index) -> IrArray::Index {
      if (r.same_dims) return IrArray::Index(operand_index);
      if (!r.perm.empty()) {
        std::vector<llvm::Value*> idx(r.perm.size());
        for (size_t j = 0; j < idx.size(); ++j) idx[j] = operand_index[r.perm[j]];
        return IrArray::Index(idx);
      }
      llvm::Value* linear = b.getInt64(0);
      for (int64_t d = 0; d < n; ++d)
        linear = b.CreateAdd(linear, b.CreateMul(c[d], b.getInt64(strides[d]), "", true, true), "", true, true);
      return IrArray::Delinearize(linear, r.target.shape(), b);
    };

    // Load phase: thread (tx, ty) covers x = x0 + tx, y = y0 + ty + R*p.
    absl::Status s = EmitChecked(b, full, "load", [&](bool checked) -> absl::Status {
      struct Pending {
        llvm::Value* row;
        std::vector<llvm::Value*> tile_values;
        std::vector<std::pair<IrArray::Index, llvm::Value*>> side_values;
      };
      std::vector<Pending> pending;
      auto flush = [&]() {
        for (Pending& p : pending) {
          for (size_t h = 0; h < plan.heroes.size(); ++h) b.CreateStore(p.tile_values[h], tile_ptr(h, p.row, tx));
          size_t si = 0;
          for (const TileRoot& r : plan.roots)
            if (r.hero < 0) {
              r.target.EmitWriteArrayElement(p.side_values[si].first, p.side_values[si].second, b);
              ++si;
            }
        }
        pending.clear();
      };
      for (int64_t p = 0; p < TY / R; ++p) {
        llvm::Value* row = b.CreateAdd(ty, b.getInt64(p * R), "", true, true);
        llvm::Value* xx = b.CreateAdd(x0, tx, "", true, true);
        llvm::Value* yy = b.CreateAdd(y0, row, "", true, true);
        auto compute = [&]() -> absl::Status {
          const std::vector<llvm::Value*> c = coords(xx, yy);
          Pending item{row, {}, {}};
          // One index computation per hero: side outputs reuse the first's, so reads of the
          // same element share one load.
          std::vector<std::vector<llvm::Value*>> operand_index;
          for (TileHero& h : plan.heroes) {
            operand_index.push_back(OperandIndex(h.form, c, b));
            absl::StatusOr<llvm::Value*> v = h.operand(IrArray::Index(operand_index.back()));
            if (!v.ok()) return v.status();
            item.tile_values.push_back(*v);
          }
          for (const TileRoot& r : plan.roots) {
            if (r.hero >= 0) continue;
            IrArray::Index idx = side_index(r, c, operand_index[0]);
            absl::StatusOr<llvm::Value*> v = r.gen(idx);
            if (!v.ok()) return v.status();
            item.side_values.push_back({idx, *v});
          }
          pending.push_back(std::move(item));
          return absl::OkStatus();
        };
        if (!checked) {
          if (absl::Status cs = compute(); !cs.ok()) return cs;
          continue;
        }
        absl::Status is = EmitIf(b, inside(xx, yy), "in", [&]() -> absl::Status {
          if (absl::Status cs = compute(); !cs.ok()) return cs;
          flush();
          return absl::OkStatus();
        });
        if (!is.ok()) return is;
      }
      flush();  // the unchecked path: every load above, then every store
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    k.Barrier();

    // Store phase: thread (tx, ty) covers y = y0 + tx + 32*(p / (32/R)), x = x0 + ty + R*(p % (32/R)).
    s = EmitChecked(b, full, "store", [&](bool checked) -> absl::Status {
      std::vector<std::pair<IrArray::Index, llvm::Value*>> values;  // per hero root, per pass
      std::vector<const TileRoot*> targets;
      auto flush = [&]() {
        for (size_t i = 0; i < values.size(); ++i)
          targets[i]->target.EmitWriteArrayElement(values[i].first, values[i].second, b);
        values.clear();
        targets.clear();
      };
      const int64_t x_passes = kTileX / R;
      for (int64_t p = 0; p < x_passes * (TY / kTileX); ++p) {
        llvm::Value* xl = b.CreateAdd(ty, b.getInt64((p % x_passes) * R), "", true, true);
        llvm::Value* yl = b.CreateAdd(tx, b.getInt64((p / x_passes) * kTileX), "", true, true);
        llvm::Value* xx = b.CreateAdd(x0, xl, "", true, true);
        llvm::Value* yy = b.CreateAdd(y0, yl, "", true, true);
        auto compute = [&]() -> absl::Status {
          const std::vector<llvm::Value*> c = coords(xx, yy);
          for (size_t h = 0; h < plan.heroes.size(); ++h)
            *plan.heroes[h].value = b.CreateLoad(plan.heroes[h].type, tile_ptr(h, yl, xl));
          for (const TileRoot& r : plan.roots) {
            if (r.hero < 0) continue;
            const NormalizedTranspose& f = plan.heroes[r.hero].form;
            IrArray::Index idx(ResultIndex(f, OperandIndex(f, c, b)));
            absl::StatusOr<llvm::Value*> v = r.gen(idx);
            if (!v.ok()) return v.status();
            values.push_back({idx, *v});
            targets.push_back(&r);
          }
          for (TileHero& h : plan.heroes) *h.value = nullptr;
          return absl::OkStatus();
        };
        if (!checked) {
          if (absl::Status cs = compute(); !cs.ok()) return cs;
          continue;
        }
        absl::Status is = EmitIf(b, inside(xx, yy), "in", [&]() -> absl::Status {
          if (absl::Status cs = compute(); !cs.ok()) return cs;
          flush();
          return absl::OkStatus();
        });
        if (!is.ok()) return is;
      }
      flush();
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    // The next tile overwrites shared memory.
    k.Barrier();
    return absl::OkStatus();
  });
}

ElementGenerator SlotReader(std::shared_ptr<llvm::Value*> slot, std::string name) {
  return [slot, name](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
    if (*slot == nullptr) return absl::InternalError(absl::StrCat("transpose hero %", name, " read outside its tile"));
    return *slot;
  };
}

// The users of `hero` up to the fusion's roots keep its element order: elementwise ops of its
// dimensions, then (at the top only) bitcasts into the outputs. Fills `cone`.
bool ElementwiseCone(const HloInstruction* hero, const HloInstruction* fused_root,
                     absl::flat_hash_set<const HloInstruction*>& cone) {
  std::vector<const HloInstruction*> work = {hero};
  while (!work.empty()) {
    const HloInstruction* cur = work.back();
    work.pop_back();
    for (const HloInstruction* u : cur->users()) {
      if (u == fused_root && u->opcode() == HloOpcode::kTuple) continue;
      if (cone.count(u)) continue;
      const bool elementwise = u->IsElementwise() && u->shape().IsArray() &&
                               u->shape().dimensions() == hero->shape().dimensions() && cur->opcode() != HloOpcode::kBitcast;
      const bool bitcast = u->opcode() == HloOpcode::kBitcast && u->shape().IsArray() &&
                           u->shape().element_type() == cur->shape().element_type();
      if (!elementwise && !bitcast) return false;
      if (IsComplex(u->shape().element_type())) return false;
      cone.insert(u);
      work.push_back(u);
    }
  }
  return true;
}

// A transpose of `operand` that `root` is an elementwise function of (other operands of those
// ops are read at the root's index), or null.
const HloInstruction* TransposeOfOperand(const HloInstruction* root, const HloInstruction* operand) {
  std::vector<const HloInstruction*> work = {root};
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!work.empty()) {
    const HloInstruction* cur = work.back();
    work.pop_back();
    if (!seen.insert(cur).second || !cur->shape().IsArray() || cur->shape().dimensions() != root->shape().dimensions())
      continue;
    if (cur->opcode() == HloOpcode::kTranspose && cur->operand(0) == operand) return cur;
    if (cur->IsElementwise())
      for (const HloInstruction* op : cur->operands()) work.push_back(op);
  }
  return nullptr;
}

// The pure half of TryEmitTiledTranspose: everything but the buffers.
std::optional<NormalizedTranspose> TiledTransposeForm(const HloInstruction& transpose,
                                                      const std::vector<Shape>& outputs) {
  if (outputs.size() != 1 || transpose.opcode() != HloOpcode::kTranspose) return std::nullopt;
  std::optional<NormalizedTranspose> form = Normalize(transpose.operand(0)->shape(), outputs[0], transpose.attrs().dimensions);
  if (!form || !WorthTiling(*form) || IsComplex(transpose.shape().element_type())) return std::nullopt;
  return form;
}

// What TryEmitTransposeFusion emits, decided before any IR: the heroes tiled together and each
// root's role. Shapes and the device only; the buffers are checked by the emitter.
struct TransposeFusionChoice {
  struct Hero {
    const HloInstruction* hero;
    NormalizedTranspose form;
    absl::flat_hash_set<const HloInstruction*> cone;
  };
  std::vector<Hero> heroes;
  struct Root {
    int64_t hero = -1;
    const HloInstruction* value = nullptr;  // what the root's generator computes
    std::optional<Shape> view;              // hero roots bitcast into the output: the value's shape
    bool same_dims = false;
    std::vector<int64_t> perm;
  };
  std::vector<Root> roots;
};

std::optional<TransposeFusionChoice> ChooseTransposeFusion(const HloComputation& fused, const std::vector<Shape>& outputs,
                                                           const GpuDeviceInfo& dev) {
  const HloInstruction* fused_root = fused.root_instruction();
  std::vector<const HloInstruction*> roots;
  if (fused_root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* op : fused_root->operands()) roots.push_back(op);
  } else {
    roots.push_back(fused_root);
  }
  if (roots.size() != outputs.size()) return std::nullopt;
  for (const HloInstruction* r : roots) {
    if (!r->shape().IsArray()) return std::nullopt;
    switch (r->opcode()) {
      case HloOpcode::kScatter: case HloOpcode::kSort: case HloOpcode::kTopK: case HloOpcode::kScan:
      case HloOpcode::kSelectAndScatter: case HloOpcode::kCustomCall: case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kTuple:
        return std::nullopt;
      default:
        break;
    }
  }
  // Candidate heroes and the form of the largest one.
  using Candidate = TransposeFusionChoice::Hero;
  std::vector<Candidate> candidates;
  for (const HloInstruction* inst : fused.MakeInstructionPostOrder()) {
    if (inst->opcode() != HloOpcode::kTranspose && inst->opcode() != HloOpcode::kCopy) continue;
    std::optional<NormalizedTranspose> form = HeroForm(inst);
    if (!form || !WorthTiling(*form)) continue;
    Candidate c{inst, *form, {}};
    if (!ElementwiseCone(inst, fused_root, c.cone)) continue;
    candidates.push_back(std::move(c));
  }
  if (candidates.empty()) return std::nullopt;
  size_t primary = 0;
  for (size_t i = 1; i < candidates.size(); ++i)
    if (candidates[i].hero->shape().num_elements() > candidates[primary].hero->shape().num_elements()) primary = i;
  // Heroes that share a root must agree on the output index: same form, same result shape.
  TransposeFusionChoice choice;
  for (const Candidate& c : candidates)
    if (c.form.SameForm(candidates[primary].form) && c.hero->shape() == candidates[primary].hero->shape())
      choice.heroes.push_back(c);
  int64_t shared_bytes = 0;
  for (const Candidate& c : choice.heroes)
    shared_bytes += kTileY * (kTileX + 1) * std::max<int64_t>(1, ByteWidth(c.hero->shape().element_type()));
  if (shared_bytes > dev.shared_memory_per_block) return std::nullopt;

  auto hero_of = [&](const HloInstruction* inst) -> int64_t {
    for (size_t i = 0; i < choice.heroes.size(); ++i)
      if (choice.heroes[i].hero == inst || choice.heroes[i].cone.count(inst)) return static_cast<int64_t>(i);
    return -1;
  };
  // Each root's role.
  const Shape& hero_operand = choice.heroes[0].hero->operand(0)->shape();
  bool any_hero_root = false;
  for (size_t o = 0; o < roots.size(); ++o) {
    const HloInstruction* r = roots[o];
    const HloInstruction* e = r;
    while (e->opcode() == HloOpcode::kBitcast && hero_of(e) >= 0) e = e->operand(0);
    TransposeFusionChoice::Root root;
    root.hero = hero_of(e);
    if (root.hero >= 0) {
      any_hero_root = true;
      root.value = e;
      if (e != r) {
        // Writes of the value bitcast into the output go through a view in its own shape: a
        // bitcast keeps the bytes where they are.
        Shape view = e->shape();
        if (!view.has_layout()) view.SetDefaultLayout();
        if (view.num_elements() != outputs[o].num_elements()) return std::nullopt;
        root.view = view;
      }
    } else {
      // A side output, computed at the first hero's operand positions.
      root.value = r;
      const Shape& s = outputs[o];
      if (const HloInstruction* t = TransposeOfOperand(r, choice.heroes[0].hero->operand(0));
          t != nullptr && !Normalize(hero_operand, s, t->attrs().dimensions)) {
        root.perm = t->attrs().dimensions;  // keeps the minor dimension: writes stay coalesced
      } else if (s.dimensions() == hero_operand.dimensions()) {
        root.same_dims = true;
      } else if (s.num_elements() != hero_operand.num_elements()) {
        return std::nullopt;
      }
    }
    choice.roots.push_back(std::move(root));
  }
  if (!any_hero_root) return std::nullopt;
  return choice;
}

std::vector<Shape> OutputShapes(const GpuKernel& k) {
  std::vector<Shape> out;
  for (const IrArray& a : k.outputs) out.push_back(a.shape());
  return out;
}

}  // namespace

bool TiledTransposeApplies(const HloInstruction& transpose, const std::vector<Shape>& outputs) {
  return TiledTransposeForm(transpose, outputs).has_value();
}

std::optional<runtime::LaunchDimensions> TransposeFusionLaunch(const HloComputation& fused,
                                                               const std::vector<Shape>& outputs,
                                                               const GpuDeviceInfo& dev) {
  std::optional<TransposeFusionChoice> choice = ChooseTransposeFusion(fused, outputs, dev);
  if (!choice) return std::nullopt;
  return TileLaunch(choice->heroes[0].form, dev);  // EmitTiles tiles by the first hero's form
}

std::optional<runtime::LaunchDimensions> TiledTransposeLaunch(const HloInstruction& transpose,
                                                              const std::vector<Shape>& outputs,
                                                              const GpuDeviceInfo& dev) {
  std::optional<NormalizedTranspose> form = TiledTransposeForm(transpose, outputs);
  if (!form) return std::nullopt;
  return TileLaunch(*form, dev);
}

absl::StatusOr<bool> TryEmitTiledTranspose(GpuKernel& k, const HloInstruction& transpose, const ElementGenerator& operand) {
  // False only when the outputs share bytes with the operands (buffer assignment decides that,
  // after the fusion's emitter kind was recorded) or the transpose is not this emitter's.
  if (OutputsOverlapOperands(k)) return false;
  std::optional<NormalizedTranspose> form = TiledTransposeForm(transpose, OutputShapes(k));
  if (!form) return false;
  TilePlan plan;
  TileHero h;
  h.form = *form;
  h.operand = operand;
  h.type = PrimitiveTypeToIrType(transpose.shape().element_type(), k.b->getContext());
  TileRoot r;
  r.target = k.outputs[0];
  r.gen = SlotReader(h.value, transpose.name());
  r.hero = 0;
  plan.heroes.push_back(std::move(h));
  plan.roots.push_back(std::move(r));
  if (absl::Status s = EmitTiles(k, plan); !s.ok()) return s;
  return true;
}

absl::StatusOr<bool> TryEmitTransposeFusion(GpuKernel& k, const HloComputation& fused,
                                            const std::function<ElementGenerator(int64_t)>& parameter) {
  // False when the outputs share bytes with the operands (buffer assignment decides that, after
  // the fusion's emitter kind was recorded), the fusion is not this emitter's, or a generator
  // cannot be made (the loop path then reports what has no elemental form).
  if (OutputsOverlapOperands(k)) return false;
  std::optional<TransposeFusionChoice> choice = ChooseTransposeFusion(fused, OutputShapes(k), *k.device);
  if (!choice) return false;
  TilePlan plan;
  for (const TransposeFusionChoice::Hero& c : choice->heroes) {
    TileHero h;
    h.form = c.form;
    h.type = PrimitiveTypeToIrType(c.hero->shape().element_type(), k.b->getContext());
    plan.heroes.push_back(std::move(h));
  }
  std::vector<const HloInstruction*> values;
  for (size_t o = 0; o < choice->roots.size(); ++o) {
    const TransposeFusionChoice::Root& cr = choice->roots[o];
    TileRoot root;
    root.hero = cr.hero;
    root.same_dims = cr.same_dims;
    root.perm = cr.perm;
    root.target = cr.view ? IrArray(k.outputs[o].base(), *cr.view) : k.outputs[o];
    values.push_back(cr.value);
    plan.roots.push_back(std::move(root));
  }
  absl::StatusOr<std::shared_ptr<GeneratorMap>> plain = MakeFusionGenerators(*k.emitter, fused, parameter, nullptr);
  if (!plain.ok()) return false;  // the loop path reports what has no elemental form
  absl::StatusOr<std::shared_ptr<GeneratorMap>> tiled =
      MakeFusionGenerators(*k.emitter, fused, parameter, [&](const HloInstruction* inst) -> ElementGenerator {
        for (size_t i = 0; i < choice->heroes.size(); ++i)
          if (choice->heroes[i].hero == inst) return SlotReader(plan.heroes[i].value, inst->name());
        return ElementGenerator();
      });
  if (!tiled.ok()) return false;
  for (size_t i = 0; i < choice->heroes.size(); ++i) {
    auto it = (*plain)->find(choice->heroes[i].hero->operand(0));
    if (it == (*plain)->end()) return false;
    plan.heroes[i].operand = it->second;
  }
  for (size_t o = 0; o < plan.roots.size(); ++o) {
    const GeneratorMap& map = plan.roots[o].hero >= 0 ? **tiled : **plain;
    auto it = map.find(values[o]);
    if (it == map.end()) return false;
    plan.roots[o].gen = it->second;
  }
  if (absl::Status s = EmitTiles(k, plan); !s.ok()) return s;
  return true;
}

}  // namespace hloc::codegen::gpu
