// Data-movement ops of the reference evaluator. They move bytes, not values, so they work on
// every element type alike: each op is expressed as one strided copy between row-major byte
// buffers (a broadcast reads with stride 0, a transpose with permuted strides, a reverse
// with negative ones), and StridedCopy's inner loop is typed on the element size only.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/eval_internal.h"

namespace hloc {
namespace eval_internal {
namespace {

using P = PrimitiveType;

std::string DimsStr(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

absl::Status Invalid(const HloInstruction& inst, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(HloOpcodeString(inst.opcode())), ": ", why));
}

template <int kBytes>
void StridedCopyT(uint8_t* dst, int64_t doff, const std::vector<int64_t>& ds, const uint8_t* src,
                  int64_t soff, const std::vector<int64_t>& ss, const std::vector<int64_t>& dims) {
  struct E { uint8_t b[kBytes]; };
  E* d = reinterpret_cast<E*>(dst);
  const E* s = reinterpret_cast<const E*>(src);
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t x : dims)
    if (x == 0) return;
  if (rank == 0) {
    d[doff] = s[soff];
    return;
  }
  const int64_t inner = dims[rank - 1], dsi = ds[rank - 1], ssi = ss[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t dpos = doff, spos = soff;
  while (true) {
    if (dsi == 1 && ssi == 1) {
      std::memcpy(d + dpos, s + spos, inner * kBytes);
    } else {
      E* dp = d + dpos;
      const E* sp = s + spos;
      for (int64_t i = 0; i < inner; ++i) dp[i * dsi] = sp[i * ssi];
    }
    int64_t k = rank - 2;  // odometer over the outer dimensions
    for (; k >= 0; --k) {
      if (++idx[k] < dims[k]) {
        dpos += ds[k];
        spos += ss[k];
        break;
      }
      dpos -= ds[k] * (dims[k] - 1);
      spos -= ss[k] * (dims[k] - 1);
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

int64_t ElemBytes(const Literal& l) { return ByteWidth(l.element_type()); }

// Physical strides (in elements) of an array shape under its layout: the minor-most
// dimension of minor_to_major is contiguous. Without a layout, row-major.
std::vector<int64_t> PhysicalStrides(const Shape& s) {
  const std::vector<int64_t>& dims = s.dimensions();
  if (!s.has_layout() || s.layout().minor_to_major.size() != dims.size()) return RowMajorStrides(dims);
  std::vector<int64_t> st(dims.size(), 0);
  int64_t acc = 1;
  for (int64_t d : s.layout().minor_to_major) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size())) return RowMajorStrides(dims);
    st[d] = acc;
    acc *= dims[d];
  }
  return st;
}

absl::StatusOr<Literal> Broadcast(const HloInstruction& inst, const Literal& op) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const auto& bd = inst.attrs().dimensions;
  const auto& od = op.shape().dimensions();
  const auto& rd = out->shape().dimensions();
  if (bd.size() != od.size()) return Invalid(inst, "dimensions= must list one output dimension per operand dimension");
  std::vector<int64_t> ss(rd.size(), 0);
  const std::vector<int64_t> ostr = RowMajorStrides(od);
  for (size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(rd.size()) || (od[i] != rd[bd[i]] && od[i] != 1))
      return Invalid(inst, absl::StrCat("operand ", DimsStr(od), " does not broadcast to ", DimsStr(rd), " along ", DimsStr(bd)));
    if (od[i] != 1) ss[bd[i]] = ostr[i];
  }
  if (op.element_type() != out->element_type()) return Invalid(inst, "changes the element type");
  StridedCopy(out->untyped_data(), 0, RowMajorStrides(rd), op.untyped_data(), 0, ss, rd, ElemBytes(op));
  return out;
}

absl::StatusOr<Literal> Transpose(const HloInstruction& inst, const Literal& op) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const auto& perm = inst.attrs().dimensions;
  const auto& od = op.shape().dimensions();
  const auto& rd = out->shape().dimensions();
  std::vector<bool> seen(od.size(), false);
  if (perm.size() != od.size() || rd.size() != od.size()) return Invalid(inst, "dimensions= is not a permutation of the operand's");
  const std::vector<int64_t> ostr = RowMajorStrides(od);
  std::vector<int64_t> ss(rd.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(od.size()) || seen[perm[i]] || od[perm[i]] != rd[i])
      return Invalid(inst, absl::StrCat("bad permutation ", DimsStr(perm), " of ", DimsStr(od)));
    seen[perm[i]] = true;
    ss[i] = ostr[perm[i]];
  }
  StridedCopy(out->untyped_data(), 0, RowMajorStrides(rd), op.untyped_data(), 0, ss, rd, ElemBytes(op));
  return out;
}

absl::StatusOr<Literal> Slice(const HloInstruction& inst, const Literal& op) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const auto& sl = inst.attrs().slice;
  const auto& od = op.shape().dimensions();
  const auto& rd = out->shape().dimensions();
  if (sl.size() != od.size() || rd.size() != od.size()) return Invalid(inst, "slice= needs one range per dimension");
  const std::vector<int64_t> ostr = RowMajorStrides(od);
  std::vector<int64_t> ss(od.size());
  int64_t off = 0;
  for (size_t i = 0; i < sl.size(); ++i) {
    const SliceDimension& s = sl[i];
    if (s.start < 0 || s.start > s.limit || s.limit > od[i] || s.stride < 1 ||
        (static_cast<__int128>(s.limit) - s.start + s.stride - 1) / s.stride != rd[i])
      return Invalid(inst, absl::StrCat("slice [", s.start, ":", s.limit, ":", s.stride, "] of dimension ", i,
                                        " (size ", od[i], ") does not give size ", rd[i]));
    off += s.start * ostr[i];
    ss[i] = ostr[i] * s.stride;
  }
  StridedCopy(out->untyped_data(), 0, RowMajorStrides(rd), op.untyped_data(), off, ss, rd, ElemBytes(op));
  return out;
}

absl::StatusOr<Literal> Reverse(const HloInstruction& inst, const Literal& op) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const auto& od = op.shape().dimensions();
  if (out->shape().dimensions() != od) return Invalid(inst, "changes the dimensions");
  std::vector<int64_t> ss = RowMajorStrides(od);
  int64_t off = 0;
  for (int64_t d : inst.attrs().dimensions) {
    if (d < 0 || d >= static_cast<int64_t>(od.size())) return Invalid(inst, "dimension out of range");
    if (ss[d] < 0) continue;  // listed twice
    if (od[d] > 0) off += (od[d] - 1) * ss[d];
    ss[d] = -ss[d];
  }
  StridedCopy(out->untyped_data(), 0, RowMajorStrides(od), op.untyped_data(), off, ss, od, ElemBytes(op));
  return out;
}

absl::StatusOr<Literal> Concatenate(const HloInstruction& inst, Operands ops) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const auto& rd = out->shape().dimensions();
  if (inst.attrs().dimensions.size() != 1) return Invalid(inst, "needs dimensions={d}");
  const int64_t cd = inst.attrs().dimensions[0];
  if (cd < 0 || cd >= static_cast<int64_t>(rd.size())) return Invalid(inst, "dimension out of range");
  const std::vector<int64_t> rstr = RowMajorStrides(rd);
  int64_t at = 0;
  for (const Literal* op : ops) {
    if (auto st = ExpectArray(*op, "concatenate operand"); !st.ok()) return st;
    const auto& od = op->shape().dimensions();
    bool ok = od.size() == rd.size() && op->element_type() == out->element_type();
    for (size_t i = 0; ok && i < od.size(); ++i) ok = (static_cast<int64_t>(i) == cd) || od[i] == rd[i];
    if (!ok || at + od[cd] > rd[cd]) return Invalid(inst, absl::StrCat("operand ", op->shape().ToString(false), " does not fit ", out->shape().ToString(false)));
    StridedCopy(out->untyped_data(), at * rstr[cd], rstr, op->untyped_data(), 0, RowMajorStrides(od), od, ElemBytes(*op));
    at += od[cd];
  }
  if (at != rd[cd]) return Invalid(inst, "operands do not fill the result");
  return out;
}

absl::StatusOr<Literal> Pad(const HloInstruction& inst, const Literal& op, const Literal& value) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (!inst.attrs().padding_config) return Invalid(inst, "missing padding=");
  const auto& pc = inst.attrs().padding_config->dimensions;
  const auto& od = op.shape().dimensions();
  const auto& rd = out->shape().dimensions();
  if (pc.size() != od.size() || rd.size() != od.size() || value.element_count() != 1 ||
      value.element_type() != op.element_type() || out->element_type() != op.element_type())
    return Invalid(inst, "operand, padding value and padding config do not agree");
  const int esize = ElemBytes(op);
  const std::vector<int64_t> rstr = RowMajorStrides(rd);
  // Fill with the padding value (a stride-0 read of the scalar).
  StridedCopy(out->untyped_data(), 0, rstr, value.untyped_data(), 0, std::vector<int64_t>(rd.size(), 0), rd, esize);
  // Then place the operand: element i of dimension d lands at lo + i*(interior+1); negative
  // edge padding drops the elements that land outside.
  std::vector<int64_t> ds(od.size()), ss(od.size()), cnt(od.size());
  const std::vector<int64_t> ostr = RowMajorStrides(od);
  int64_t doff = 0, soff = 0;
  for (size_t d = 0; d < od.size(); ++d) {
    // 128-bit arithmetic: the padding amounts come from the input and may be extreme.
    using W = __int128;
    const W lo = pc[d].edge_padding_low, hi = pc[d].edge_padding_high, in = pc[d].interior_padding;
    if (in < 0) return Invalid(inst, "negative interior padding");
    const W step = in + 1;
    const W want = lo + hi + od[d] + (od[d] > 0 ? W(od[d] - 1) * in : 0);
    if (want != rd[d]) return Invalid(inst, absl::StrCat("padding of dimension ", d, " does not give size ", rd[d]));
    const W first = lo >= 0 ? 0 : (-lo + step - 1) / step;
    const W span = W(rd[d]) - 1 - lo;
    const W last = span < 0 ? -1 : std::min<W>(od[d] - 1, span / step);
    if (last < first) return out;  // nothing of the operand survives
    cnt[d] = static_cast<int64_t>(last - first + 1);
    doff += static_cast<int64_t>(lo + first * step) * rstr[d];
    soff += static_cast<int64_t>(first) * ostr[d];
    ds[d] = cnt[d] > 1 ? rstr[d] * static_cast<int64_t>(step) : 0;  // step is bounded when cnt > 1
    ss[d] = ostr[d];
  }
  StridedCopy(out->untyped_data(), doff, ds, op.untyped_data(), soff, ss, cnt, esize);
  return out;
}

// Start indices of dynamic-slice / dynamic-update-slice: one scalar per dimension (or, in
// old HLO, one vector), clamped so the window lies inside the operand.
absl::StatusOr<std::vector<int64_t>> StartIndices(const HloInstruction& inst, Operands idx,
                                                  const std::vector<int64_t>& dims,
                                                  const std::vector<int64_t>& sizes) {
  std::vector<int64_t> start(dims.size(), 0);
  if (idx.size() == 1 && idx[0]->shape().rank() == 1 && dims.size() != 1) {
    if (idx[0]->element_count() != static_cast<int64_t>(dims.size())) return Invalid(inst, "wrong number of start indices");
    if (!IsIntegral(idx[0]->element_type())) return Invalid(inst, "start indices must be integers");
    for (size_t d = 0; d < dims.size(); ++d) start[d] = idx[0]->GetInt(d);
  } else {
    if (idx.size() != dims.size()) return Invalid(inst, absl::StrCat("needs ", dims.size(), " start indices, got ", idx.size()));
    for (size_t d = 0; d < dims.size(); ++d) {
      auto v = ReadScalarIndex(*idx[d]);
      if (!v.ok()) return v.status();
      start[d] = *v;
    }
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (sizes[d] < 0 || sizes[d] > dims[d]) return Invalid(inst, "slice larger than the operand");
    start[d] = std::clamp<int64_t>(start[d], 0, dims[d] - sizes[d]);
  }
  return start;
}

absl::StatusOr<Literal> DynamicSlice(const HloInstruction& inst, Operands ops) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const Literal& op = *ops[0];
  const auto& od = op.shape().dimensions();
  const auto& rd = out->shape().dimensions();
  if (rd.size() != od.size() || op.element_type() != out->element_type()) return Invalid(inst, "result does not match the operand");
  auto start = StartIndices(inst, ops.subspan(1), od, rd);
  if (!start.ok()) return start.status();
  const std::vector<int64_t> ostr = RowMajorStrides(od);
  int64_t off = 0;
  for (size_t d = 0; d < od.size(); ++d) off += (*start)[d] * ostr[d];
  StridedCopy(out->untyped_data(), 0, RowMajorStrides(rd), op.untyped_data(), off, ostr, rd, ElemBytes(op));
  return out;
}

absl::StatusOr<Literal> Bitcast(const HloInstruction& inst, const Literal& op) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (out->size_bytes() != op.size_bytes() || ElemBytes(*out) != ElemBytes(op))
    return Invalid(inst, absl::StrCat("cannot reinterpret ", op.shape().ToString(), " as ", inst.shape().ToString()));
  // Our literals are row-major in logical order; the bits XLA reinterprets are in physical
  // (layout) order. Lay the operand out physically, then read the result back through its
  // own layout. Tiled layouts are treated as untiled.
  const int esize = ElemBytes(op);
  const auto& od = op.shape().dimensions();
  const auto& rd = out->shape().dimensions();
  // The operand instruction's shape carries the layout (an argument literal may not).
  const Shape& op_shape = inst.operand_count() > 0 && inst.operand(0)->shape().dimensions() == od
                              ? inst.operand(0)->shape() : op.shape();
  std::vector<uint8_t> phys(op.size_bytes());
  StridedCopy(phys.data(), 0, PhysicalStrides(op_shape), op.untyped_data(), 0, RowMajorStrides(od), od, esize);
  StridedCopy(out->untyped_data(), 0, RowMajorStrides(rd), phys.data(), 0, PhysicalStrides(inst.shape()), rd, esize);
  return out;
}

absl::StatusOr<Literal> Iota(const HloInstruction& inst) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const auto& rd = out->shape().dimensions();
  const int64_t d = inst.attrs().iota_dimension;
  if (d < 0 || d >= static_cast<int64_t>(rd.size())) return Invalid(inst, "iota_dimension out of range");
  auto line = NewLiteral(Shape(out->element_type(), {rd[d]}));
  if (!line.ok()) return line.status();
  for (int64_t i = 0; i < rd[d]; ++i) line->SetInt(i, i);
  std::vector<int64_t> ss(rd.size(), 0);
  ss[d] = 1;
  StridedCopy(out->untyped_data(), 0, RowMajorStrides(rd), line->untyped_data(), 0, ss, rd, ElemBytes(*out));
  return out;
}

// Same data under the instruction's shape (reshape, set-dimension-size, copy of an array).
absl::StatusOr<Literal> Reinterpret(const HloInstruction& inst, const Literal& op) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (out->element_type() != op.element_type() || out->element_count() != op.element_count())
    return Invalid(inst, absl::StrCat("cannot turn ", op.shape().ToString(false), " into ", inst.shape().ToString(false)));
  if (op.size_bytes() > 0) std::memcpy(out->untyped_data(), op.untyped_data(), op.size_bytes());
  return out;
}

uint64_t WidthMask(int w) { return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1; }

}  // namespace

// bitcast-convert: same width reinterprets each element's bits; different widths split or
// merge elements along a new most-minor dimension, least significant part first (XLA's
// little-endian memcast).
absl::StatusOr<Literal> EvalBitcastConvert(const HloInstruction& inst, const Literal& in) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const P ti = in.element_type(), to = out->element_type();
  if (!IsArrayType(to)) return absl::InvalidArgumentError("bitcast-convert to a non-array type");
  auto bits_of = [](P t) { return t == P::PRED ? 8 : BitWidth(t); };
  const int wi = bits_of(ti), wo = bits_of(to);
  const int64_t ni = in.element_count(), no = out->element_count();
  if (static_cast<__int128>(ni) * wi != static_cast<__int128>(no) * wo)
    return absl::InvalidArgumentError(absl::StrCat("bitcast-convert from ", in.shape().ToString(false), " to ",
                                                   inst.shape().ToString(false), " changes the number of bits"));
  // Whole-byte types: the storage is the memory image, so the bytes carry over as they are.
  if (wi % 8 == 0 && wo % 8 == 0 && ByteWidth(ti) * 8 == wi && (ByteWidth(to) * 8 == wo || to == P::PRED)) {
    std::memcpy(out->untyped_data(), in.untyped_data(), out->size_bytes());
    if (to == P::PRED)
      for (int64_t i = 0; i < no; ++i) out->untyped_data()[i] = out->untyped_data()[i] != 0;
    return out;
  }
  if (wi > 64 || wo > 64) return absl::UnimplementedError("bitcast-convert between 128-bit and sub-byte types");
  if (wi >= wo) {  // split each input element into wi/wo outputs
    const int k = wi / wo;
    for (int64_t i = 0; i < ni; ++i) {
      uint64_t b = in.GetRawBits(i);
      for (int j = 0; j < k; ++j) out->SetRawBits(i * k + j, (b >> (j * wo)) & WidthMask(wo));
    }
  } else {  // merge wo/wi inputs into each output
    const int k = wo / wi;
    for (int64_t o = 0; o < no; ++o) {
      uint64_t b = 0;
      for (int j = 0; j < k; ++j) b |= (in.GetRawBits(o * k + j) & WidthMask(wi)) << (j * wi);
      out->SetRawBits(o, b);
    }
  }
  return out;
}

namespace {

template <int kBytes>
void SelectBytes(const uint8_t* pred, bool scalar_pred, const uint8_t* t, const uint8_t* f, uint8_t* r, int64_t n) {
  struct E { uint8_t b[kBytes]; };
  const E* pt = reinterpret_cast<const E*>(t);
  const E* pf = reinterpret_cast<const E*>(f);
  E* pr = reinterpret_cast<E*>(r);
  if (scalar_pred) {
    std::memcpy(r, pred[0] ? t : f, n * kBytes);
    return;
  }
  for (int64_t i = 0; i < n; ++i) pr[i] = pred[i] ? pt[i] : pf[i];
}

}  // namespace

absl::StatusOr<Literal> EvalSelect(const HloInstruction& inst, Operands ops) {
  const Literal& p = *ops[0];
  const Literal& t = *ops[1];
  const Literal& f = *ops[2];
  if (p.element_type() != P::PRED) return absl::InvalidArgumentError("select predicate must be pred");
  if (t.element_type() != f.element_type() || !t.shape().SameDimensions(f.shape()))
    return absl::InvalidArgumentError("select branches differ in shape");
  const int64_t n = t.element_count();
  const bool scalar_pred = p.element_count() == 1 && p.shape().rank() == 0 && n != 1;
  if (!scalar_pred && p.element_count() != n)
    return absl::InvalidArgumentError("select predicate and branches differ in size");
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (out->element_type() != t.element_type() || out->element_count() != n)
    return absl::InvalidArgumentError("select result does not match its branches");
  const uint8_t* pp = p.untyped_data();
  switch (ByteWidth(t.element_type())) {
    case 1: SelectBytes<1>(pp, scalar_pred, t.untyped_data(), f.untyped_data(), out->untyped_data(), n); break;
    case 2: SelectBytes<2>(pp, scalar_pred, t.untyped_data(), f.untyped_data(), out->untyped_data(), n); break;
    case 4: SelectBytes<4>(pp, scalar_pred, t.untyped_data(), f.untyped_data(), out->untyped_data(), n); break;
    case 8: SelectBytes<8>(pp, scalar_pred, t.untyped_data(), f.untyped_data(), out->untyped_data(), n); break;
    case 16: SelectBytes<16>(pp, scalar_pred, t.untyped_data(), f.untyped_data(), out->untyped_data(), n); break;
    default: return absl::InvalidArgumentError("select on a non-array type");
  }
  return out;
}

void StridedCopy(uint8_t* dst, int64_t dst_off, const std::vector<int64_t>& dst_strides, const uint8_t* src,
                 int64_t src_off, const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dims,
                 int esize) {
  switch (esize) {
    case 1: return StridedCopyT<1>(dst, dst_off, dst_strides, src, src_off, src_strides, dims);
    case 2: return StridedCopyT<2>(dst, dst_off, dst_strides, src, src_off, src_strides, dims);
    case 4: return StridedCopyT<4>(dst, dst_off, dst_strides, src, src_off, src_strides, dims);
    case 8: return StridedCopyT<8>(dst, dst_off, dst_strides, src, src_off, src_strides, dims);
    case 16: return StridedCopyT<16>(dst, dst_off, dst_strides, src, src_off, src_strides, dims);
    default: return;  // tokens and tuples carry no bytes
  }
}

absl::StatusOr<Literal> NewLiteral(const Shape& shape) { return Literal::Create(shape); }


absl::StatusOr<int64_t> ReadScalarIndex(const Literal& lit) {
  if (!lit.shape().IsArray() || lit.element_count() != 1 ||
      !(IsIntegral(lit.element_type()) || lit.element_type() == PrimitiveType::PRED))
    return absl::InvalidArgumentError(absl::StrCat("expected an integer scalar index, got ", lit.shape().ToString(false)));
  return lit.GetInt(0);
}

absl::Status ExpectArray(const Literal& lit, const char* what) {
  if (lit.shape().IsArray()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " must be an array, got ", lit.shape().ToString(false)));
}

absl::Status DynamicUpdateSliceInPlace(const HloInstruction& inst, Literal& target, Operands ops) {
  if (ops.size() < 2) return Invalid(inst, "needs an operand, an update and start indices");
  const Literal& upd = *ops[1];
  if (auto st = ExpectArray(upd, "update"); !st.ok()) return st;
  if (auto st = ExpectArray(target, "operand"); !st.ok()) return st;
  const auto& od = target.shape().dimensions();
  const auto& ud = upd.shape().dimensions();
  if (ud.size() != od.size() || upd.element_type() != target.element_type())
    return Invalid(inst, absl::StrCat("update ", upd.shape().ToString(false), " does not fit ", target.shape().ToString(false)));
  auto start = StartIndices(inst, ops.subspan(2), od, ud);
  if (!start.ok()) return start.status();
  const std::vector<int64_t> tstr = RowMajorStrides(od);
  int64_t off = 0;
  for (size_t d = 0; d < od.size(); ++d) off += (*start)[d] * tstr[d];
  StridedCopy(target.untyped_data(), off, tstr, upd.untyped_data(), 0, RowMajorStrides(ud), ud, ElemBytes(upd));
  return absl::OkStatus();
}

bool IsHandledShapeOp(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kIota: case O::kBroadcast: case O::kReshape: case O::kTranspose: case O::kSlice:
    case O::kDynamicSlice: case O::kDynamicUpdateSlice: case O::kConcatenate: case O::kPad:
    case O::kReverse: case O::kBitcast: case O::kCopy: case O::kGetDimensionSize:
    case O::kSetDimensionSize: case O::kDynamicReshape:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<Literal> EvalShapeOp(const HloInstruction& inst, Operands ops) {
  using O = HloOpcode;
  const O op = inst.opcode();
  if (op == O::kIota) return Iota(inst);
  if (ops.empty()) return Invalid(inst, "missing operand");
  if (op == O::kCopy) {  // any shape, tuples included; the value is unchanged
    if (!ops[0]->shape().EqualIgnoringLayout(inst.shape())) return Invalid(inst, "changes the shape");
    Literal out = *ops[0];
    out.mutable_shape() = inst.shape();
    return out;
  }
  for (const Literal* l : ops)
    if (auto st = ExpectArray(*l, "operand"); !st.ok()) return st;
  if (!inst.shape().IsArray()) return Invalid(inst, "result must be an array");
  switch (op) {
    case O::kBroadcast: return Broadcast(inst, *ops[0]);
    case O::kReshape: return Reinterpret(inst, *ops[0]);
    case O::kTranspose: return Transpose(inst, *ops[0]);
    case O::kSlice: return Slice(inst, *ops[0]);
    case O::kReverse: return Reverse(inst, *ops[0]);
    case O::kConcatenate: return Concatenate(inst, ops);
    case O::kBitcast: return Bitcast(inst, *ops[0]);
    case O::kDynamicSlice: return DynamicSlice(inst, ops);
    case O::kPad:
      if (ops.size() != 2) return Invalid(inst, "needs an operand and a padding value");
      return Pad(inst, *ops[0], *ops[1]);
    case O::kDynamicUpdateSlice: {
      Literal target = *ops[0];
      if (auto st = DynamicUpdateSliceInPlace(inst, target, ops); !st.ok()) return st;
      target.mutable_shape() = inst.shape();
      return target;
    }
    case O::kGetDimensionSize: {
      // Shapes here are static (the evaluator tracks no runtime sizes), so the size is the
      // dimension's bound.
      if (inst.attrs().dimensions.size() != 1) return Invalid(inst, "needs dimensions={d}");
      const int64_t d = inst.attrs().dimensions[0];
      if (d < 0 || d >= ops[0]->shape().rank()) return Invalid(inst, "dimension out of range");
      auto out = NewLiteral(inst.shape());
      if (!out.ok()) return out.status();
      if (out->element_count() != 1) return Invalid(inst, "result must be a scalar");
      out->SetInt(0, ops[0]->shape().dimensions(d));
      return out;
    }
    case O::kSetDimensionSize: {
      // The data does not change; a size below the bound would need runtime shapes.
      if (ops.size() != 2) return Invalid(inst, "needs an operand and a size");
      auto size = ReadScalarIndex(*ops[1]);
      if (!size.ok()) return size.status();
      if (inst.attrs().dimensions.size() != 1) return Invalid(inst, "needs dimensions={d}");
      const int64_t d = inst.attrs().dimensions[0];
      if (d < 0 || d >= ops[0]->shape().rank()) return Invalid(inst, "dimension out of range");
      if (*size != ops[0]->shape().dimensions(d))
        return absl::UnimplementedError(absl::StrCat("set-dimension-size to ", *size, " below the bound ",
                                                     ops[0]->shape().dimensions(d), " (runtime shapes are not modelled)"));
      return Reinterpret(inst, *ops[0]);
    }
    case O::kDynamicReshape: {
      const auto& rd = inst.shape().dimensions();
      if (ops.size() != rd.size() + 1) return Invalid(inst, "needs one size operand per result dimension");
      for (size_t d = 0; d < rd.size(); ++d) {
        auto size = ReadScalarIndex(*ops[d + 1]);
        if (!size.ok()) return size.status();
        if (*size != rd[d])
          return absl::UnimplementedError(absl::StrCat("dynamic-reshape to size ", *size, " below the bound ", rd[d],
                                                       " (runtime shapes are not modelled)"));
      }
      return Reinterpret(inst, *ops[0]);
    }
    default: return Invalid(inst, "not a data-movement op");
  }
}

}  // namespace eval_internal
}  // namespace hloc
