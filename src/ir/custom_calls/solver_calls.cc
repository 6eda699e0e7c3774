// The solver custom calls' targets, backend_config and shape checks (solver_calls.h).
#include "ir/custom_calls/solver_calls.h"

#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/opcode.h"

namespace hloc {
namespace {

using DimVec = std::vector<int64_t>;

absl::Status Bad(const HloInstruction& inst, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(HloOpcodeString(inst.opcode())), " ", inst.name(), ": ", why));
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The value after `key` in a backend_config written as MLIR attributes ({lower = true},
// {uplo = 76 : ui8}) or JSON ({"lower":true}): the token up to the next separator, quotes
// stripped. nullopt when the key is absent.
std::optional<std::string> ConfigValue(std::string_view text, std::string_view key) {
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    if (at > 0 && IsIdentChar(text[at - 1])) continue;
    size_t p = at + key.size();
    if (p < text.size() && IsIdentChar(text[p])) continue;
    while (p < text.size() && (text[p] == '"' || text[p] == ' ')) ++p;
    if (p >= text.size() || (text[p] != '=' && text[p] != ':')) continue;
    ++p;
    while (p < text.size() && (text[p] == ' ' || text[p] == '"')) ++p;
    size_t end = p;
    while (end < text.size() && (IsIdentChar(text[end]) || text[end] == '-')) ++end;
    return std::string(text.substr(p, end - p));
  }
  return std::nullopt;
}

// A char attribute (LAPACK's 'L', 'U', 'N', 'T', 'C' as u8 numbers); `fallback` when absent.
absl::StatusOr<char> CharAttr(const HloInstruction& inst, std::string_view key, char fallback) {
  std::optional<std::string> v = ConfigValue(inst.attrs().backend_config, key);
  if (!v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || n <= 0 || n > 127)
    return Bad(inst, absl::StrCat("backend_config ", std::string(key), " must be a character code, got '", *v, "'"));
  return static_cast<char>(n);
}

absl::StatusOr<bool> BoolAttr(const HloInstruction& inst, std::string_view key, bool fallback) {
  std::optional<std::string> v = ConfigValue(inst.attrs().backend_config, key);
  if (!v) return fallback;
  if (*v == "true") return true;
  if (*v == "false") return false;
  return Bad(inst, absl::StrCat("backend_config ", std::string(key), " must be true or false, got '", *v, "'"));
}

// The element type a lapack_<t>xxx_ffi name implies (s, d, c, z).
std::optional<PrimitiveType> LapackLetterType(char c) {
  switch (c) {
    case 's': return PrimitiveType::F32;
    case 'd': return PrimitiveType::F64;
    case 'c': return PrimitiveType::C64;
    case 'z': return PrimitiveType::C128;
    default: return std::nullopt;
  }
}

bool IsFloatOrComplex(PrimitiveType t) {
  return t == PrimitiveType::F32 || t == PrimitiveType::F64 || t == PrimitiveType::C64 || t == PrimitiveType::C128;
}

// Leaf `i` of a tuple result (the only leaf of a non-tuple result when count == 1).
absl::StatusOr<const Shape*> Leaf(const HloInstruction& inst, int64_t i, int64_t count) {
  const Shape& s = inst.shape();
  if (!s.IsTuple() || static_cast<int64_t>(s.tuple_shapes().size()) != count)
    return Bad(inst, absl::StrCat("result must be a tuple of ", count, " arrays"));
  if (!s.tuple_shapes(i).IsArray()) return Bad(inst, absl::StrCat("result element ", i, " must be an array"));
  return &s.tuple_shapes(i);
}

absl::Status CheckBatchS32(const HloInstruction& inst, const Shape& leaf, DimVec dims, const char* what) {
  if (leaf.element_type() != PrimitiveType::S32 || leaf.dimensions() != dims)
    return Bad(inst, absl::StrCat(what, " must be s32[", absl::StrJoin(dims, ","), "], got ", leaf.ToString(false)));
  return absl::OkStatus();
}

// The result of a one-result call: the array itself or its only tuple element.
const Shape& SingleResult(const HloInstruction& inst) {
  const Shape& s = inst.shape();
  return s.IsTuple() && s.tuple_shapes().size() == 1 ? s.tuple_shapes(0) : s;
}

// ormqr / unmqr: (a[..., m, ka], tau[..., k], c[..., rows, cols]) -> c's shape, with the
// `left` / `transpose` bools (JAX writes them the same way on both backends). LAPACK's rules:
// the reflectors are the first k columns of a (k <= ka), each at most m long (k <= m), and
// Q (m x m) meets c's rows from the left or its columns from the right.
absl::StatusOr<SolverCall> ParseOrmqr(const HloInstruction& inst, SolverCall call) {
  // No defaults: a producer that spelled them otherwise (LAPACK's side/trans characters) would
  // otherwise get Q c silently in place of what it asked for.
  for (const char* key : {"left", "transpose"})
    if (!ConfigValue(inst.attrs().backend_config, key))
      return Bad(inst, absl::StrCat("ormqr needs the backend_config attribute '", key, "' (true or false)"));
  absl::StatusOr<bool> left = BoolAttr(inst, "left", true), transpose = BoolAttr(inst, "transpose", false);
  if (!left.ok()) return left.status();
  if (!transpose.ok()) return transpose.status();
  call.left = *left;
  call.transpose = *transpose;
  const Shape& a = inst.operand(0)->shape();
  const Shape& tau = inst.operand(1)->shape();
  const Shape& c = inst.operand(2)->shape();
  const int64_t r = a.rank();
  if (!tau.IsArray() || tau.element_type() != a.element_type() || tau.rank() != r - 1)
    return Bad(inst, absl::StrCat("tau must be an array of a's element type and rank ", r - 1, ", got ",
                                  tau.ToString(false)));
  if (!c.IsArray() || c.element_type() != a.element_type() || c.rank() != r)
    return Bad(inst, absl::StrCat("c must be an array of a's element type and rank ", r, ", got ", c.ToString(false)));
  for (int64_t d = 0; d + 2 < r; ++d)
    if (tau.dimensions(d) != a.dimensions(d) || c.dimensions(d) != a.dimensions(d))
      return Bad(inst, absl::StrCat("a, tau and c have different batch dimensions: ", a.ToString(false), ", ",
                                    tau.ToString(false), ", ", c.ToString(false)));
  const int64_t m = a.dimensions(r - 2), ka = a.dimensions(r - 1), k = tau.dimensions(r - 2);
  if (k > ka || k > m)
    return Bad(inst, absl::StrCat("ormqr needs k <= min(m, ka): tau ", tau.ToString(false),
                                  " has more reflectors than a ", a.ToString(false), " holds"));
  const int64_t meets = call.left ? c.dimensions(r - 2) : c.dimensions(r - 1);
  if (meets != m)
    return Bad(inst, absl::StrCat("ormqr with left = ", call.left ? "true" : "false", " needs c's ",
                                  call.left ? "rows" : "columns", " (", meets, ") to equal a's rows (", m, "), got a ",
                                  a.ToString(false), " and c ", c.ToString(false)));
  if (!SingleResult(inst).EqualIgnoringLayout(c))
    return Bad(inst, absl::StrCat("ormqr's result must have c's shape ", c.ToString(false), ", got ",
                                  SingleResult(inst).ToString(false)));
  return call;
}

}  // namespace

std::optional<SolverOp> SolverCallKind(std::string_view target) {
  if (target == kCusolverPotrfCallTarget) return SolverOp::kPotrf;
  if (target == kCusolverGetrfCallTarget) return SolverOp::kGetrf;
  if (target == kTriangularSolveCallTarget) return SolverOp::kTrsm;
  if (target == "cusolver_geqrf_ffi") return SolverOp::kGeqrf;
  if (target == "cusolver_orgqr_ffi") return SolverOp::kOrgqr;
  if (target == "cusolver_ormqr_ffi") return SolverOp::kOrmqr;
  if (target == "cusolver_syevd_ffi") return SolverOp::kSyevd;
  if (target == "cusolver_gesvd_ffi" || target == "cusolver_gesvdj_ffi") return SolverOp::kGesvd;
  if (target == "cu_lu_pivots_to_permutation") return SolverOp::kPivotsToPermutation;
  // lapack_<t><op>_ffi, <t> one of s, d, c, z
  constexpr std::string_view kPrefix = "lapack_", kSuffix = "_ffi";
  if (target.size() > kPrefix.size() + kSuffix.size() + 1 && target.substr(0, kPrefix.size()) == kPrefix &&
      target.substr(target.size() - kSuffix.size()) == kSuffix && LapackLetterType(target[kPrefix.size()])) {
    const std::string_view op =
        target.substr(kPrefix.size() + 1, target.size() - kPrefix.size() - kSuffix.size() - 1);
    if (op == "potrf") return SolverOp::kPotrf;
    if (op == "getrf") return SolverOp::kGetrf;
    if (op == "trsm") return SolverOp::kTrsm;
    if (op == "geqrf") return SolverOp::kGeqrf;
    if (op == "orgqr" || op == "ungqr") return SolverOp::kOrgqr;
    if (op == "ormqr" || op == "unmqr") return SolverOp::kOrmqr;
    if (op == "syevd" || op == "heevd") return SolverOp::kSyevd;
    if (op == "gesdd" || op == "gesvd") return SolverOp::kGesvd;
  }
  return std::nullopt;
}

absl::StatusOr<SolverCall> ParseSolverCall(const HloInstruction& inst) {
  const std::string& target = inst.attrs().custom_call_target;
  std::optional<SolverOp> op = SolverCallKind(target);
  if (!op) return Bad(inst, absl::StrCat("\"", target, "\" is not a solver custom call"));
  SolverCall call;
  call.op = *op;
  const bool lapack = target.rfind("lapack_", 0) == 0;
  const int64_t want_operands = *op == SolverOp::kTrsm    ? (lapack ? 3 : 2)
                                : *op == SolverOp::kOrgqr ? 2
                                : *op == SolverOp::kOrmqr ? 3
                                                          : 1;
  if (inst.operand_count() != want_operands)
    return Bad(inst, absl::StrCat(target, " takes ", want_operands, " operand(s), got ", inst.operand_count()));
  const Shape& a = inst.operand(0)->shape();
  if (*op == SolverOp::kPivotsToPermutation) {
    if (!a.IsArray() || a.rank() < 1 || a.element_type() != PrimitiveType::S32)
      return Bad(inst, absl::StrCat("pivots must be an s32 array of rank >= 1, got ", a.ToString(false)));
    const Shape& out = inst.shape();
    if (!out.IsArray() || out.element_type() != PrimitiveType::S32 || out.rank() != a.rank())
      return Bad(inst, "the permutation must be an s32 array of the pivots' rank");
    for (int64_t d = 0; d + 1 < a.rank(); ++d)
      if (out.dimensions(d) != a.dimensions(d)) return Bad(inst, "pivots and permutation differ in batch dimensions");
    return call;
  }
  if (!a.IsArray() || a.rank() < 2 || !IsFloatOrComplex(a.element_type()))
    return Bad(inst, absl::StrCat("operand must be an f32/f64/c64/c128 array of rank >= 2, got ", a.ToString(false)));
  if (lapack && LapackLetterType(target[7]) != a.element_type())
    return Bad(inst, absl::StrCat(target, " does not take ", a.ToString(false)));
  const int64_t r = a.rank();
  const int64_t m = a.dimensions(r - 2), n = a.dimensions(r - 1);
  const DimVec batch(a.dimensions().begin(), a.dimensions().end() - 2);
  switch (*op) {
    case SolverOp::kPotrf: {
      if (m != n) return Bad(inst, absl::StrCat("Cholesky needs square matrices, got ", a.ToString(false)));
      if (lapack) {
        absl::StatusOr<char> uplo = CharAttr(inst, "uplo", 'L');
        if (!uplo.ok()) return uplo.status();
        if (*uplo != 'L' && *uplo != 'U') return Bad(inst, "uplo must be 'L' or 'U'");
        call.lower = *uplo == 'L';
      } else {
        absl::StatusOr<bool> lower = BoolAttr(inst, "lower", false);
        if (!lower.ok()) return lower.status();
        call.lower = *lower;
      }
      absl::StatusOr<const Shape*> f = Leaf(inst, 0, 2), info = Leaf(inst, 1, 2);
      if (!f.ok()) return f.status();
      if (!info.ok()) return info.status();
      if (!(*f)->EqualIgnoringLayout(a)) return Bad(inst, "the factor must have the operand's shape");
      if (absl::Status s = CheckBatchS32(inst, **info, batch, "info"); !s.ok()) return s;
      return call;
    }
    case SolverOp::kGetrf: {
      absl::StatusOr<const Shape*> lu = Leaf(inst, 0, 3), piv = Leaf(inst, 1, 3), info = Leaf(inst, 2, 3);
      for (auto* l : {&lu, &piv, &info})
        if (!l->ok()) return l->status();
      if (!(*lu)->EqualIgnoringLayout(a)) return Bad(inst, "the LU result must have the operand's shape");
      DimVec pdims = batch;
      pdims.push_back(std::min(m, n));
      if (absl::Status s = CheckBatchS32(inst, **piv, pdims, "pivots"); !s.ok()) return s;
      if (absl::Status s = CheckBatchS32(inst, **info, batch, "info"); !s.ok()) return s;
      return call;
    }
    case SolverOp::kGeqrf: {
      absl::StatusOr<const Shape*> f = Leaf(inst, 0, 2), tau = Leaf(inst, 1, 2);
      if (!f.ok()) return f.status();
      if (!tau.ok()) return tau.status();
      if (!(*f)->EqualIgnoringLayout(a)) return Bad(inst, "geqrf's first result must have the operand's shape");
      DimVec tdims = batch;
      tdims.push_back(std::min(m, n));
      if ((*tau)->element_type() != a.element_type() || (*tau)->dimensions() != tdims)
        return Bad(inst, absl::StrCat("tau must be ", std::string(PrimitiveTypeName(a.element_type())), "[",
                                      absl::StrJoin(tdims, ","), "]"));
      return call;
    }
    case SolverOp::kOrgqr: {
      const Shape& tau = inst.operand(1)->shape();
      if (!tau.IsArray() || tau.element_type() != a.element_type() || tau.rank() != r - 1)
        return Bad(inst, "tau must be an array of a's element type and rank - 1");
      for (int64_t d = 0; d + 2 < r; ++d)
        if (tau.dimensions(d) != a.dimensions(d)) return Bad(inst, "a and tau have different batch dimensions");
      if (m < n || tau.dimensions(r - 2) > n)
        return Bad(inst, absl::StrCat("the Householder product needs m >= n >= k, got a ", a.ToString(false), " and tau ",
                                      tau.ToString(false)));
      const Shape& out = inst.shape().IsTuple() && inst.shape().tuple_shapes().size() == 1
                             ? inst.shape().tuple_shapes(0) : inst.shape();
      if (!out.EqualIgnoringLayout(a)) return Bad(inst, "the Householder product must have a's shape");
      return call;
    }
    case SolverOp::kOrmqr:
      return ParseOrmqr(inst, call);
    case SolverOp::kSyevd: {
      if (m != n) return Bad(inst, absl::StrCat("eigh needs square matrices, got ", a.ToString(false)));
      if (lapack) {
        absl::StatusOr<char> uplo = CharAttr(inst, "uplo", 'L'), mode = CharAttr(inst, "mode", 'V');
        if (!uplo.ok()) return uplo.status();
        if (!mode.ok()) return mode.status();
        call.lower = *uplo == 'L';
        call.compute_uv = *mode == 'V';
      } else {
        absl::StatusOr<bool> lower = BoolAttr(inst, "lower", true);
        if (!lower.ok()) return lower.status();
        call.lower = *lower;
      }
      absl::StatusOr<const Shape*> v = Leaf(inst, 0, 3), w = Leaf(inst, 1, 3), info = Leaf(inst, 2, 3);
      for (auto* l : {&v, &w, &info})
        if (!l->ok()) return l->status();
      if (!(*v)->EqualIgnoringLayout(a)) return Bad(inst, "the eigenvectors must have the operand's shape");
      DimVec wdims = batch;
      wdims.push_back(n);
      const PrimitiveType real = a.element_type() == PrimitiveType::C64    ? PrimitiveType::F32
                                 : a.element_type() == PrimitiveType::C128 ? PrimitiveType::F64 : a.element_type();
      if ((*w)->element_type() != real || (*w)->dimensions() != wdims)
        return Bad(inst, absl::StrCat("the eigenvalues must be ", std::string(PrimitiveTypeName(real)), "[",
                                      absl::StrJoin(wdims, ","), "]"));
      if (absl::Status s = CheckBatchS32(inst, **info, batch, "info"); !s.ok()) return s;
      return call;
    }
    case SolverOp::kGesvd: {
      call.jacobi = target == "cusolver_gesvdj_ffi";
      if (lapack) {
        absl::StatusOr<char> mode = CharAttr(inst, "mode", 'A');
        if (!mode.ok()) return mode.status();
        call.full_matrices = *mode == 'A';
        call.compute_uv = *mode != 'N';
      } else {
        absl::StatusOr<bool> full = BoolAttr(inst, "full_matrices", true), uv = BoolAttr(inst, "compute_uv", true),
                             tr = BoolAttr(inst, "transposed", false);
        for (auto* c : {&full, &uv, &tr})
          if (!c->ok()) return c->status();
        call.full_matrices = *full;
        call.compute_uv = *uv;
        call.transposed = *tr && !call.jacobi;
      }
      absl::StatusOr<const Shape*> f = Leaf(inst, 0, 5), s = Leaf(inst, 1, 5), u = Leaf(inst, 2, 5),
                                   v = Leaf(inst, 3, 5), info = Leaf(inst, 4, 5);
      for (auto* l : {&f, &s, &u, &v, &info})
        if (!l->ok()) return l->status();
      if (!(*f)->EqualIgnoringLayout(a)) return Bad(inst, "the SVD's first result must have the operand's shape");
      const int64_t k = std::min(m, n);
      DimVec sdims = batch;
      sdims.push_back(k);
      const PrimitiveType real = a.element_type() == PrimitiveType::C64    ? PrimitiveType::F32
                                 : a.element_type() == PrimitiveType::C128 ? PrimitiveType::F64 : a.element_type();
      if ((*s)->element_type() != real || (*s)->dimensions() != sdims)
        return Bad(inst, absl::StrCat("the singular values must be ", std::string(PrimitiveTypeName(real)), "[",
                                      absl::StrJoin(sdims, ","), "]"));
      if (call.compute_uv || call.jacobi) {
        // Logical shapes: u [m, m|k], vt [n|k, n] (gesvd, gesdd), v [n, n|k] (gesvdj).
        const Shape& us = call.transposed ? **v : **u;
        const Shape& vs = call.transposed ? **u : **v;
        const int64_t uc = call.full_matrices ? m : k, vk = call.full_matrices ? n : k;
        DimVec ud = batch, vd = batch;
        ud.push_back(m), ud.push_back(uc);
        if (call.jacobi) vd.push_back(n), vd.push_back(vk);
        else vd.push_back(vk), vd.push_back(n);
        if (us.element_type() != a.element_type() || us.dimensions() != ud)
          return Bad(inst, absl::StrCat("u must be [", absl::StrJoin(ud, ","), "], got ", us.ToString(false)));
        if (vs.element_type() != a.element_type() || vs.dimensions() != vd)
          return Bad(inst, absl::StrCat(call.jacobi ? "v" : "vt", " must be [", absl::StrJoin(vd, ","), "], got ",
                                        vs.ToString(false)));
      }
      if (call.transposed && m > n) return Bad(inst, "gesvd with transposed = true needs m <= n");
      if (!call.transposed && !call.jacobi && !lapack && m < n) return Bad(inst, "cusolver_gesvd_ffi needs m >= n");
      if (absl::Status st = CheckBatchS32(inst, **info, batch, "info"); !st.ok()) return st;
      return call;
    }
    case SolverOp::kPivotsToPermutation:
      return call;
    case SolverOp::kTrsm: {
      if (m != n) return Bad(inst, absl::StrCat("the triangular matrix must be square, got ", a.ToString(false)));
      const Shape& b = inst.operand(1)->shape();
      if (!b.IsArray() || b.rank() != r || b.element_type() != a.element_type())
        return Bad(inst, "b must be an array of a's rank and element type");
      for (int64_t d = 0; d + 2 < r; ++d)
        if (b.dimensions(d) != a.dimensions(d)) return Bad(inst, "a and b have different batch dimensions");
      const Shape& out = inst.shape().IsTuple() && !inst.shape().tuple_shapes().empty() ? inst.shape().tuple_shapes(0)
                                                                                      : inst.shape();
      if (!out.EqualIgnoringLayout(b)) return Bad(inst, "the result must have b's shape");
      if (lapack) {
        call.has_alpha = true;
        const Shape& alpha = inst.operand(2)->shape();
        if (!alpha.IsArray() || alpha.rank() != 0 || alpha.element_type() != a.element_type())
          return Bad(inst, "alpha must be a scalar of a's element type");
        absl::StatusOr<char> side = CharAttr(inst, "side", 'L'), uplo = CharAttr(inst, "uplo", 'L'),
                             trans = CharAttr(inst, "trans_x", 'N'), diag = CharAttr(inst, "diag", 'N');
        for (auto* c : {&side, &uplo, &trans, &diag})
          if (!c->ok()) return c->status();
        call.left_side = *side == 'L';
        call.lower = *uplo == 'L';
        call.unit_diagonal = *diag == 'U';
        call.transpose_a = *trans == 'T'   ? TriangularTranspose::kTranspose
                           : *trans == 'C' ? TriangularTranspose::kAdjoint
                                           : TriangularTranspose::kNoTranspose;
      } else {
        absl::StatusOr<bool> left = BoolAttr(inst, "left_side", false), lower = BoolAttr(inst, "lower", false),
                             unit = BoolAttr(inst, "unit_diagonal", false);
        for (auto* c : {&left, &lower, &unit})
          if (!c->ok()) return c->status();
        call.left_side = *left;
        call.lower = *lower;
        call.unit_diagonal = *unit;
        std::optional<std::string> t = ConfigValue(inst.attrs().backend_config, "transpose_a");
        call.transpose_a = !t || *t == "NO_TRANSPOSE" ? TriangularTranspose::kNoTranspose
                           : *t == "TRANSPOSE"        ? TriangularTranspose::kTranspose
                                                      : TriangularTranspose::kAdjoint;
        if (t && *t != "NO_TRANSPOSE" && *t != "TRANSPOSE" && *t != "ADJOINT")
          return Bad(inst, absl::StrCat("transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, got ", *t));
      }
      const int64_t k = call.left_side ? b.dimensions(r - 2) : b.dimensions(r - 1);
      if (k != n) return Bad(inst, "a's size does not match b's solved dimension");
      return call;
    }
  }
  return Bad(inst, "unknown solver op");
}

}  // namespace hloc
