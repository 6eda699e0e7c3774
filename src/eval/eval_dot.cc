// dot and ragged-dot. Operands are packed into [batch][rows][contraction] arrays in one storage
// class chosen by the result type (double for floats, wrapping 64-bit integers for integers,
// complex<double> for complex), multiplied, and each result rounded once to the result type.
// The result's dimensions are XLA's: batch dims, lhs free dims, rhs free dims.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"

namespace hloc {
namespace {

using evalops::DimVec;

struct DotPlan {
  DimVec lhs_batch, rhs_batch, lhs_contract, rhs_contract, lhs_free, rhs_free;
  int64_t B = 1, M = 1, N = 1, K = 1;
  DimVec out_dims;  // batch..., lhs free..., rhs free...
};

bool Contains(const DimVec& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Validates dot dimension numbers against the operand shapes. `rhs_excluded` lists rhs
// dimensions that are neither batch, contracting nor free (ragged-dot's group dimension).
absl::StatusOr<DotPlan> PlanDot(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                                const DimVec& rhs_excluded = {}) {
  DotPlan p;
  p.lhs_batch = d.lhs_batch_dimensions;
  p.rhs_batch = d.rhs_batch_dimensions;
  p.lhs_contract = d.lhs_contracting_dimensions;
  p.rhs_contract = d.rhs_contracting_dimensions;
  if (p.lhs_batch.size() != p.rhs_batch.size())
    return absl::InvalidArgumentError("lhs and rhs have different numbers of batch dimensions");
  if (p.lhs_contract.size() != p.rhs_contract.size())
    return absl::InvalidArgumentError("lhs and rhs have different numbers of contracting dimensions");
  DimVec lhs_all = p.lhs_batch, rhs_all = p.rhs_batch;
  lhs_all.insert(lhs_all.end(), p.lhs_contract.begin(), p.lhs_contract.end());
  rhs_all.insert(rhs_all.end(), p.rhs_contract.begin(), p.rhs_contract.end());
  rhs_all.insert(rhs_all.end(), rhs_excluded.begin(), rhs_excluded.end());
  if (auto s = evalops::CheckDimList(lhs_all, lhs.rank(), "lhs batch+contracting dimensions"); !s.ok())
    return s;
  if (auto s = evalops::CheckDimList(rhs_all, rhs.rank(), "rhs batch+contracting dimensions"); !s.ok())
    return s;
  for (size_t i = 0; i < p.lhs_batch.size(); ++i) {
    const int64_t a = lhs.dimensions(p.lhs_batch[i]), b = rhs.dimensions(p.rhs_batch[i]);
    if (a != b)
      return absl::InvalidArgumentError(absl::StrCat("batch dimension sizes differ: ", a, " vs ", b));
    p.out_dims.push_back(a);
    p.B *= a;
  }
  for (size_t i = 0; i < p.lhs_contract.size(); ++i) {
    const int64_t a = lhs.dimensions(p.lhs_contract[i]), b = rhs.dimensions(p.rhs_contract[i]);
    if (a != b)
      return absl::InvalidArgumentError(absl::StrCat("contracting dimension sizes differ: ", a, " vs ", b));
    p.K *= a;
  }
  for (int64_t i = 0; i < lhs.rank(); ++i)
    if (!Contains(lhs_all, i)) {
      p.lhs_free.push_back(i);
      p.out_dims.push_back(lhs.dimensions(i));
      p.M *= lhs.dimensions(i);
    }
  for (int64_t i = 0; i < rhs.rank(); ++i)
    if (!Contains(rhs_all, i)) {
      p.rhs_free.push_back(i);
      p.out_dims.push_back(rhs.dimensions(i));
      p.N *= rhs.dimensions(i);
    }
  return p;
}

// Computes out[b][m][n] = sum_k L[b][m][k] * R[b][n][k] for the packed operands, with `mask`
// (when given) choosing which k of row (b, m) take part, and `store` writing each result.
template <typename T, typename Store, typename Mask>
void MatMul(const std::vector<T>& L, const std::vector<T>& R, int64_t B, int64_t M, int64_t N,
            int64_t K, Mask&& mask, Store&& store) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m) {
      const T* lrow = L.data() + (b * M + m) * K;
      for (int64_t n = 0; n < N; ++n) {
        const T* rrow = R.data() + (b * N + n) * K;
        T acc{};
        for (int64_t k = 0; k < K; ++k)
          if (mask(b, k)) acc = acc + lrow[k] * rrow[k];
        store((b * M + m) * N + n, acc);
      }
    }
}

absl::Status CheckDotOperands(const HloInstruction& inst, Operands ops, size_t count) {
  if (ops.size() != count)
    return evalops::Malformed(inst, absl::StrCat("expected ", count, " operands, got ", ops.size()));
  for (size_t i = 0; i < count; ++i)
    if (auto s = evalops::CheckArrayLiteral(*ops[i], absl::StrCat("operand ", i)); !s.ok())
      return evalops::Malformed(inst, std::string(s.message()));
  if (!inst.shape().IsArray()) return evalops::Malformed(inst, "result must be an array");
  const auto& prec = inst.attrs().precision_config.operand_precision;
  if (std::count(prec.begin(), prec.end(), Precision::kPackedNibble) > 0)
    return evalops::Malformed(inst, "PACKED_NIBBLE operand precision is not supported");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 2)
    return evalops::Malformed(inst, "sparse dot (extra metadata operands) is not supported");
  if (auto s = CheckDotOperands(inst, ops, 2); !s.ok()) return s;
  if (!inst.attrs().dot_dimension_numbers) return evalops::Malformed(inst, "missing dot dimension numbers");
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  absl::StatusOr<DotPlan> plan = PlanDot(lhs.shape(), rhs.shape(), *inst.attrs().dot_dimension_numbers);
  if (!plan.ok()) return evalops::Malformed(inst, std::string(plan.status().message()));
  if (auto s = evalops::CheckResultDims(inst.shape(), plan->out_dims, "dot"); !s.ok())
    return evalops::Malformed(inst, std::string(s.message()));
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();
  const DotPlan& p = *plan;
  const DimVec ls = evalops::PackedStrides(lhs.shape().dimensions(), {p.lhs_batch, p.lhs_free, p.lhs_contract});
  const DimVec rs = evalops::PackedStrides(rhs.shape().dimensions(), {p.rhs_batch, p.rhs_free, p.rhs_contract});
  evalops::WithStorageClass(inst.shape().element_type(), lhs, rhs, [&](auto l, auto r, auto set) {
    auto L = evalops::Pack(l, lhs.shape().dimensions(), ls, p.B * p.M * p.K);
    auto R = evalops::Pack(r, rhs.shape().dimensions(), rs, p.B * p.N * p.K);
    l.clear();
    r.clear();
    MatMul(L, R, p.B, p.M, p.N, p.K, [](int64_t, int64_t) { return true; },
           [&](int64_t i, auto v) { set(*out, i, v); });
  });
  return out;
}

// ragged-dot(lhs, rhs, group_sizes) as XLA's RaggedDotRewriter defines it. group_sizes has
// shape [d_0, ..., d_{r-2}, g]: its leading dims match lhs dims 0..r-2, and row/column i of
// the lhs ragged dimension belongs to group j when cum[j-1] <= i < cum[j] (cum = running sum).
//  - ragged non-contracting dim m: out[b,m,n] = sum_j mask(j,m) sum_k lhs[b,m,k] rhs[j,b,k,n]
//    (the rhs group dimension is rhs_group_dimensions[0]); rows in no group are 0.
//  - ragged contracting dim k: out[j,b,m,n] = sum_k mask(j,k) lhs[b,m,k] rhs[b,k,n].
//  - ragged batch dim: an ordinary dot.
absl::StatusOr<Literal> EvalRaggedDot(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (auto s = CheckDotOperands(inst, ops, 3); !s.ok()) return s;
  if (!inst.attrs().ragged_dot_dimension_numbers)
    return evalops::Malformed(inst, "missing ragged dot dimension numbers");
  const RaggedDotDimensionNumbers& rd = *inst.attrs().ragged_dot_dimension_numbers;
  const DotDimensionNumbers& dn = rd.dot_dimension_numbers;
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  const Literal& gs = *ops[2];
  if (rd.lhs_ragged_dimensions.size() != 1)
    return evalops::Malformed(inst, "lhs_ragged_dims must name exactly one dimension");
  const int64_t ragged = rd.lhs_ragged_dimensions[0];
  if (ragged < 0 || ragged >= lhs.shape().rank())
    return evalops::Malformed(inst, "lhs ragged dimension out of range");
  if (!IsIntegral(gs.element_type()) || gs.shape().rank() < 1)
    return evalops::Malformed(inst, "group_sizes must be an integer array of rank >= 1");
  const int64_t gr = gs.shape().rank();
  const int64_t G = gs.shape().dimensions(gr - 1);
  if (gr - 1 > lhs.shape().rank()) return evalops::Malformed(inst, "group_sizes has too many dimensions");
  for (int64_t i = 0; i + 1 < gr; ++i)
    if (gs.shape().dimensions(i) != lhs.shape().dimensions(i))
      return evalops::Malformed(inst, "group_sizes leading dimensions must match the lhs's");
  enum { kNonContracting, kContracting, kBatch } mode = kNonContracting;
  if (Contains(dn.lhs_contracting_dimensions, ragged)) mode = kContracting;
  else if (Contains(dn.lhs_batch_dimensions, ragged)) mode = kBatch;

  DimVec rhs_excluded;
  if (mode == kNonContracting) {
    if (rd.rhs_group_dimensions.size() != 1)
      return evalops::Malformed(inst, "rhs_group_dims must name one dimension for a ragged non-contracting dim");
    rhs_excluded = rd.rhs_group_dimensions;
  }
  absl::StatusOr<DotPlan> plan = PlanDot(lhs.shape(), rhs.shape(), dn, rhs_excluded);
  if (!plan.ok()) return evalops::Malformed(inst, std::string(plan.status().message()));
  DotPlan p = *plan;
  if (mode == kNonContracting && rhs.shape().dimensions(rhs_excluded[0]) != G)
    return evalops::Malformed(inst, "rhs group dimension size differs from the number of groups");
  DimVec out_dims = p.out_dims;
  if (mode == kContracting) out_dims.insert(out_dims.begin(), G);
  if (auto s = evalops::CheckResultDims(inst.shape(), out_dims, "ragged-dot"); !s.ok())
    return evalops::Malformed(inst, std::string(s.message()));
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();

  // Group boundaries per leading index of group_sizes: [lead][j] = (start, end).
  const std::vector<int64_t> sizes = evalops::LoadInts(gs);
  const int64_t leads = G > 0 ? static_cast<int64_t>(sizes.size()) / G : 0;
  std::vector<int64_t> starts(sizes.size()), ends(sizes.size());
  for (int64_t l = 0; l < leads; ++l) {
    int64_t cum = 0;
    for (int64_t j = 0; j < G; ++j) {
      starts[l * G + j] = cum;
      cum += sizes[l * G + j];
      ends[l * G + j] = cum;
    }
  }
  auto in_group = [&](int64_t lead, int64_t j, int64_t coord) {
    return starts[lead * G + j] <= coord && coord < ends[lead * G + j];
  };
  // For a set of lhs dims iterated in row-major order, the ragged coordinate and the
  // group_sizes leading index at each position (when those dims are among them).
  const DimVec& ldims = lhs.shape().dimensions();
  auto coords = [&](const DimVec& dims, std::vector<int64_t>* ragged_at, std::vector<int64_t>* lead_at) {
    DimVec sz;
    for (int64_t d : dims) sz.push_back(ldims[d]);
    DimVec idx(dims.size(), 0);
    int64_t total = 1;
    for (int64_t s : sz) total *= s;
    for (int64_t pos = 0; pos < total; ++pos) {
      DimVec full(ldims.size(), 0);
      for (size_t i = 0; i < dims.size(); ++i) full[dims[i]] = idx[i];
      ragged_at->push_back(full[ragged]);
      int64_t lead = 0;
      for (int64_t i = 0; i + 1 < gr; ++i) lead = lead * ldims[i] + full[i];
      lead_at->push_back(lead);
      evalops::NextIndex(sz, absl::MakeSpan(idx));
    }
  };
  for (int64_t i = 0; i + 1 < gr; ++i) {
    const bool ok = mode == kNonContracting ? !Contains(dn.lhs_contracting_dimensions, i)
                                            : Contains(dn.lhs_batch_dimensions, i);
    if (!ok) return evalops::Malformed(inst, "group_sizes leading dimensions must be lhs batch dimensions");
  }

  const DimVec ls = evalops::PackedStrides(ldims, {p.lhs_batch, p.lhs_free, p.lhs_contract});
  if (mode == kBatch) {
    const DimVec rs = evalops::PackedStrides(rhs.shape().dimensions(), {p.rhs_batch, p.rhs_free, p.rhs_contract});
    evalops::WithStorageClass(inst.shape().element_type(), lhs, rhs, [&](auto l, auto r, auto set) {
      auto L = evalops::Pack(l, ldims, ls, p.B * p.M * p.K);
      auto R = evalops::Pack(r, rhs.shape().dimensions(), rs, p.B * p.N * p.K);
      MatMul(L, R, p.B, p.M, p.N, p.K, [](int64_t, int64_t) { return true; },
             [&](int64_t i, auto v) { set(*out, i, v); });
    });
    return out;
  }
  if (mode == kNonContracting) {
    // rhs packed as [G][B][N][K]; row (b, m) uses the groups that contain its ragged coordinate.
    DimVec bm = p.lhs_batch;
    bm.insert(bm.end(), p.lhs_free.begin(), p.lhs_free.end());
    std::vector<int64_t> ragged_at, lead_at;
    coords(bm, &ragged_at, &lead_at);
    const DimVec rs = evalops::PackedStrides(rhs.shape().dimensions(),
                                             {rhs_excluded, p.rhs_batch, p.rhs_free, p.rhs_contract});
    const int64_t slab = p.B * p.N * p.K;
    evalops::WithStorageClass(inst.shape().element_type(), lhs, rhs, [&](auto l, auto r, auto set) {
      auto L = evalops::Pack(l, ldims, ls, p.B * p.M * p.K);
      auto R = evalops::Pack(r, rhs.shape().dimensions(), rs, G * slab);
      using T = typename decltype(L)::value_type;
      std::vector<T> acc(p.B * p.M * p.N);
      decltype(R) Rj(slab);
      for (int64_t j = 0; j < G; ++j) {
        std::copy(R.begin() + j * slab, R.begin() + (j + 1) * slab, Rj.begin());
        MatMul(L, Rj, p.B, p.M, p.N, p.K, [](int64_t, int64_t) { return true; },
               [&](int64_t i, T v) {
                 const int64_t row = i / std::max<int64_t>(p.N, 1);
                 if (in_group(lead_at[row], j, ragged_at[row])) acc[i] = acc[i] + v;
               });
      }
      for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i) set(*out, i, acc[i]);
    });
    return out;
  }
  // Ragged contracting: the contraction of group j keeps the k whose ragged coordinate is in j.
  std::vector<int64_t> kragged, klead_unused, bragged_unused, blead;
  coords(p.lhs_contract, &kragged, &klead_unused);
  coords(p.lhs_batch, &bragged_unused, &blead);
  const DimVec rs = evalops::PackedStrides(rhs.shape().dimensions(), {p.rhs_batch, p.rhs_free, p.rhs_contract});
  const int64_t per_group = p.B * p.M * p.N;
  evalops::WithStorageClass(inst.shape().element_type(), lhs, rhs, [&](auto l, auto r, auto set) {
    auto L = evalops::Pack(l, ldims, ls, p.B * p.M * p.K);
    auto R = evalops::Pack(r, rhs.shape().dimensions(), rs, p.B * p.N * p.K);
    for (int64_t j = 0; j < G; ++j)
      MatMul(L, R, p.B, p.M, p.N, p.K,
             [&](int64_t b, int64_t k) { return in_group(blead[b], j, kragged[k]); },
             [&](int64_t i, auto v) { set(*out, j * per_group + i, v); });
  });
  return out;
}

}  // namespace hloc
