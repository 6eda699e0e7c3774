#include "ir/literal.h"

#include <cmath>
#include <new>

#include "absl/strings/str_cat.h"
#include "ir/float_types.h"
#include "support/host_memory.h"

namespace hloc {

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) tuple_.emplace_back(s);
    return;
  }
  if (shape.IsArray()) data_.assign(shape.num_elements() * ByteWidth(shape.element_type()), 0);
}

absl::StatusOr<Literal> Literal::Create(const Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Literal> elems;
    for (const Shape& s : shape.tuple_shapes()) {
      auto e = Create(s);
      if (!e.ok()) return e.status();
      elems.push_back(std::move(*e));
    }
    Literal l = MakeTuple(std::move(elems));
    l.shape_ = shape;
    return l;
  }
  if (shape.IsArray()) {
    auto n = shape.ElementCount();
    if (!n.ok()) return n.status();
    // More than the process can ever hold is refused before allocating (std::bad_alloc would
    // abort; an overcommitted allocation would be killed while being zeroed).
    const uint64_t width = static_cast<uint64_t>(std::max(1, ByteWidth(shape.element_type())));
    if (static_cast<uint64_t>(*n) > HostMemoryBytes() / width) {
      return absl::ResourceExhaustedError(absl::StrCat("literal of shape ", shape.ToString(), " needs ",
                                                       static_cast<uint64_t>(*n) * width, " bytes, more than the ",
                                                       HostMemoryBytes(), " this process can allocate"));
    }
  }
  try {
    return Literal(shape);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate a literal of shape ", shape.ToString()));
  }
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal l;
  l.shape_ = Shape::Tuple(std::move(shapes));
  l.tuple_ = std::move(elements);
  return l;
}

Literal Literal::ScalarDouble(PrimitiveType t, double v) {
  Literal l(Shape(t, {}));
  if (IsComplex(t)) l.SetComplex(0, v); else if (IsFloatingPoint(t)) l.SetDouble(0, v); else l.SetInt(0, static_cast<int64_t>(v));
  return l;
}

Literal Literal::ScalarInt(PrimitiveType t, int64_t v) {
  Literal l(Shape(t, {}));
  if (IsFloatingPoint(t) || IsComplex(t)) l.SetDouble(0, static_cast<double>(v)); else l.SetInt(0, v);
  return l;
}

uint64_t Literal::GetRawBits(int64_t i) const {
  PrimitiveType t = element_type();
  int bytes = ByteWidth(t);
  if (bytes == 16) {  // c128 has no 64-bit pattern; give the real part's bits
    uint64_t b; std::memcpy(&b, data_.data() + i * 16, 8); return b;
  }
  uint64_t b = 0;
  std::memcpy(&b, data_.data() + i * bytes, bytes);
  int bits = BitWidth(t);
  if (bits < 64) b &= (uint64_t{1} << bits) - 1;
  return b;
}

void Literal::SetRawBits(int64_t i, uint64_t bits) {
  PrimitiveType t = element_type();
  int width = BitWidth(t), bytes = ByteWidth(t);
  if (bytes == 16) { std::memcpy(data_.data() + i * 16, &bits, 8); return; }
  if (width < 64) {
    bits &= (uint64_t{1} << width) - 1;
    // Signed sub-byte types are held sign-extended in their byte.
    if (IsSignedIntegral(t) && width < 8 && (bits >> (width - 1)) & 1) bits |= ~uint64_t{0} << width;
  }
  std::memcpy(data_.data() + i * bytes, &bits, bytes);
}

int64_t Literal::GetInt(int64_t i) const {
  PrimitiveType t = element_type();
  if (IsFloatingPoint(t)) return static_cast<int64_t>(GetDouble(i));
  if (IsComplex(t)) return static_cast<int64_t>(GetComplex(i).real());
  uint64_t b = GetRawBits(i);
  int w = BitWidth(t);
  if (IsSignedIntegral(t) && w < 64 && (b >> (w - 1)) & 1) b |= ~uint64_t{0} << w;
  return static_cast<int64_t>(b);
}

uint64_t Literal::GetUint(int64_t i) const {
  PrimitiveType t = element_type();
  if (IsSignedIntegral(t)) return static_cast<uint64_t>(GetInt(i));
  if (IsFloatingPoint(t) || IsComplex(t)) return static_cast<uint64_t>(GetDouble(i));
  return GetRawBits(i);
}

double Literal::GetDouble(int64_t i) const {
  PrimitiveType t = element_type();
  if (IsFloatingPoint(t)) return DecodeFloat(t, GetRawBits(i));
  if (IsComplex(t)) return GetComplex(i).real();
  if (IsUnsignedIntegral(t) || t == PrimitiveType::PRED) return static_cast<double>(GetRawBits(i));
  return static_cast<double>(GetInt(i));
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  PrimitiveType t = element_type();
  if (t == PrimitiveType::C64) {
    float p[2]; std::memcpy(p, data_.data() + i * 8, 8); return {p[0], p[1]};
  }
  if (t == PrimitiveType::C128) {
    double p[2]; std::memcpy(p, data_.data() + i * 16, 16); return {p[0], p[1]};
  }
  return {GetDouble(i), 0.0};
}

void Literal::SetDouble(int64_t i, double v) {
  PrimitiveType t = element_type();
  if (IsFloatingPoint(t)) return SetRawBits(i, EncodeFloat(t, v));
  if (IsComplex(t)) return SetComplex(i, {v, 0.0});
  if (t == PrimitiveType::PRED) return SetRawBits(i, v != 0);
  if (IsUnsignedIntegral(t)) return SetUint(i, static_cast<uint64_t>(v));
  SetInt(i, static_cast<int64_t>(v));
}

void Literal::SetInt(int64_t i, int64_t v) {
  PrimitiveType t = element_type();
  if (IsFloatingPoint(t) || IsComplex(t)) return SetDouble(i, static_cast<double>(v));
  if (t == PrimitiveType::PRED) return SetRawBits(i, v != 0);
  SetRawBits(i, static_cast<uint64_t>(v));
}

void Literal::SetUint(int64_t i, uint64_t v) {
  PrimitiveType t = element_type();
  if (IsFloatingPoint(t) || IsComplex(t)) return SetDouble(i, static_cast<double>(v));
  if (t == PrimitiveType::PRED) return SetRawBits(i, v != 0);
  SetRawBits(i, v);
}

void Literal::SetComplex(int64_t i, std::complex<double> v) {
  PrimitiveType t = element_type();
  if (t == PrimitiveType::C64) {
    float p[2] = {static_cast<float>(v.real()), static_cast<float>(v.imag())};
    std::memcpy(data_.data() + i * 8, p, 8);
  } else if (t == PrimitiveType::C128) {
    double p[2] = {v.real(), v.imag()};
    std::memcpy(data_.data() + i * 16, p, 16);
  } else {
    SetDouble(i, v.real());
  }
}

const Literal& Literal::at(const ShapeIndex& index) const {
  const Literal* l = this;
  for (int64_t i : index) l = &l->tuple_[i];
  return *l;
}

int64_t Literal::LinearIndex(absl::Span<const int64_t> index) const {
  int64_t linear = 0;
  const auto& dims = shape_.dimensions();
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

bool Literal::operator==(const Literal& o) const {
  if (!shape_.EqualIgnoringLayout(o.shape_)) return false;
  if (shape_.IsTuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (!(tuple_[i] == o.tuple_[i])) return false;
    return true;
  }
  return data_ == o.data_;
}

}  // namespace hloc
