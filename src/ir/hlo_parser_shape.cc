// Shapes ("f32[2,<=3]{1,0:T(8,128)S(1)}", tuples, "b(...)"), layouts, shardings (XLA's
// forms and Shardy's mesh form, kept as text) and replica groups.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/hlo_parser_internal.h"

namespace hloc::parser_internal {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 62;

// Product of `dims` (each >= 0), or -1 if it exceeds 2^62.
int64_t CheckedProduct(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > kMaxElements / d) return -1;
    n *= d;
  }
  return n;
}

bool IsPermutation(const std::vector<int64_t>& v) {
  std::vector<bool> seen(v.size(), false);
  for (int64_t x : v) {
    if (x < 0 || x >= static_cast<int64_t>(v.size()) || seen[x]) return false;
    seen[x] = true;
  }
  return true;
}

std::string Dims(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }

}  // namespace

bool Parser::CanBeShape() {
  return kind() == TokKind::kPrimitiveType || kind() == TokKind::kLparen ||
         (kind() == TokKind::kIdent && tok().str == "b" && lex_.LookAhead() == TokKind::kLparen);
}

// shape ::= type '[' dims ']' layout? | '(' (shape (',' shape)*)? ')' | 'b(' shape ')'
bool Parser::ParseShape(Shape* out, bool allow_fallback_to_default_layout) {
  DepthGuard depth(this);
  if (!depth.ok()) return false;
  size_t at = loc();
  if (kind() == TokKind::kIdent && tok().str == "b" && lex_.LookAhead() == TokKind::kLparen) {
    // XLA's buffer shape; hloc has no buffer type, so it stands for its array shape.
    lex_.Lex();
    lex_.Lex();
    if (!ParseShape(out, allow_fallback_to_default_layout)) return false;
    if (!out->IsArray()) return Error(at, "a buffer shape b(...) must hold an array shape");
    return Expect(TokKind::kRparen, "expects ')' at the end of buffer shape.");
  }
  if (EatIf(TokKind::kLparen)) {
    std::vector<Shape> elements;
    if (kind() != TokKind::kRparen) {
      do {
        elements.emplace_back();
        if (!ParseShape(&elements.back(), allow_fallback_to_default_layout)) return false;
      } while (EatIf(TokKind::kComma));
    }
    *out = Shape::Tuple(std::move(elements));
    return Expect(TokKind::kRparen, "expects ')' at the end of tuple.");
  }
  return ParseArrayShape(out, allow_fallback_to_default_layout);
}

// type '[' dims ']' layout? ; kept out of ParseShape so that the recursion through tuple
// shapes does not carry this function's locals.
bool Parser::ParseArrayShape(Shape* out, bool allow_fallback_to_default_layout) {
  size_t at = loc();
  if (kind() != TokKind::kPrimitiveType) return Err(loc(), "expected primitive type, saw ", Describe());
  PrimitiveType type = tok().primitive_type;
  lex_.Lex();
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  bool any_dynamic = false;
  bool ok = ParseList(TokKind::kLsquare, TokKind::kRsquare, TokKind::kComma, [&] {
    size_t dim_loc = loc();
    int64_t d = 0;
    bool is_dynamic = false;
    if (EatIf(TokKind::kQuestionMark)) {
      d = Shape::kUnboundedSize;
      is_dynamic = true;
    } else {
      is_dynamic = EatIf(TokKind::kLeq);
      if (!ParseInt64(&d)) return false;
      if (d < 0) return Err(dim_loc, "dimension size must be non-negative, but is ", d);
    }
    dims.push_back(d);
    dynamic.push_back(is_dynamic);
    any_dynamic |= is_dynamic;
    return true;
  });
  if (!ok) return false;
  if (!IsArrayType(type) && !dims.empty())
    return Err(at, std::string(PrimitiveTypeName(type)), " shapes have no dimensions");
  Shape shape(type, dims);
  if (any_dynamic) shape.mutable_dynamic_dimensions() = dynamic;
  if (IsArrayType(type)) {
    std::vector<int64_t> bounded;
    for (int64_t d : dims)
      if (d != Shape::kUnboundedSize) bounded.push_back(d);
    if (CheckedProduct(bounded) < 0)
      return Err(at, "shape ", shape.ToString(false), " has too many elements (more than 2^62)");
  }
  // '{' starts a layout only when an integer or ':' follows: "-> f32[2] {" opens a body.
  // A scalar may also carry an empty layout "{}" (older XLA text: "f32[]{}").
  TokKind next = kind() == TokKind::kLbrace ? lex_.LookAhead() : TokKind::kEof;
  if (next == TokKind::kInt || next == TokKind::kColon || (next == TokKind::kRbrace && shape.rank() == 0)) {
    size_t layout_loc = loc();
    Layout layout;
    if (!ParseLayout(&layout)) return false;
    if (static_cast<int64_t>(layout.minor_to_major.size()) != shape.rank())
      return Err(layout_loc, "Dimensions size is ", shape.rank(), ", but minor to major size is ",
                 layout.minor_to_major.size(), ".");
    if (!IsPermutation(layout.minor_to_major))
      return Err(layout_loc, "layout minor_to_major {", absl::StrJoin(layout.minor_to_major, ","),
                 "} is not a permutation of the dimensions 0 to ", shape.rank() - 1);
    shape.set_layout(std::move(layout));
  } else if (shape.rank() > 0 && !(allow_fallback_to_default_layout && options_.fill_missing_layouts)) {
    shape.clear_layout();
  }
  *out = std::move(shape);
  return true;
}

bool Parser::ParseShapeList(std::vector<Shape>* out) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    out->emplace_back();
    return ParseShape(&out->back());
  });
}

// layout ::= '{' minor_to_major (':' D(..) T(..)* L(n) #(type) *(type) E(n) S(n) SC(..) M(n))? '}'
bool Parser::ParseLayout(Layout* out) {
  Layout layout;
  if (!Expect(TokKind::kLbrace, "expects layout to start with '{'")) return false;
  auto ident_is = [&](std::string_view s) { return kind() == TokKind::kIdent && tok().str == s; };
  auto int_field = [&](int64_t* v, const char* what) {
    lex_.Lex();
    if (kind() != TokKind::kLparen) return Err(loc(), "expects ", what, " to start with '('");
                                               lex_.Lex();
                                               if (!ParseInt64(v)) return false;
                                               if (kind() != TokKind::kRparen)
                                                 return Err(loc(), "expects ", what, " to end with ')'");
                                               lex_.Lex();
                                               return true;
  };
  auto type_field = [&](std::optional<PrimitiveType>* t, const char* what) {
    lex_.Lex();
    if (kind() != TokKind::kLparen) return Err(loc(), "expects ", what, " to start with '('");
                                               lex_.Lex();
                                               if (kind() != TokKind::kPrimitiveType ||
                                                   !IsUnsignedIntegral(tok().primitive_type))
                                                 return TokenError("expecting an unsigned integer type");
                                               *t = tok().primitive_type;
                                               lex_.Lex();
                                               if (kind() != TokKind::kRparen)
                                                 return Err(loc(), "expects ", what, " to end with ')'");
                                               lex_.Lex();
                                               return true;
  };
  if (kind() != TokKind::kRbrace) {
    if (kind() == TokKind::kInt) {
      do {
        int64_t v = 0;
        if (!ParseInt64(&v)) return false;
        layout.minor_to_major.push_back(v);
      } while (EatIf(TokKind::kComma));
    }
    if (EatIf(TokKind::kColon)) {
      if (ident_is("D")) {
        // Dimension level types (sparse layouts): kept as text.
        size_t begin = loc();
        lex_.Lex();
        bool ok = ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, [&] {
          if (!(kind() == TokKind::kIdent &&
                (tok().str == "D" || tok().str == "C" || tok().str == "S" || tok().str == "H")))
            return TokenError("expected a DimLevelType abbreviation (D, C, S or H)");
          lex_.Lex();
          EatIf(TokKind::kPlus);
          EatIf(TokKind::kTilde);
          return true;
        });
        if (!ok) return false;
        layout.extra += std::string(Text(begin, lex_.prev_end()));
      }
      if (ident_is("T")) {
        lex_.Lex();
        do {
          Tile tile;
          bool ok = ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, [&] {
            if (EatIf(TokKind::kAsterisk)) {
              tile.dimensions.push_back(Tile::kCombineDimension);
              return true;
            }
            int64_t v = 0;
            if (!ParseInt64(&v)) return false;
            tile.dimensions.push_back(v);
            return true;
          });
          if (!ok) return false;
          layout.tiles.push_back(std::move(tile));
        } while (kind() == TokKind::kLparen);
      }
      if (ident_is("L") && !int_field(&layout.tail_padding_alignment_in_elements, "multiple padded to in elements"))
        return false;
      if (kind() == TokKind::kOctothorp && !type_field(&layout.index_primitive_type, "index primitive type"))
        return false;
      if (kind() == TokKind::kAsterisk && !type_field(&layout.pointer_primitive_type, "pointer primitive type"))
        return false;
      if (ident_is("E") && !int_field(&layout.element_size_in_bits, "element size in bits")) return false;
      if (ident_is("S") && !int_field(&layout.memory_space, "memory space")) return false;
      if (ident_is("SC")) {
        // Split configs: kept as text.
        size_t begin = loc();
        lex_.Lex();
        do {
          int64_t v = 0;
          if (!Expect(TokKind::kLparen, "expects split configs to start with '('") || !ParseInt64(&v)) return false;
          std::vector<int64_t> indices;
          if (!ParseInt64List(TokKind::kColon, TokKind::kRparen, TokKind::kComma, &indices)) return false;
        } while (kind() == TokKind::kLparen);
        layout.extra += std::string(Text(begin, lex_.prev_end()));
      }
      if (ident_is("P")) return TokenError("Layout has physical shape, but is not for a sparse array");
      if (ident_is("M") &&
          !int_field(&layout.dynamic_shape_metadata_prefix_bytes, "dynamic shape metadata prefix bytes"))
        return false;
    }
  }
  if (!Expect(TokKind::kRbrace, "expects layout to end with '}'")) return false;
  *out = std::move(layout);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Shardings.

// sharding ::= '{' single '}' | '{' ('{' single '}' (',' '{' single '}')*)? '}'
bool Parser::ParseSharding(HloSharding* out) {
  if (!Expect(TokKind::kLbrace, "expected '{' to start sharding attribute")) return false;
  if (kind() != TokKind::kLbrace && kind() != TokKind::kRbrace) return ParseSingleSharding(out, /*lbrace_eaten=*/true);
  HloSharding tuple;
  tuple.kind = HloSharding::Kind::kTuple;
  if (kind() != TokKind::kRbrace) {
    do {
      tuple.tuple_elements.emplace_back();
      if (!ParseSingleSharding(&tuple.tuple_elements.back(), /*lbrace_eaten=*/false)) return false;
    } while (EatIf(TokKind::kComma));
  }
  if (!Expect(TokKind::kRbrace, "expected '}' to end sharding attribute")) return false;
  *out = std::move(tuple);
  return true;
}

// Shardy's named sharding, "mesh['x'=2], [{'x'}, {}]" up to the closing '}' (not consumed).
bool Parser::ParseMeshText(std::string* out) {
  size_t begin = loc();
  lex_.Lex();  // mesh / maximal_mesh
  if (kind() != TokKind::kLsquare) return TokenError("expected '[' after mesh");
  int64_t depth = 0;
  while (true) {
    switch (kind()) {
      case TokKind::kLbrace: case TokKind::kLsquare: case TokKind::kLparen: ++depth; break;
      case TokKind::kRsquare: case TokKind::kRparen: --depth; break;
      case TokKind::kRbrace:
        if (depth == 0) {
          *out = std::string(Text(begin, lex_.prev_end()));
          return true;
        }
        --depth;
        break;
      case TokKind::kEof: return TokenError("expected '}' to end sharding attribute");
      case TokKind::kError: return TokenError("invalid token in mesh sharding");
      default: break;
    }
    if (depth < 0) return TokenError("unbalanced brackets in mesh sharding");
    lex_.Lex();
  }
}

// single ::= (replicated | maximal | manual | unknown | unreduced | device=N | devices=[..]..
//             | last_tile_dim_replicate | last_tile_dims={..} | shard_as N | shard_like N
//             | metadata=..)* '}'   — or a Shardy mesh sharding
bool Parser::ParseSingleSharding(HloSharding* out, bool lbrace_eaten) {
  if (!lbrace_eaten && !Expect(TokKind::kLbrace, "expected '{' to start sharding attribute")) return false;
  HloSharding s;
  if (kind() == TokKind::kIdent && (tok().str == "mesh" || tok().str == "maximal_mesh")) {
    s.kind = HloSharding::Kind::kMesh;
    if (!ParseMeshText(&s.mesh_text)) return false;
    lex_.Lex();  // '}'
    *out = std::move(s);
    return true;
  }
  size_t at = loc();
  bool maximal = false, replicated = false, manual = false, unknown = false, unreduced = false;
  std::vector<int64_t> devices;
  std::optional<IotaTileAssignment> iota;
  bool has_subgroups = false;
  while (kind() != TokKind::kRbrace) {
    switch (kind()) {
      case TokKind::kw_maximal: maximal = true; lex_.Lex(); break;
      case TokKind::kw_replicated: replicated = true; lex_.Lex(); break;
      case TokKind::kw_manual: manual = true; lex_.Lex(); break;
      case TokKind::kw_unknown: unknown = true; lex_.Lex(); break;
      case TokKind::kw_unreduced: unreduced = true; lex_.Lex(); break;
      case TokKind::kw_last_tile_dim_replicate: s.last_tile_dim_replicate = true; lex_.Lex(); break;
      case TokKind::kw_shard_as: case TokKind::kw_shard_like: {
        std::string which = kind() == TokKind::kw_shard_as ? "shard_as" : "shard_like";
        lex_.Lex();
        int64_t id = 0;
        if (!ParseInt64(&id)) return false;
        s.shard_group = absl::StrCat(which, " ", id);
        break;
      }
      case TokKind::kAttributeName: {
        size_t name_loc = loc();
        std::string name = tok().str;
        lex_.Lex();
        if (name == "device") {
          if (kind() != TokKind::kInt) return TokenError("device= attribute must be an integer");
          devices = {tok().int_val};
          lex_.Lex();
        } else if (name == "devices") {
          if (!ParseTileAssignment(&s.tile_dims, &iota, &devices, /*allow_devices=*/true)) return false;
        } else if (name == "metadata") {
          if (!ParseSingleOrListMetadata(&s.metadata)) return false;
        } else if (name == "last_tile_dims") {
          has_subgroups = true;
          bool ok = ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
            switch (kind()) {
              case TokKind::kw_replicated: s.last_tile_dims.push_back(HloSharding::SubgroupType::kReplicated); break;
              case TokKind::kw_manual: s.last_tile_dims.push_back(HloSharding::SubgroupType::kManual); break;
              case TokKind::kw_unreduced: s.last_tile_dims.push_back(HloSharding::SubgroupType::kUnreduced); break;
              default: return TokenError("expects a sharding type: replicated, manual or unreduced");
            }
            lex_.Lex();
            return true;
          });
          if (!ok) return false;
        } else {
          return Error(name_loc,
                       "unknown attribute in sharding: expected device=, devices= metadata= or last_tile_dims= ");
        }
        break;
      }
      case TokKind::kEof: return TokenError("expected '}' to end sharding attribute");
      default: return Err(loc(), "unexpected token in sharding: ", Describe());
    }
  }
  if (replicated) {
    if (!devices.empty()) return Error(at, "replicated shardings should not have any devices assigned");
    s.kind = HloSharding::Kind::kReplicated;
  } else if (maximal) {
    if (devices.size() != 1) return Error(at, "maximal shardings should have exactly one device assigned");
    s.kind = HloSharding::Kind::kMaximal;
    s.device = devices[0];
    devices.clear();
  } else if (manual || unknown || unreduced) {
    if (!devices.empty()) {
      return Err(at, manual ? "manual" : unknown ? "unknown" : "unreduced",
                 " shardings should not have any devices assigned");
    }
    s.kind = manual    ? HloSharding::Kind::kManual
             : unknown ? HloSharding::Kind::kUnknown
                       : HloSharding::Kind::kUnreduced;
  } else {
    if (s.tile_dims.empty())
      return Error(at, "non-maximal shardings must have a tile assignment list including dimensions");
    if (s.last_tile_dim_replicate && has_subgroups)
      return Error(at, "a sharding cannot have both last_tile_dim_replicate and last_tile_dims=");
    int64_t tiles = CheckedProduct(s.tile_dims);
    if (iota) {
      s.iota = std::move(iota);
    } else {
      if (devices.size() <= 1) return Error(at, "non-maximal shardings must have more than one device assigned");
      if (tiles != static_cast<int64_t>(devices.size()))
        return Err(at, "the tile assignment ", Dims(s.tile_dims), " has ", tiles < 0 ? 0 : tiles,
                   " tiles, but ", devices.size(), " devices are listed");
    }
    s.kind = HloSharding::Kind::kTiled;
  }
  s.devices = std::move(devices);
  lex_.Lex();  // '}'
  *out = std::move(s);
  return true;
}

// devices=[d0,d1,...] followed by either the device list "0,1,2,3" or the iota form
// "<=[reshape]T(perm)".
bool Parser::ParseTileAssignment(std::vector<int64_t>* dims, std::optional<IotaTileAssignment>* iota,
                                 std::vector<int64_t>* devices, bool allow_devices) {
  size_t at = loc();
  if (!Expect(TokKind::kLsquare, "expected '[' to start sharding devices shape")) return false;
  do {
    int64_t d = 0;
    if (!ParseInt64(&d)) return false;
    dims->push_back(d);
  } while (EatIf(TokKind::kComma));
  if (!Expect(TokKind::kRsquare, "expected ']' to end sharding devices shape")) return false;
  if (CheckedProduct(*dims) < 0)
    return Err(at, "tile assignment ", Dims(*dims), " has negative or too many elements");
  if (EatIf(TokKind::kLeq)) {
    IotaTileAssignment t;
    t.dims = *dims;
    if (!ParseIotaReshape(&t)) return false;
    if (CheckedProduct(t.dims) != CheckedProduct(t.reshape_dims))
      return Err(at, "iota tile assignment ", Dims(t.dims), "<=", Dims(t.reshape_dims),
                 " must have as many devices in its reshape dimensions as in its dimensions");
    *iota = std::move(t);
    return true;
  }
  if (!allow_devices) return TokenError("expects an iota device list such as [2,2]<=[4]");
  do {
    int64_t device = 0;
    if (!ParseInt64(&device)) return false;
    devices->push_back(device);
  } while (EatIf(TokKind::kComma));
  return true;
}

// '[' reshape_dims ']' ('T(' perm ')')? ; the permutation is required for 2+ reshape dims and
// left empty (identity) for one, as written.
bool Parser::ParseIotaReshape(IotaTileAssignment* iota) {
  if (!ParseInt64List(TokKind::kLsquare, TokKind::kRsquare, TokKind::kComma, &iota->reshape_dims)) return false;
  if (iota->reshape_dims.empty()) return TokenError("expected non-empty iota_reshape_dims");
  if (CheckedProduct(iota->reshape_dims) < 0) return TokenError("iota_reshape_dims has negative or too many elements");
  // One reshape dimension has nothing to transpose: the permutation stays empty (identity).
  if (iota->reshape_dims.size() == 1) return true;
  if (kind() != TokKind::kIdent || tok().str != "T")
    return TokenError("expected 'T(' to start sharding devices iota_transpose_perm");
  lex_.Lex();
  size_t at = loc();
  if (!ParseInt64List(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, &iota->transpose_perm)) return false;
  if (iota->transpose_perm.size() != iota->reshape_dims.size())
    return Err(at, "iota_transpose_perm should have the same rank as iota_reshape_dims : expected ",
               iota->reshape_dims.size(), ", saw ", iota->transpose_perm.size(), ".");
  if (!IsPermutation(iota->transpose_perm))
    return Err(at, "iota_transpose_perm (", absl::StrJoin(iota->transpose_perm, ","),
               ") is not a permutation of 0 to ", iota->reshape_dims.size() - 1);
  return true;
}

// replica_groups ::= '{' ('{' ints '}' (',' ...)*)? '}' | '[' g ',' s ']' '<=' iota | mesh[...] {...}
bool Parser::ParseReplicaGroups(CollectiveDeviceList* out) {
  CollectiveDeviceList list;
  if (kind() == TokKind::kLbrace) {
    if (!ParseInt64ListList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, &list.groups)) return false;
  } else if (kind() == TokKind::kIdent && tok().str == "mesh") {
    size_t begin = loc();
    lex_.Lex();
    if (kind() != TokKind::kLsquare) return TokenError("expected '[' after mesh");
    if (!ParseBalanced()) return false;
    if (kind() == TokKind::kLbrace && !ParseBalanced()) return false;
    list.mesh_text = std::string(Text(begin, lex_.prev_end()));
  } else if (kind() == TokKind::kLsquare) {
    size_t at = loc();
    std::vector<int64_t> dims;
    std::optional<IotaTileAssignment> iota;
    if (!ParseTileAssignment(&dims, &iota, nullptr, /*allow_devices=*/false)) return false;
    if (dims.size() != 2)
      return Err(at, "the iota form of replica_groups has two dimensions [groups,group_size], but ",
                 Dims(dims), " has ", dims.size());
    list.iota = std::move(iota);
  } else {
    return TokenError("expects replica groups: {{0,1},{2,3}}, an iota list [2,2]<=[4], or a mesh");
  }
  *out = std::move(list);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Stand-alone values.

absl::StatusOr<Shape> Parser::ParseShapeOnly() {
  lex_.Lex();
  Shape shape;
  if (!ParseShape(&shape)) return status();
  if (kind() != TokKind::kEof) {
    TokenError("extra content after shape");
    return status();
  }
  return shape;
}

absl::StatusOr<HloSharding> Parser::ParseShardingOnly() {
  lex_.Lex();
  HloSharding sharding;
  if (!ParseSharding(&sharding)) return status();
  if (kind() != TokKind::kEof) {
    TokenError("extra content after sharding");
    return status();
  }
  return sharding;
}

absl::StatusOr<CollectiveDeviceList> Parser::ParseReplicaGroupsOnly() {
  lex_.Lex();
  CollectiveDeviceList groups;
  if (!ParseReplicaGroups(&groups)) return status();
  if (kind() != TokKind::kEof) {
    TokenError("extra content after replica groups");
    return status();
  }
  return groups;
}

}  // namespace hloc::parser_internal
