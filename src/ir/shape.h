// Shapes and layouts, as XLA's Shape / Layout (text form: f32[2,<=3]{1,0:T(8,128)S(1)}).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/primitive_type.h"

namespace hloc {

// One tile of a tiled layout: T(8,128). kCombineDimension is XLA's '*'.
struct Tile {
  static constexpr int64_t kCombineDimension = INT64_MIN;
  std::vector<int64_t> dimensions;
  bool operator==(const Tile&) const = default;
};

struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<Tile> tiles;
  int64_t tail_padding_alignment_in_elements = 1;  // L(n)
  int64_t element_size_in_bits = 0;                // E(n); 0 = default
  int64_t memory_space = 0;                        // S(n)
  std::optional<PrimitiveType> index_primitive_type;    // #(s32)
  std::optional<PrimitiveType> pointer_primitive_type;  // *(s32)
  int64_t dynamic_shape_metadata_prefix_bytes = 0;      // M(n)
  // Layout fields hloc keeps only as text (split configs SC(..), physical shape P(..)),
  // printed back verbatim after the fields above.
  std::string extra;
  bool operator==(const Layout&) const = default;
};

class Shape {
 public:
  Shape() = default;
  // Array shape, with a default (descending) layout.
  Shape(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token() { return Shape(PrimitiveType::TOKEN, {}); }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType t) { element_type_ = t; }
  bool IsTuple() const { return element_type_ == PrimitiveType::TUPLE; }
  bool IsToken() const { return element_type_ == PrimitiveType::TOKEN; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::OPAQUE_TYPE; }
  bool IsArray() const { return IsArrayType(element_type_); }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  std::vector<int64_t>& mutable_dimensions() { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[i]; }
  // Dynamic dimensions: '<=N' (bounded, dims_[i] is the bound) or '?' (unbounded).
  static constexpr int64_t kUnboundedSize = INT64_MIN;
  const std::vector<bool>& dynamic_dimensions() const { return dynamic_; }
  std::vector<bool>& mutable_dynamic_dimensions() { return dynamic_; }
  bool is_dynamic_dimension(int64_t i) const { return i < (int64_t)dynamic_.size() && dynamic_[i]; }
  bool is_static() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_[i]; }

  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout& mutable_layout();
  void set_layout(Layout l) { layout_ = std::move(l); }
  void clear_layout() { layout_.reset(); }
  // Sets {rank-1,...,0} on this array shape (and recursively on tuples).
  void SetDefaultLayout();

  // Number of elements; error on overflow (beyond 2^62) so bad input cannot wrap.
  absl::StatusOr<int64_t> ElementCount() const;
  // Unchecked; only for shapes already verified (ElementCount succeeded when created).
  int64_t num_elements() const;
  // Bytes of the array data as a Literal holds it.
  int64_t byte_size() const { return num_elements() * ByteWidth(element_type_); }

  // Structural equality, ignoring layouts (XLA's ShapeUtil::Compatible-ish, but exact dims).
  bool EqualIgnoringLayout(const Shape& other) const;
  // Also same element types ignored (dims/tuple structure only).
  bool SameDimensions(const Shape& other) const { return dims_ == other.dims_; }
  bool operator==(const Shape& other) const;  // including layout

  // XLA text: "f32[2,3]{1,0}" (print_layout) or "f32[2,3]".
  std::string ToString(bool print_layout = true) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::TUPLE;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;  // empty or rank() entries
  std::vector<Shape> tuple_;
  std::optional<Layout> layout_;
};

std::string LayoutToString(const Layout& layout);

// Index into a tuple shape: {} is the shape itself, {1,0} the first element of the second.
using ShapeIndex = std::vector<int64_t>;
std::string ShapeIndexToString(const ShapeIndex& index);  // "{1,0}"
// The subshape at index, or error if the index does not exist.
absl::StatusOr<const Shape*> GetSubshape(const Shape& shape, const ShapeIndex& index);

// Row-major strides (in elements) for dims; the last dimension is contiguous.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace hloc
