// Literal: a shape and its data, held row-major in logical index order (the last dimension
// varies fastest) whatever the shape's layout; tuples hold element literals.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/shape.h"

namespace hloc {

class Literal {
 public:
  Literal() : shape_(Shape::Tuple({})) {}
  // Zero-filled literal of `shape`. The shape must have a checked element count
  // (use Create for shapes from user input).
  explicit Literal(const Shape& shape);
  static absl::StatusOr<Literal> Create(const Shape& shape);
  static Literal MakeTuple(std::vector<Literal> elements);
  // Scalars and vectors, convenient in tests and passes.
  static Literal ScalarDouble(PrimitiveType t, double v);
  static Literal ScalarInt(PrimitiveType t, int64_t v);

  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }  // e.g. to set a layout; dims must not change
  PrimitiveType element_type() const { return shape_.element_type(); }
  int64_t element_count() const { return shape_.IsArray() ? shape_.num_elements() : 0; }

  // Raw storage (ByteWidth(element_type) bytes per element; sub-byte types one per byte,
  // signed ones sign-extended).
  uint8_t* untyped_data() { return data_.data(); }
  const uint8_t* untyped_data() const { return data_.data(); }
  int64_t size_bytes() const { return static_cast<int64_t>(data_.size()); }
  template <typename T> T* data() { return reinterpret_cast<T*>(data_.data()); }
  template <typename T> const T* data() const { return reinterpret_cast<const T*>(data_.data()); }

  // Element access by row-major linear index, converting as C++ would:
  // GetDouble on an int returns its value, GetInt on a float truncates toward zero.
  double GetDouble(int64_t i) const;
  int64_t GetInt(int64_t i) const;      // u64 values above INT64_MAX wrap (use GetUint)
  uint64_t GetUint(int64_t i) const;    // the value for unsigned types, bits for signed
  std::complex<double> GetComplex(int64_t i) const;
  bool GetPred(int64_t i) const { return GetRawBits(i) != 0; }
  // The element's bit pattern, right-aligned, BitWidth(type) bits (c64: imag<<32 | real).
  uint64_t GetRawBits(int64_t i) const;

  // Setters store the value in the element type: floats round to nearest even, integers
  // wrap to the type's width (two's complement), pred stores v != 0.
  void SetDouble(int64_t i, double v);
  void SetInt(int64_t i, int64_t v);
  void SetUint(int64_t i, uint64_t v);
  void SetComplex(int64_t i, std::complex<double> v);
  void SetRawBits(int64_t i, uint64_t bits);

  // Tuples.
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_.size()); }
  const Literal& tuple_element(int64_t i) const { return tuple_[i]; }
  Literal& tuple_element(int64_t i) { return tuple_[i]; }
  std::vector<Literal>& tuple_elements() { return tuple_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_; }
  // The sub-literal at a shape index ({} is this one).
  const Literal& at(const ShapeIndex& index) const;

  // Row-major linear index of a multi-dimensional index.
  int64_t LinearIndex(absl::Span<const int64_t> index) const;

  // Same shape (ignoring layout) and same bits.
  bool operator==(const Literal& other) const;

 private:
  Shape shape_;
  std::vector<uint8_t> data_;
  std::vector<Literal> tuple_;
};

}  // namespace hloc
