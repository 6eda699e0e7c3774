// LinalgConfig's text form: "op=potrf;type=f32;lower=1;...;shapes=f32:2,4,4:1,2,0|s32:2:0".
// Read from .hlox files, so every field is checked and errors say which one is wrong.
#include "runtime/executable/linalg_config.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc::runtime {
namespace {

absl::Status Bad(const std::string& why) { return absl::InvalidArgumentError(absl::StrCat("linalg config: ", why)); }

int64_t ElementBytes(const std::string& t) {
  if (t == "f32" || t == "s32") return 4;
  if (t == "f64" || t == "c64") return 8;
  if (t == "c128") return 16;
  if (t == "s8" || t == "u8") return 1;
  return 0;
}

// (This Abseil's string_view is not std's, so a plain splitter instead of absl::StrSplit.)
std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == sep) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

absl::StatusOr<std::vector<int64_t>> ParseInts(const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  for (const std::string& s : Split(text, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < 0 || v > (int64_t{1} << 40)) return Bad(absl::StrCat("bad number '", s, "'"));
    out.push_back(v);
    if (out.size() > 64) return Bad("too many dimensions");
  }
  return out;
}

}  // namespace

std::string LinalgTargetOf(const std::string& op) {
  for (const char* t : {kLinalgPotrfTarget, kLinalgGetrfTarget, kLinalgTrsmTarget, kLinalgGeqrfTarget,
                        kLinalgOrgqrTarget, kLinalgOrmqrTarget, kLinalgSyevdTarget, kLinalgGesvdTarget,
                        kLinalgPermTarget})
    if (std::string(t) == "linalg." + op) return t;
  return "";
}

bool IsLinalgTarget(const std::string& target) {
  return target.rfind("linalg.", 0) == 0 && !LinalgTargetOf(target.substr(7)).empty();
}

std::string LinalgConfig::ToString() const {
  std::vector<std::string> shape_text;
  for (const ArrayShape& s : shapes)
    shape_text.push_back(absl::StrCat(s.element_type, ":", absl::StrJoin(s.dimensions, ","), ":",
                                      absl::StrJoin(s.minor_to_major, ",")));
  return absl::StrCat("op=", op, ";type=", type, ";lower=", lower ? 1 : 0, ";left=", left_side ? 1 : 0,
                      ";trans=", std::string(1, transpose), ";unit=", unit_diagonal ? 1 : 0,
                      ";alpha=", has_alpha ? 1 : 0, ";info=", has_info ? 1 : 0, ";chol=", cholesky_op ? 1 : 0,
                      ";full=", full_matrices ? 1 : 0, ";uv=", compute_uv ? 1 : 0, ";jacobi=", jacobi ? 1 : 0,
                      ";transposed=", transposed ? 1 : 0,
                      ";shapes=", absl::StrJoin(shape_text, "|"));
}

absl::StatusOr<LinalgConfig> LinalgConfig::Parse(const std::string& text) {
  LinalgConfig c;
  bool saw_shapes = false;
  for (const std::string& field : Split(text, ';')) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) return Bad(absl::StrCat("field '", field, "' has no '='"));
    const std::string key(field.substr(0, eq)), value(field.substr(eq + 1));
    auto flag = [&](bool& out) -> absl::Status {
      if (value != "0" && value != "1") return Bad(absl::StrCat(key, " must be 0 or 1"));
      out = value == "1";
      return absl::OkStatus();
    };
    absl::Status s;
    if (key == "op") c.op = value;
    else if (key == "type") c.type = value;
    else if (key == "lower") s = flag(c.lower);
    else if (key == "left") s = flag(c.left_side);
    else if (key == "unit") s = flag(c.unit_diagonal);
    else if (key == "alpha") s = flag(c.has_alpha);
    else if (key == "info") s = flag(c.has_info);
    else if (key == "chol") s = flag(c.cholesky_op);
    else if (key == "full") s = flag(c.full_matrices);
    else if (key == "uv") s = flag(c.compute_uv);
    else if (key == "jacobi") s = flag(c.jacobi);
    else if (key == "transposed") s = flag(c.transposed);
    else if (key == "trans") {
      if (value != "N" && value != "T" && value != "C") return Bad("trans must be N, T or C");
      c.transpose = value[0];
    } else if (key == "shapes") {
      saw_shapes = true;
      for (const std::string& st : Split(value, '|')) {
        std::vector<std::string> parts = Split(st, ':');
        if (parts.size() != 3) return Bad(absl::StrCat("shape '", st, "' is not type:dims:layout"));
        ArrayShape a;
        a.element_type = parts[0];
        a.element_size_in_bytes = ElementBytes(a.element_type);
        if (a.element_size_in_bytes == 0) return Bad(absl::StrCat("unknown element type '", a.element_type, "'"));
        absl::StatusOr<std::vector<int64_t>> dims = ParseInts(parts[1]), m2m = ParseInts(parts[2]);
        if (!dims.ok()) return dims.status();
        if (!m2m.ok()) return m2m.status();
        a.dimensions = *dims;
        a.minor_to_major = *m2m;
        std::vector<bool> seen(a.dimensions.size(), false);
        if (a.minor_to_major.size() != a.dimensions.size()) return Bad("a layout does not match its rank");
        for (int64_t d : a.minor_to_major) {
          if (d >= static_cast<int64_t>(seen.size()) || seen[d]) return Bad("a layout is not a permutation");
          seen[d] = true;
        }
        c.shapes.push_back(std::move(a));
      }
    } else {
      return Bad(absl::StrCat("unknown field '", key, "'"));
    }
    if (!s.ok()) return s;
  }
  if (LinalgTargetOf(c.op).empty()) return Bad(absl::StrCat("unknown op '", c.op, "'"));
  if (c.op == "perm" ? c.type != "s32" : c.type != "f32" && c.type != "f64" && c.type != "c64" && c.type != "c128")
    return Bad(absl::StrCat("unsupported type '", c.type, "'"));
  if (!saw_shapes) return Bad("no shapes");
  return c;
}

bool MatrixView::DenseBatch() const {
  // Batch offsets are b * rows * cols when the batch strides are the row-major strides of the
  // batch dims scaled by the matrix size.
  int64_t expect = rows * cols;
  for (int64_t d = static_cast<int64_t>(batch_dims.size()) - 1; d >= 0; --d) {
    if (batch_dims[d] != 1 && batch_strides[d] != expect) return false;
    expect *= batch_dims[d];
  }
  return true;
}

int64_t MatrixView::Offset(int64_t b) const {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(batch_dims.size()) - 1; d >= 0; --d) {
    off += (b % batch_dims[d]) * batch_strides[d];
    b /= batch_dims[d];
  }
  return off;
}

absl::StatusOr<MatrixView> MatrixViewOf(const ArrayShape& shape) {
  const int64_t r = static_cast<int64_t>(shape.dimensions.size());
  if (r < 2) return Bad("a matrix argument has rank < 2");
  // Element strides of every logical dimension from the layout.
  std::vector<int64_t> strides(r, 0);
  int64_t s = 1;
  for (int64_t d : shape.minor_to_major) {
    strides[d] = s;
    s *= shape.dimensions[d];
  }
  MatrixView v;
  v.rows = shape.dimensions[r - 2];
  v.cols = shape.dimensions[r - 1];
  v.row_stride = strides[r - 2];
  v.col_stride = strides[r - 1];
  for (int64_t d = 0; d + 2 < r; ++d) {
    v.batch_dims.push_back(shape.dimensions[d]);
    v.batch_strides.push_back(strides[d]);
    v.batch *= shape.dimensions[d];
  }
  return v;
}

namespace {

std::string RealOf(const std::string& t) { return t == "c64" ? "f32" : t == "c128" ? "f64" : t; }

// ormqr's arguments (a, tau, c, out) beyond their types and batch dimensions: LAPACK's size rules.
absl::Status ValidateOrmqr(const LinalgConfig& c) {
  const size_t r = c.shapes[0].dimensions.size();
  const int64_t m = c.shapes[0].dimensions[r - 2], ka = c.shapes[0].dimensions[r - 1];
  const int64_t k = c.shapes[1].dimensions[r - 2];
  const std::vector<int64_t>& cd = c.shapes[2].dimensions;
  if (c.shapes[3].dimensions != cd) return Bad("ormqr's result must have c's shape");
  if (k > m || k > ka) return Bad("ormqr needs k <= min(m, ka)");
  if ((c.left_side ? cd[r - 2] : cd[r - 1]) != m) return Bad("ormqr: c does not meet Q's size m");
  if (cd[r - 2] > INT32_MAX || cd[r - 1] > INT32_MAX) return Bad("matrix too large for 32-bit LAPACK indices");
  const bool complex = c.type == "c64" || c.type == "c128";
  if ((c.transpose == 'C' && !complex) || (c.transpose == 'T' && complex))
    return Bad("ormqr's trans must be 'T' for real types and 'C' for complex ones");
  return absl::OkStatus();
}

// The issue-34 decompositions and the pivot permutation (the argument lists in linalg_config.h).
absl::Status ValidateDecomposition(const Thunk& t, const LinalgConfig& c) {
  const size_t want = c.op == "perm" ? 2 : c.op == "syevd" || c.op == "ormqr" ? 4 : c.op == "gesvd" ? 6 : 3;
  if (t.arguments.size() != want || c.shapes.size() != want)
    return Bad(absl::StrCat(c.op, " expects ", want, " arguments and shapes, the thunk has ", t.arguments.size()));
  for (size_t i = 0; i < c.shapes.size(); ++i)
    if (c.shapes[i].byte_size() > t.arguments[i].size)
      return Bad(absl::StrCat("argument ", i, " needs ", c.shapes[i].byte_size(), " bytes, its slice has ",
                              t.arguments[i].size));
  const ArrayShape& a = c.shapes[0];
  const size_t r = a.dimensions.size();
  auto typed = [&](size_t i, const std::string& type, size_t rank) -> absl::Status {
    if (c.shapes[i].element_type != type || c.shapes[i].dimensions.size() != rank)
      return Bad(absl::StrCat("argument ", i, " must be a rank-", rank, " ", type, " array"));
    for (size_t d = 0; d + 2 < r && d < rank; ++d)
      if (c.shapes[i].dimensions[d] != a.dimensions[d])
        return Bad(absl::StrCat("argument ", i, " has other batch dimensions than argument 0"));
    return absl::OkStatus();
  };
  if (c.op == "perm") {
    if (r < 1) return Bad("pivots must have rank >= 1");
    if (absl::Status s = typed(0, "s32", r); !s.ok()) return s;
    if (absl::Status s = typed(1, "s32", r); !s.ok()) return s;
    for (size_t d = 0; d + 1 < r; ++d)
      if (c.shapes[1].dimensions[d] != a.dimensions[d]) return Bad("pivots and permutation differ in batch dimensions");
    return absl::OkStatus();
  }
  if (r < 2) return Bad("a matrix argument has rank < 2");
  const int64_t m = a.dimensions[r - 2], n = a.dimensions[r - 1], k = std::min(m, n);
  if (m > INT32_MAX || n > INT32_MAX) return Bad("matrix too large for 32-bit LAPACK indices");
  auto dims = [&](size_t i, std::vector<int64_t> tail) -> absl::Status {
    std::vector<int64_t> want_dims(a.dimensions.begin(), a.dimensions.end() - 2);
    want_dims.insert(want_dims.end(), tail.begin(), tail.end());
    if (c.shapes[i].dimensions != want_dims)
      return Bad(absl::StrCat("argument ", i, " must be [", absl::StrJoin(want_dims, ","), "]"));
    return absl::OkStatus();
  };
  std::vector<absl::Status> checks;
  checks.push_back(typed(0, c.type, r));
  if (c.op == "geqrf") {
    checks.push_back(typed(1, c.type, r));
    checks.push_back(dims(1, {m, n}));
    checks.push_back(typed(2, c.type, r - 1));
    checks.push_back(dims(2, {k}));
  } else if (c.op == "orgqr") {
    checks.push_back(typed(1, c.type, r - 1));
    checks.push_back(typed(2, c.type, r));
    checks.push_back(dims(2, {m, n}));
    if (m < n || c.shapes[1].dimensions[r - 2] > n) checks.push_back(Bad("orgqr needs m >= n >= k"));
  } else if (c.op == "ormqr") {
    // Ranks first: ValidateOrmqr indexes the dimensions.
    for (const absl::Status& s : {typed(1, c.type, r - 1), typed(2, c.type, r), typed(3, c.type, r)})
      if (!s.ok()) return s;
    checks.push_back(ValidateOrmqr(c));
  } else if (c.op == "syevd") {
    if (m != n) checks.push_back(Bad("eigh needs square matrices"));
    checks.push_back(typed(1, c.type, r));
    checks.push_back(dims(1, {n, n}));
    checks.push_back(typed(2, RealOf(c.type), r - 1));
    checks.push_back(dims(2, {n}));
    checks.push_back(typed(3, "s32", r - 2));
  } else {  // gesvd
    checks.push_back(typed(1, c.type, r));
    checks.push_back(dims(1, {m, n}));
    checks.push_back(typed(2, RealOf(c.type), r - 1));
    checks.push_back(dims(2, {k}));
    if (c.compute_uv || c.jacobi) {
      const size_t ui = c.transposed ? 4 : 3, vi = c.transposed ? 3 : 4;
      checks.push_back(typed(ui, c.type, r));
      checks.push_back(dims(ui, {m, c.full_matrices ? m : k}));
      checks.push_back(typed(vi, c.type, r));
      checks.push_back(c.jacobi ? dims(vi, {n, c.full_matrices ? n : k}) : dims(vi, {c.full_matrices ? n : k, n}));
    }
    checks.push_back(typed(5, "s32", r - 2));
  }
  for (const absl::Status& s : checks)
    if (!s.ok()) return s;
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateLinalgThunk(const Thunk& t, const LinalgConfig& c) {
  const std::string want_target = LinalgTargetOf(c.op);
  if (t.target != want_target) return Bad(absl::StrCat("op ", c.op, " under target ", t.target));
  if (c.op != "potrf" && c.op != "getrf" && c.op != "trsm") return ValidateDecomposition(t, c);
  size_t want = c.op == "potrf" ? (c.has_info ? 3 : 2) : c.op == "getrf" ? 4 : (c.has_alpha ? 4 : 3);
  // trsm may carry a workspace result (XLA's __cublas$triangularSolve); it is not touched.
  if (!(t.arguments.size() == want || (c.op == "trsm" && t.arguments.size() == want + 1)))
    return Bad(absl::StrCat(c.op, " expects ", want, " arguments, the thunk has ", t.arguments.size()));
  if (c.shapes.size() != t.arguments.size()) return Bad("one shape per argument expected");
  for (size_t i = 0; i < c.shapes.size(); ++i)
    if (c.shapes[i].byte_size() > t.arguments[i].size)
      return Bad(absl::StrCat("argument ", i, " needs ", c.shapes[i].byte_size(), " bytes, its slice has ",
                              t.arguments[i].size));
  auto matrix = [&](size_t i) -> absl::StatusOr<MatrixView> {
    if (c.shapes[i].element_type != c.type) return Bad(absl::StrCat("argument ", i, " is not ", c.type));
    return MatrixViewOf(c.shapes[i]);
  };
  absl::StatusOr<MatrixView> a = matrix(0);
  if (!a.ok()) return a.status();
  auto same_batch = [&](const std::vector<int64_t>& dims, size_t i) -> absl::Status {
    if (dims != a->batch_dims) return Bad(absl::StrCat("argument ", i, " has other batch dimensions than a"));
    return absl::OkStatus();
  };
  auto check_s32 = [&](size_t i, std::vector<int64_t> dims) -> absl::Status {
    if (c.shapes[i].element_type != "s32" || c.shapes[i].dimensions != dims)
      return Bad(absl::StrCat("argument ", i, " must be s32[", absl::StrJoin(dims, ","), "]"));
    return absl::OkStatus();
  };
  if (a->rows > INT32_MAX || a->cols > INT32_MAX) return Bad("matrix too large for 32-bit LAPACK indices");
  if (c.op == "potrf" || c.op == "getrf") {
    if (c.op == "potrf" && a->rows != a->cols) return Bad("Cholesky needs square matrices");
    absl::StatusOr<MatrixView> f = matrix(1);
    if (!f.ok()) return f.status();
    if (f->rows != a->rows || f->cols != a->cols) return Bad("the factor's matrices differ from a's");
    if (absl::Status s = same_batch(f->batch_dims, 1); !s.ok()) return s;
    if (c.op == "getrf") {
      std::vector<int64_t> p = a->batch_dims;
      p.push_back(std::min(a->rows, a->cols));
      if (absl::Status s = check_s32(2, p); !s.ok()) return s;
      return check_s32(3, a->batch_dims);
    }
    return c.has_info ? check_s32(2, a->batch_dims) : absl::OkStatus();
  }
  if (a->rows != a->cols) return Bad("the triangular matrix must be square");
  absl::StatusOr<MatrixView> b = matrix(1), x = matrix(c.has_alpha ? 3 : 2);
  if (!b.ok()) return b.status();
  if (!x.ok()) return x.status();
  if (absl::Status s = same_batch(b->batch_dims, 1); !s.ok()) return s;
  if (absl::Status s = same_batch(x->batch_dims, c.has_alpha ? 3 : 2); !s.ok()) return s;
  if (b->rows != x->rows || b->cols != x->cols) return Bad("x and b differ in shape");
  if ((c.left_side ? b->rows : b->cols) != a->rows) return Bad("a's size does not match b's solved dimension");
  if (c.has_alpha && (c.shapes[2].element_type != c.type || !c.shapes[2].dimensions.empty()))
    return Bad("alpha must be a scalar of the matrices' type");
  return absl::OkStatus();
}

}  // namespace hloc::runtime
