#include "ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hloc {

Shape::Shape(PrimitiveType type, std::vector<int64_t> dims)
    : element_type_(type), dims_(std::move(dims)) {
  SetDefaultLayout();
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = PrimitiveType::TUPLE;
  s.tuple_ = std::move(elements);
  return s;
}

bool Shape::is_static() const {
  for (bool d : dynamic_) if (d) return false;
  for (const Shape& t : tuple_) if (!t.is_static()) return false;
  return true;
}

Layout& Shape::mutable_layout() {
  if (!layout_) layout_.emplace();
  return *layout_;
}

void Shape::SetDefaultLayout() {
  if (IsTuple()) {
    for (Shape& t : tuple_) t.SetDefaultLayout();
    return;
  }
  if (!IsArray()) return;
  Layout l;
  for (int64_t i = rank() - 1; i >= 0; --i) l.minor_to_major.push_back(i);
  layout_ = std::move(l);
}

absl::StatusOr<int64_t> Shape::ElementCount() const {
  constexpr int64_t kLimit = int64_t{1} << 62;
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension size ", d));
    if (d != 0 && n > kLimit / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", ToString(false), " has too many elements (overflows 2^62)"));
    }
    n *= d;
  }
  return n;
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

bool Shape::EqualIgnoringLayout(const Shape& o) const {
  if (element_type_ != o.element_type_) return false;
  if (IsTuple()) {
    if (tuple_.size() != o.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (!tuple_[i].EqualIgnoringLayout(o.tuple_[i])) return false;
    return true;
  }
  if (dims_ != o.dims_) return false;
  bool dyn = !is_static(), odyn = !o.is_static();
  if (dyn || odyn) return dynamic_ == o.dynamic_;
  return true;
}

bool Shape::operator==(const Shape& o) const {
  if (!EqualIgnoringLayout(o)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (!(tuple_[i] == o.tuple_[i])) return false;
    return true;
  }
  return layout_ == o.layout_;
}

std::string LayoutToString(const Layout& l) {
  std::string s = "{" + absl::StrJoin(l.minor_to_major, ",");
  std::string fields;
  // XLA writes one "T" followed by every tile: T(8,128)(2,1).
  if (!l.tiles.empty()) fields += "T";
  for (const Tile& t : l.tiles) {
    fields += "(";
    for (size_t i = 0; i < t.dimensions.size(); ++i) {
      if (i) fields += ",";
      fields += t.dimensions[i] == Tile::kCombineDimension ? "*" : absl::StrCat(t.dimensions[i]);
    }
    fields += ")";
  }
  if (l.tail_padding_alignment_in_elements != 1)
    absl::StrAppend(&fields, "L(", l.tail_padding_alignment_in_elements, ")");
  if (l.index_primitive_type)
    absl::StrAppend(&fields, "#(", std::string(PrimitiveTypeName(*l.index_primitive_type)), ")");
  if (l.pointer_primitive_type)
    absl::StrAppend(&fields, "*(", std::string(PrimitiveTypeName(*l.pointer_primitive_type)), ")");
  if (l.element_size_in_bits != 0) absl::StrAppend(&fields, "E(", l.element_size_in_bits, ")");
  if (l.memory_space != 0) absl::StrAppend(&fields, "S(", l.memory_space, ")");
  // XLA's order: ... S(n), then split configs SC(..) and physical shape P(..) (kept as
  // text in `extra`), then M(n).
  fields += l.extra;
  if (l.dynamic_shape_metadata_prefix_bytes != 0)
    absl::StrAppend(&fields, "M(", l.dynamic_shape_metadata_prefix_bytes, ")");
  if (!fields.empty()) s += ":" + fields;
  return s + "}";
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string s = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i) s += ", ";
      s += tuple_[i].ToString(print_layout);
    }
    return s + ")";
  }
  std::string s(PrimitiveTypeName(element_type_));
  if (IsToken() || IsOpaque()) return s + "[]";
  s += "[";
  for (int64_t i = 0; i < rank(); ++i) {
    if (i) s += ",";
    if (is_dynamic_dimension(i)) {
      s += dims_[i] == kUnboundedSize ? "?" : absl::StrCat("<=", dims_[i]);
    } else {
      absl::StrAppend(&s, dims_[i]);
    }
  }
  s += "]";
  if (print_layout && layout_ && IsArray()) {
    // XLA omits the layout of scalars unless it carries extra fields.
    std::string ls = LayoutToString(*layout_);
    if (!(rank() == 0 && ls == "{}")) s += ls;
  }
  return s;
}

std::string ShapeIndexToString(const ShapeIndex& index) {
  return "{" + absl::StrJoin(index, ",") + "}";
}

absl::StatusOr<const Shape*> GetSubshape(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= (int64_t)s->tuple_shapes().size()) {
      return absl::InvalidArgumentError(absl::StrCat("shape index ", ShapeIndexToString(index),
                                                     " does not exist in ", shape.ToString()));
    }
    s = &s->tuple_shapes(i);
  }
  return s;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = (int64_t)dims.size() - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

}  // namespace hloc
