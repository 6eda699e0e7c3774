// cholesky, triangular-solve, fft and the batch-norm ops. Arithmetic is in double
// (complex<double> for complex types) and each result rounds once to its element type.
#include <cmath>
#include <complex>

#include "absl/strings/str_cat.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"

namespace hloc {
namespace {

using evalops::DimVec;
using C = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

bool IsFloatOrComplex(PrimitiveType t) { return IsFloatingPoint(t) || IsComplex(t); }

void StoreValue(Literal& out, int64_t i, C v) {
  if (IsComplex(out.element_type())) out.SetComplex(i, v);
  else out.SetDouble(i, v.real());
}

// Batched square matrices: the last two dims are n x n.
absl::Status CheckSquareBatch(const HloInstruction& inst, const Literal& a, int64_t* n, int64_t* batch) {
  if (!a.shape().IsArray() || a.shape().rank() < 2 || !IsFloatOrComplex(a.element_type()))
    return evalops::Malformed(inst, "operand must be a float or complex array of rank >= 2");
  const int64_t r = a.shape().rank();
  *n = a.shape().dimensions(r - 1);
  if (a.shape().dimensions(r - 2) != *n) return evalops::Malformed(inst, "matrices must be square");
  *batch = *n ? a.element_count() / (*n * *n) : 0;
  return absl::OkStatus();
}

}  // namespace

// cholesky(a), lower=L: as XLA's CholeskyExpander. The upper form factors the transpose of a
// and transposes the factor back. Only the lower (upper) triangle of a is read; the other
// triangle of the result is zero; a matrix whose factorization takes the square root of a
// negative (or NaN) pivot comes back all NaN.
absl::StatusOr<Literal> EvalCholesky(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 1) return evalops::Malformed(inst, "expected one operand");
  const Literal& a = *ops[0];
  int64_t n = 0, batch = 0;
  if (auto s = CheckSquareBatch(inst, a, &n, &batch); !s.ok()) return s;
  if (!inst.shape().EqualIgnoringLayout(a.shape())) return evalops::Malformed(inst, "result must have the operand's shape");
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();
  const bool lower = inst.attrs().lower;
  const bool complex = IsComplex(a.element_type());
  std::vector<C> m(n * n), l(n * n);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = b * n * n;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) m[i * n + j] = a.GetComplex(base + (lower ? i * n + j : j * n + i));
    std::fill(l.begin(), l.end(), C(0));
    bool error = false;
    for (int64_t j = 0; j < n; ++j) {
      C d = m[j * n + j];
      for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * std::conj(l[j * n + k]);
      const double piv = std::sqrt(d.real());  // complex pivots use the real part, as XLA
      if (std::isnan(piv)) error = true;
      l[j * n + j] = piv;
      for (int64_t i = j + 1; i < n; ++i) {
        C v = m[i * n + j];
        for (int64_t k = 0; k < j; ++k) v -= l[i * n + k] * std::conj(l[j * n + k]);
        l[i * n + j] = v / piv;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const C v = error ? C(NAN, complex ? NAN : 0.0) : l[lower ? i * n + j : j * n + i];
        StoreValue(*out, base + i * n + j, v);
      }
  }
  return out;
}

// triangular-solve(a, b): solves op(a) x = b (left_side) or x op(a) = b, op = identity,
// transpose or adjoint, reading only the lower or upper triangle of a (with an implicit unit
// diagonal when unit_diagonal).
absl::StatusOr<Literal> EvalTriangularSolve(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 2) return evalops::Malformed(inst, "expected a and b");
  const Literal& a = *ops[0];
  const Literal& b = *ops[1];
  int64_t k = 0, batch = 0;
  if (auto s = CheckSquareBatch(inst, a, &k, &batch); !s.ok()) return s;
  const int64_t r = a.shape().rank();
  if (!b.shape().IsArray() || b.shape().rank() != r || b.element_type() != a.element_type())
    return evalops::Malformed(inst, "b must be an array of a's rank and type");
  for (int64_t d = 0; d + 2 < r; ++d)
    if (a.shape().dimensions(d) != b.shape().dimensions(d)) return evalops::Malformed(inst, "batch dimensions differ");
  const auto& at = inst.attrs();
  const int64_t rows = b.shape().dimensions(r - 2), cols = b.shape().dimensions(r - 1);
  if ((at.left_side ? rows : cols) != k) return evalops::Malformed(inst, "a's size does not match b's solved dimension");
  if (!inst.shape().EqualIgnoringLayout(b.shape())) return evalops::Malformed(inst, "result must have b's shape");
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();
  const bool transposed = at.transpose_a != TriangularTranspose::kNoTranspose;
  const bool conj = at.transpose_a == TriangularTranspose::kAdjoint;
  // e = op(tri(a)); on the right side we solve e^T x^T = b^T instead, so use e^T.
  const bool flip = transposed != !at.left_side;
  const bool e_lower = at.lower != flip;
  std::vector<C> e(k * k), x;
  for (int64_t bi = 0; bi < batch; ++bi) {
    const int64_t abase = bi * k * k, bbase = bi * rows * cols;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) {
        // Element (i, j) of tri(a), then op and side applied by index swapping.
        const int64_t si = flip ? j : i, sj = flip ? i : j;
        const bool in_tri = at.lower ? si >= sj : si <= sj;
        C v = in_tri ? a.GetComplex(abase + si * k + sj) : C(0);
        if (si == sj && at.unit_diagonal) v = 1;
        e[i * k + j] = conj ? std::conj(v) : v;
      }
    // Each right-hand side is a column of b (left side) or a row of b (right side).
    const int64_t nrhs = at.left_side ? cols : rows;
    const int64_t step = at.left_side ? cols : 1;  // distance between entries of one rhs
    x.assign(k, C(0));
    for (int64_t q = 0; q < nrhs; ++q) {
      const int64_t first = bbase + (at.left_side ? q : q * cols);
      for (int64_t i = 0; i < k; ++i) x[i] = b.GetComplex(first + i * step);
      if (e_lower) {
        for (int64_t i = 0; i < k; ++i) {
          C v = x[i];
          for (int64_t j = 0; j < i; ++j) v -= e[i * k + j] * x[j];
          x[i] = v / e[i * k + i];
        }
      } else {
        for (int64_t i = k - 1; i >= 0; --i) {
          C v = x[i];
          for (int64_t j = i + 1; j < k; ++j) v -= e[i * k + j] * x[j];
          x[i] = v / e[i * k + i];
        }
      }
      for (int64_t i = 0; i < k; ++i) StoreValue(*out, first + i * step, x[i]);
    }
  }
  return out;
}

namespace {

// In-place iterative radix-2 FFT of a power-of-two length (unscaled).
void Radix2(std::vector<C>& a, int sign) {
  const int64_t n = static_cast<int64_t>(a.size());
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const double ang = sign * 2.0 * kPi / static_cast<double>(len);
    for (int64_t i = 0; i < n; i += len)
      for (int64_t k = 0; k < len / 2; ++k) {
        // Twiddles computed directly (not by repeated multiplication) to keep double accuracy.
        const C w(std::cos(ang * k), std::sin(ang * k));
        const C u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
  }
}

// Unscaled DFT of `x` with exp(sign * 2 pi i jk / n): direct for short lengths, radix-2 for
// powers of two, Bluestein's chirp-z otherwise, so any length costs O(n log n).
void Dft(std::vector<C>& x, int sign) {
  const int64_t n = static_cast<int64_t>(x.size());
  if (n <= 1) return;
  if (n <= 32) {
    std::vector<C> res(n);
    for (int64_t k = 0; k < n; ++k) {
      C acc = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double ang = sign * 2.0 * kPi * static_cast<double>((j * k) % n) / static_cast<double>(n);
        acc += x[j] * C(std::cos(ang), std::sin(ang));
      }
      res[k] = acc;
    }
    x.swap(res);
    return;
  }
  if ((n & (n - 1)) == 0) return Radix2(x, sign);
  // jk = (j^2 + k^2 - (k-j)^2) / 2: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), w_m = exp(sign pi i m^2 / n).
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  std::vector<C> w(n), a(m, C(0)), b(m, C(0));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t k2 = (k * k) % (2 * n);  // exact: the chirp's period is 2n
    const double ang = sign * kPi * static_cast<double>(k2) / static_cast<double>(n);
    w[k] = C(std::cos(ang), std::sin(ang));
  }
  for (int64_t k = 0; k < n; ++k) a[k] = x[k] * w[k];
  b[0] = std::conj(w[0]);
  for (int64_t k = 1; k < n; ++k) b[k] = b[m - k] = std::conj(w[k]);
  Radix2(a, -1);
  Radix2(b, -1);
  for (int64_t i = 0; i < m; ++i) a[i] *= b[i];
  Radix2(a, 1);
  for (int64_t k = 0; k < n; ++k) x[k] = a[k] * w[k] / static_cast<double>(m);
}

// DFT of every line of `v` (dims `dims`) along `axis`: sign -1 forward, +1 inverse (the
// inverse also divides by the length).
void DftAxis(std::vector<C>& v, const DimVec& dims, int64_t axis, int sign) {
  const int64_t n = dims[axis];
  if (n == 0) return;
  std::vector<C> line(n);
  const double scale = sign > 0 ? 1.0 / static_cast<double>(n) : 1.0;
  const int64_t stride = RowMajorStrides(dims)[axis];
  DimVec outer = dims;
  outer[axis] = 1;
  evalops::ForEachOffset(outer, RowMajorStrides(dims), [&](int64_t, int64_t base) {
    line.resize(n);
    for (int64_t j = 0; j < n; ++j) line[j] = v[base + j * stride];
    Dft(line, sign);
    for (int64_t j = 0; j < n; ++j) v[base + j * stride] = line[j] * scale;
  });
}

}  // namespace

// fft over the last len(fft_length) dims: FFT/IFFT complex to complex (IFFT scaled by 1/N),
// RFFT real to the N/2+1 non-negative frequencies, IRFFT the inverse of that (the missing half
// of the last axis comes from Hermitian symmetry; imaginary parts that symmetry forces to zero
// are ignored). Every axis costs O(n log n) (radix-2 or Bluestein), computed in double.
absl::StatusOr<Literal> EvalFft(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 1 || !ops[0]->shape().IsArray()) return evalops::Malformed(inst, "expected one array operand");
  const Literal& x = *ops[0];
  const auto& at = inst.attrs();
  const DimVec& len = at.fft_length;
  const int64_t r = static_cast<int64_t>(len.size());
  const int64_t rank = x.shape().rank();
  if (r < 1 || r > 3 || r > rank) return evalops::Malformed(inst, "fft_length must have 1 to 3 entries, at most the rank");
  for (int64_t l : len)
    if (l < 0) return evalops::Malformed(inst, "negative fft_length");
  const bool real_in = at.fft_type == FftType::kRfft;
  const bool real_out = at.fft_type == FftType::kIrfft;
  if (real_in ? !IsFloatingPoint(x.element_type()) : !IsComplex(x.element_type()))
    return evalops::Malformed(inst, "operand type does not suit the fft type");
  DimVec in_dims = x.shape().dimensions(), out_dims = in_dims;
  DimVec want_in = in_dims;
  for (int64_t i = 0; i < r; ++i) want_in[rank - r + i] = len[i];
  const int64_t half = len[r - 1] == 0 ? 0 : len[r - 1] / 2 + 1;  // XLA's shape inference: 0 stays 0
  if (real_out) want_in[rank - 1] = half;
  if (want_in != in_dims) return evalops::Malformed(inst, "operand's transformed dims do not match fft_length");
  for (int64_t i = 0; i < r; ++i) out_dims[rank - r + i] = len[i];
  if (real_in) out_dims[rank - 1] = half;
  if (!inst.shape().IsArray() || inst.shape().dimensions() != out_dims ||
      (real_out ? !IsFloatingPoint(inst.shape().element_type()) : !IsComplex(inst.shape().element_type())))
    return evalops::Malformed(inst, "result shape does not match the fft");
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();
  std::vector<C> v = evalops::LoadComplex(x);
  switch (at.fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
      for (int64_t i = 0; i < r; ++i) DftAxis(v, in_dims, rank - r + i, at.fft_type == FftType::kFft ? -1 : 1);
      for (int64_t i = 0; i < out->element_count(); ++i) out->SetComplex(i, v[i]);
      break;
    case FftType::kRfft: {
      for (int64_t i = 0; i < r; ++i) DftAxis(v, in_dims, rank - r + i, -1);
      const int64_t n = in_dims[rank - 1];
      const int64_t lines = n ? x.element_count() / n : 0;
      for (int64_t l = 0; l < lines; ++l)
        for (int64_t kk = 0; kk < half; ++kk) out->SetComplex(l * half + kk, v[l * n + kk]);
      break;
    }
    case FftType::kIrfft: {
      for (int64_t i = 0; i + 1 < r; ++i) DftAxis(v, in_dims, rank - r + i, 1);
      const int64_t n = len[r - 1];
      const int64_t lines = half ? x.element_count() / half : 0;
      std::vector<C> full;
      for (int64_t l = 0; l < lines; ++l) {
        // The whole spectrum from its non-negative half: X[n-k] = conj(X[k]).
        const C* spec = v.data() + l * half;
        full.resize(n);
        for (int64_t kk = 0; kk < n; ++kk) full[kk] = kk < half ? spec[kk] : std::conj(spec[n - kk]);
        Dft(full, 1);
        for (int64_t t = 0; t < n; ++t) out->SetDouble(l * n + t, full[t].real() / static_cast<double>(n));
      }
      break;
    }
  }
  return out;
}

namespace {

struct FeatureLayout {
  int64_t features = 0, stride = 1, per_feature = 0;
  int64_t Of(int64_t i) const { return (i / stride) % features; }
};

absl::StatusOr<FeatureLayout> CheckBatchNorm(const HloInstruction& inst, Operands ops, size_t count) {
  if (ops.size() != count) return evalops::Malformed(inst, absl::StrCat("expected ", count, " operands"));
  const Literal& x = *ops[0];
  if (!x.shape().IsArray() || !IsFloatingPoint(x.element_type()))
    return evalops::Malformed(inst, "operand must be a floating-point array");
  const int64_t f = inst.attrs().feature_index;
  if (f < 0 || f >= x.shape().rank()) return evalops::Malformed(inst, "feature_index out of range");
  FeatureLayout fl;
  fl.features = x.shape().dimensions(f);
  fl.stride = RowMajorStrides(x.shape().dimensions())[f];
  fl.per_feature = fl.features ? x.element_count() / fl.features : 0;
  for (size_t i = 1; i < count; ++i) {
    const Literal& p = *ops[i];
    const bool full = inst.opcode() == HloOpcode::kBatchNormGrad && i == 4;
    if (full ? !p.shape().EqualIgnoringLayout(x.shape())
             : (!p.shape().IsArray() || p.shape().rank() != 1 || p.shape().dimensions(0) != fl.features ||
                !IsFloatingPoint(p.element_type())))
      return evalops::Malformed(inst, absl::StrCat("operand ", i, " has the wrong shape"));
  }
  return fl;
}

// A result literal for leaf `i` of inst.shape() (or the shape itself) that must have `dims`.
absl::StatusOr<Literal> BnResult(const HloInstruction& inst, int64_t i, int64_t count, const DimVec& dims) {
  absl::StatusOr<const Shape*> leaf = evalops::ResultLeaf(inst.shape(), i, count);
  if (!leaf.ok()) return evalops::Malformed(inst, std::string(leaf.status().message()));
  if ((*leaf)->dimensions() != dims || !IsFloatingPoint((*leaf)->element_type()))
    return evalops::Malformed(inst, absl::StrCat("result ", i, " has the wrong shape"));
  return Literal::Create(**leaf);
}

}  // namespace

// batch-norm-training(x, scale, offset) -> (y, mean, var); batch-norm-inference(x, scale,
// offset, mean, var) -> y; batch-norm-grad(x, scale, mean, var, dy) -> (dx, dscale, doffset).
// Statistics are over every dimension but feature_index; var is the biased variance.
absl::StatusOr<Literal> EvalBatchNorm(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  const double eps = inst.attrs().epsilon;
  const HloOpcode op = inst.opcode();
  const size_t count = op == HloOpcode::kBatchNormTraining ? 3 : 5;
  if (op != HloOpcode::kBatchNormTraining && op != HloOpcode::kBatchNormInference && op != HloOpcode::kBatchNormGrad)
    return evalops::Malformed(inst, "not a batch-norm op");
  absl::StatusOr<FeatureLayout> fl = CheckBatchNorm(inst, ops, count);
  if (!fl.ok()) return fl.status();
  const std::vector<double> x = evalops::LoadDoubles(*ops[0]);
  const DimVec& dims = ops[0]->shape().dimensions();
  const DimVec fdims = {fl->features};
  const int64_t total = static_cast<int64_t>(x.size());
  const double N = static_cast<double>(fl->per_feature);
  std::vector<double> scale = evalops::LoadDoubles(*ops[1]);

  if (op == HloOpcode::kBatchNormInference) {
    const std::vector<double> offset = evalops::LoadDoubles(*ops[2]), mean = evalops::LoadDoubles(*ops[3]),
                              var = evalops::LoadDoubles(*ops[4]);
    absl::StatusOr<Literal> y = BnResult(inst, 0, 1, dims);
    if (!y.ok()) return y.status();
    for (int64_t i = 0; i < total; ++i) {
      const int64_t c = fl->Of(i);
      y->SetDouble(i, (x[i] - mean[c]) * scale[c] / std::sqrt(var[c] + eps) + offset[c]);
    }
    return y;
  }

  std::vector<double> mean(fl->features, 0.0), var(fl->features, 0.0);
  if (op == HloOpcode::kBatchNormTraining) {
    for (int64_t i = 0; i < total; ++i) mean[fl->Of(i)] += x[i];
    for (double& m : mean) m /= N;
    for (int64_t i = 0; i < total; ++i) {
      const double d = x[i] - mean[fl->Of(i)];
      var[fl->Of(i)] += d * d;
    }
    for (double& v : var) v /= N;
    const std::vector<double> offset = evalops::LoadDoubles(*ops[2]);
    absl::StatusOr<Literal> y = BnResult(inst, 0, 3, dims);
    absl::StatusOr<Literal> ym = BnResult(inst, 1, 3, fdims);
    absl::StatusOr<Literal> yv = BnResult(inst, 2, 3, fdims);
    for (auto* r : {&y, &ym, &yv})
      if (!r->ok()) return r->status();
    for (int64_t i = 0; i < total; ++i) {
      const int64_t c = fl->Of(i);
      y->SetDouble(i, (x[i] - mean[c]) * scale[c] / std::sqrt(var[c] + eps) + offset[c]);
    }
    for (int64_t c = 0; c < fl->features; ++c) {
      ym->SetDouble(c, mean[c]);
      yv->SetDouble(c, var[c]);
    }
    std::vector<Literal> parts;
    parts.push_back(std::move(*y));
    parts.push_back(std::move(*ym));
    parts.push_back(std::move(*yv));
    Literal out = Literal::MakeTuple(std::move(parts));
    out.mutable_shape() = inst.shape();
    return out;
  }

  // Gradient, with XLA's BatchNormExpander formulas:
  //   dx = scale * rsqrt(var + eps) / N * (N * dy - sum(dy) - (x - mean) * sum(dy * (x - mean)) / (var + eps))
  //   dscale = sum(dy * (x - mean)) * rsqrt(var + eps);  doffset = sum(dy)
  mean = evalops::LoadDoubles(*ops[2]);
  var = evalops::LoadDoubles(*ops[3]);
  const std::vector<double> dy = evalops::LoadDoubles(*ops[4]);
  std::vector<double> sum_dy(fl->features, 0.0), sum_dy_xc(fl->features, 0.0);
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = fl->Of(i);
    sum_dy[c] += dy[i];
    sum_dy_xc[c] += dy[i] * (x[i] - mean[c]);
  }
  absl::StatusOr<Literal> dx = BnResult(inst, 0, 3, dims);
  absl::StatusOr<Literal> dscale = BnResult(inst, 1, 3, fdims);
  absl::StatusOr<Literal> doffset = BnResult(inst, 2, 3, fdims);
  for (auto* r : {&dx, &dscale, &doffset})
    if (!r->ok()) return r->status();
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = fl->Of(i);
    const double inv = 1.0 / std::sqrt(var[c] + eps);
    const double v = scale[c] * inv / N *
                     (N * dy[i] - sum_dy[c] - (x[i] - mean[c]) * sum_dy_xc[c] / (var[c] + eps));
    dx->SetDouble(i, v);
  }
  for (int64_t c = 0; c < fl->features; ++c) {
    dscale->SetDouble(c, sum_dy_xc[c] / std::sqrt(var[c] + eps));
    doffset->SetDouble(c, sum_dy[c]);
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(*dx));
  parts.push_back(std::move(*dscale));
  parts.push_back(std::move(*doffset));
  Literal out = Literal::MakeTuple(std::move(parts));
  out.mutable_shape() = inst.shape();
  return out;
}

}  // namespace hloc
