#include "ir/sharding_util.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace {

using Kind = HloSharding::Kind;
using Sub = HloSharding::SubgroupType;

absl::Status Bad(const std::string& what) { return absl::InvalidArgumentError(what); }

int64_t Product(absl::Span<const int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Transposes the row-major array `in` of `dims` by `perm` (result dim i = input dim perm[i]).
std::vector<int64_t> Transpose(const std::vector<int64_t>& in, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& perm) {
  std::vector<int64_t> tdims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) tdims[i] = dims[perm[i]];
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> out;
  out.reserve(in.size());
  std::vector<int64_t> idx(tdims.size(), 0);
  for (size_t n = 0; n < in.size(); ++n) {
    int64_t src = 0;
    for (size_t i = 0; i < idx.size(); ++i) src += idx[i] * strides[perm[i]];
    out.push_back(in[src]);
    for (int64_t i = static_cast<int64_t>(idx.size()) - 1; i >= 0; --i) {
      if (++idx[i] < tdims[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

// ---- Shardy's mesh text: mesh['x'=2,'y'=4], [{'x'}, {}] (, replicated={..} | manual | ...) ----

struct MeshText {
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  std::vector<int64_t> device_ids;  // empty = iota
  // Sharding form: per data dim, the axes (major to minor); nullopt-like flag when fully manual.
  std::vector<std::vector<std::string>> dim_axes;
  std::vector<std::string> manual_axes;
  bool fully_manual = false;
  // `mesh[], replicated` (as JAX 0.11.2 prints a replicated value): no dims listed at all.
  bool fully_replicated = false;
  // Replica-group form: the axes named after the mesh.
  std::vector<std::string> group_axes;
};

class MeshScanner {
 public:
  explicit MeshScanner(const std::string& text) : s_(text) {}

  absl::StatusOr<MeshText> ParseSharding() {
    MeshText m;
    if (auto st = ParseMesh(m); !st.ok()) return st;
    while (Eat(',')) {
      Skip();
      if (Peek() == '[') {
        if (auto st = ParseDims(m); !st.ok()) return st;
      } else if (Word("manual")) {
        if (Eat('=')) {
          auto axes = ParseAxisSet();
          if (!axes.ok()) return axes.status();
          m.manual_axes = *axes;
        } else {
          m.fully_manual = true;
        }
      } else if (Word("replicated")) {
        if (!Eat('=')) {
          m.fully_replicated = true;
          continue;
        }
        auto axes = ParseAxisSet();  // implied by omission: nothing to record
        if (!axes.ok()) return axes.status();
      } else if (Word("unreduced")) {
        if (!Eat('=')) return Err("expected '='");
        (void)(Word("max") || Word("min") || Word("sum"));  // the reduction kind
        auto axes = ParseAxisSet();  // implied by omission: nothing to record
        if (!axes.ok()) return axes.status();
      } else if (Word("device_ids")) {
        if (auto st = ParseDeviceIds(m); !st.ok()) return st;
      } else {
        return Err("unexpected text");
      }
    }
    Skip();
    if (pos_ != s_.size()) return Err("unexpected text");
    return m;
  }

  absl::StatusOr<MeshText> ParseGroups() {
    MeshText m;
    if (auto st = ParseMesh(m); !st.ok()) return st;
    auto axes = ParseAxisSet();
    if (!axes.ok()) return axes.status();
    m.group_axes = *axes;
    Skip();
    if (pos_ != s_.size()) return Err("unexpected text");
    return m;
  }

 private:
  absl::Status Err(const std::string& what) const {
    return Bad(absl::StrCat("mesh text '", s_, "': ", what, " at offset ", pos_));
  }
  void Skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  char Peek() {
    Skip();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool Word(const std::string& w) {
    Skip();
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    size_t end = pos_ + w.size();
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) return false;
    pos_ = end;
    return true;
  }
  absl::StatusOr<int64_t> Int() {
    Skip();
    size_t b = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (b == pos_) return Err("expected an integer");
    return std::stoll(s_.substr(b, pos_ - b));
  }
  absl::StatusOr<std::string> Name() {
    if (!Eat('\'')) return Err("expected a quoted axis name");
    size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != '\'') ++pos_;
    if (pos_ >= s_.size()) return Err("unterminated axis name");
    std::string n = s_.substr(b, pos_ - b);
    ++pos_;
    if (Peek() == ':') return Err("sub-axes ('x':(1)2) are not supported yet");
    return n;
  }
  absl::Status ParseMesh(MeshText& m) {
    if (Word("maximal_mesh")) return Err("maximal_mesh shardings are not supported yet");
    if (!Word("mesh") || !Eat('[')) return Err("expected mesh[");
    while (!Eat(']')) {
      if (!m.axis_names.empty() && !Eat(',')) return Err("expected ',' or ']'");
      if (Word("device_ids")) {
        if (auto st = ParseDeviceIds(m); !st.ok()) return st;
        continue;
      }
      auto n = Name();
      if (!n.ok()) return n.status();
      if (!Eat('=')) return Err("expected '=' after an axis name");
      auto size = Int();
      if (!size.ok()) return size.status();
      if (*size <= 0) return Err("axis sizes must be positive");
      m.axis_names.push_back(*n);
      m.axis_sizes.push_back(*size);
    }
    return absl::OkStatus();
  }
  absl::Status ParseDeviceIds(MeshText& m) {
    if (!Eat('=')) return Err("expected '=' after device_ids");
    bool paren = Eat('(');
    if (!Eat('[')) return Err("expected '[' for device_ids");
    while (!Eat(']')) {
      if (!m.device_ids.empty() && !Eat(',')) return Err("expected ',' or ']'");
      auto v = Int();
      if (!v.ok()) return v.status();
      m.device_ids.push_back(*v);
    }
    if (paren && !Eat(')')) return Err("expected ')'");
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::string>> ParseAxisSet() {
    std::vector<std::string> axes;
    if (!Eat('{')) return Err("expected '{'");
    while (!Eat('}')) {
      if (!axes.empty() && !Eat(',')) return Err("expected ',' or '}'");
      auto n = Name();
      if (!n.ok()) return n.status();
      axes.push_back(*n);
    }
    Eat('?');  // an open dimension: a propagation hint, no constraint here
    return axes;
  }
  absl::Status ParseDims(MeshText& m) {
    if (!Eat('[')) return Err("expected '['");
    while (!Eat(']')) {
      if (!m.dim_axes.empty() && !Eat(',')) return Err("expected ',' or ']'");
      auto axes = ParseAxisSet();
      if (!axes.ok()) return axes.status();
      m.dim_axes.push_back(*axes);
    }
    return absl::OkStatus();
  }

  const std::string& s_;
  size_t pos_ = 0;
};

absl::StatusOr<int64_t> AxisIndex(const MeshText& m, const std::string& name) {
  for (size_t i = 0; i < m.axis_names.size(); ++i)
    if (m.axis_names[i] == name) return static_cast<int64_t>(i);
  return Bad(absl::StrCat("mesh has no axis '", name, "'"));
}

// The mesh's devices in mesh order (iota unless device_ids are given).
absl::StatusOr<std::vector<int64_t>> MeshDevices(const MeshText& m) {
  int64_t n = Product(m.axis_sizes);
  if (m.device_ids.empty()) {
    std::vector<int64_t> d(n);
    std::iota(d.begin(), d.end(), 0);
    return d;
  }
  if (static_cast<int64_t>(m.device_ids.size()) != n)
    return Bad(absl::StrCat("mesh device_ids has ", m.device_ids.size(), " ids for ", n, " devices"));
  return m.device_ids;
}

absl::StatusOr<HloSharding> MeshToTiled(const std::string& text, int64_t rank) {
  auto parsed = MeshScanner(text).ParseSharding();
  if (!parsed.ok()) return parsed.status();
  const MeshText& m = *parsed;
  auto devices = MeshDevices(m);
  if (!devices.ok()) return devices.status();
  if (m.fully_manual) return ManualSharding();
  if (m.fully_replicated && m.dim_axes.empty()) return ReplicatedSharding();
  if (static_cast<int64_t>(m.dim_axes.size()) != rank)
    return Bad(absl::StrCat("mesh sharding '", text, "' names ", m.dim_axes.size(), " dimensions for rank ", rank));
  // Axis order of the tile array: each dim's axes (major to minor), then manual, then the rest.
  std::vector<int64_t> perm;
  std::vector<bool> used(m.axis_names.size(), false);
  HloSharding s;
  s.kind = Kind::kTiled;
  auto use = [&](const std::string& name) -> absl::StatusOr<int64_t> {
    auto i = AxisIndex(m, name);
    if (!i.ok()) return i.status();
    if (used[*i]) return Bad(absl::StrCat("mesh axis '", name, "' used twice in '", text, "'"));
    used[*i] = true;
    perm.push_back(*i);
    return m.axis_sizes[*i];
  };
  for (const auto& axes : m.dim_axes) {
    int64_t tiles = 1;
    for (const auto& a : axes) {
      auto size = use(a);
      if (!size.ok()) return size.status();
      tiles *= *size;
    }
    s.tile_dims.push_back(tiles);
  }
  int64_t manual = 1;
  for (const auto& a : m.manual_axes) {
    auto size = use(a);
    if (!size.ok()) return size.status();
    manual *= *size;
  }
  int64_t rest = 1;
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i]) {
      perm.push_back(static_cast<int64_t>(i));
      rest *= m.axis_sizes[i];
    }
  if (!m.manual_axes.empty()) {
    s.tile_dims.push_back(manual);
    s.last_tile_dims.push_back(Sub::kManual);
  }
  if (rest > 1) {
    s.tile_dims.push_back(rest);
    s.last_tile_dims.push_back(Sub::kReplicated);
  }
  s.devices = Transpose(*devices, m.axis_sizes, perm);
  return Canonical(std::move(s));
}

absl::StatusOr<HloSharding> NormalizeLeaf(const HloSharding& in, const Shape& shape) {
  switch (in.kind) {
    case Kind::kReplicated: case Kind::kUnknown: case Kind::kUnreduced: return ReplicatedSharding();
    case Kind::kManual: return ManualSharding();
    case Kind::kMaximal: {
      HloSharding s;
      s.kind = Kind::kMaximal;
      s.device = in.device;
      return s;
    }
    case Kind::kMesh: return MeshToTiled(in.mesh_text, shape.IsArray() ? shape.rank() : 0);
    case Kind::kTuple: return Bad("a tuple sharding on an array value");
    case Kind::kTiled: break;
  }
  HloSharding s;
  s.kind = Kind::kTiled;
  s.tile_dims = in.tile_dims;
  s.last_tile_dims = in.last_tile_dims;
  if (in.last_tile_dim_replicate) s.last_tile_dims.push_back(Sub::kReplicated);
  if (in.iota) {
    auto devs = MaterializeIota(*in.iota);
    if (!devs.ok()) return devs.status();
    s.devices = *devs;
  } else {
    s.devices = in.devices;
  }
  for (int64_t d : s.tile_dims)
    if (d <= 0) return Bad("tile assignment dimensions must be positive");
  if (static_cast<int64_t>(s.devices.size()) != Product(s.tile_dims))
    return Bad(absl::StrCat("tile assignment holds ", s.devices.size(), " devices for ", Product(s.tile_dims),
                            " tiles"));
  int64_t rank = shape.IsArray() ? shape.rank() : 0;
  if (DataRank(s) != rank)
    return Bad(absl::StrCat("sharding ", ShardingToString(s), " has ", DataRank(s), " data dimensions for ",
                            shape.ToString(false)));
  return Canonical(std::move(s));
}

// Array leaves of a tuple shape, depth first.
void Leaves(const Shape& shape, std::vector<const Shape*>& out) {
  if (!shape.IsTuple()) {
    out.push_back(&shape);
    return;
  }
  for (const Shape& e : shape.tuple_shapes()) Leaves(e, out);
}

void IndexToCoords(int64_t linear, const std::vector<int64_t>& dims, std::vector<int64_t>& coords) {
  coords.assign(dims.size(), 0);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    coords[i] = linear % dims[i];
    linear /= dims[i];
  }
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> MaterializeIota(const IotaTileAssignment& iota) {
  int64_t total = 1;
  for (int64_t d : iota.reshape_dims) {
    if (d <= 0 || total > (int64_t{1} << 24) / d) return Bad("iota device list too large or empty");
    total *= d;
  }
  if (Product(iota.dims) != total)
    return Bad(absl::StrCat("iota device list reshapes ", total, " devices to ", Product(iota.dims)));
  std::vector<int64_t> perm = iota.transpose_perm;
  if (perm.empty()) {
    perm.resize(iota.reshape_dims.size());
    std::iota(perm.begin(), perm.end(), 0);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != iota.reshape_dims.size())
      return Bad("iota device list has an invalid transpose");
  std::vector<int64_t> ids(total);
  std::iota(ids.begin(), ids.end(), 0);
  return Transpose(ids, iota.reshape_dims, perm);
}

HloSharding ReplicatedSharding() { return HloSharding(); }

HloSharding ManualSharding() {
  HloSharding s;
  s.kind = Kind::kManual;
  return s;
}

HloSharding TiledSharding(std::vector<int64_t> tile_dims, std::vector<int64_t> devices, int64_t replicas) {
  HloSharding s;
  s.kind = Kind::kTiled;
  s.tile_dims = std::move(tile_dims);
  if (replicas > 1) {
    s.tile_dims.push_back(replicas);
    s.last_tile_dims.push_back(Sub::kReplicated);
  }
  s.devices = std::move(devices);
  return Canonical(std::move(s));
}

HloSharding Canonical(HloSharding s) {
  if (s.kind != Kind::kTiled) return s;
  s.iota.reset();
  s.last_tile_dim_replicate = false;
  // Drop subgroup dims of size 1.
  int64_t data = DataRank(s);
  for (int64_t i = static_cast<int64_t>(s.last_tile_dims.size()) - 1; i >= 0; --i) {
    if (s.tile_dims[data + i] == 1) {
      s.tile_dims.erase(s.tile_dims.begin() + data + i);
      s.last_tile_dims.erase(s.last_tile_dims.begin() + i);
    }
  }
  bool data_split = false;
  for (int64_t d = 0; d < data; ++d) data_split |= s.tile_dims[d] > 1;
  if (!data_split) {
    bool all_manual = !s.last_tile_dims.empty(), any_manual = false;
    for (Sub t : s.last_tile_dims) {
      all_manual &= t == Sub::kManual;
      any_manual |= t == Sub::kManual;
    }
    if (all_manual) return ManualSharding();
    if (!any_manual) return ReplicatedSharding();
  }
  return s;
}

absl::StatusOr<HloSharding> NormalizeSharding(const HloSharding& s, const Shape& shape) {
  if (!shape.IsTuple()) return NormalizeLeaf(s, shape);
  std::vector<const Shape*> leaves;
  Leaves(shape, leaves);
  HloSharding out;
  out.kind = Kind::kTuple;
  if (s.kind == Kind::kTuple) {
    if (s.tuple_elements.size() != leaves.size())
      return Bad(absl::StrCat("tuple sharding has ", s.tuple_elements.size(), " elements for ", leaves.size(),
                              " leaves of ", shape.ToString(false)));
    for (size_t i = 0; i < leaves.size(); ++i) {
      auto leaf = NormalizeLeaf(s.tuple_elements[i], *leaves[i]);
      if (!leaf.ok()) return leaf.status();
      out.tuple_elements.push_back(*leaf);
    }
    return out;
  }
  for (const Shape* leaf_shape : leaves) {
    auto leaf = NormalizeLeaf(s, *leaf_shape);
    if (!leaf.ok()) return leaf.status();
    out.tuple_elements.push_back(*leaf);
  }
  return out;
}

bool IsReplicated(const HloSharding& s) { return s.kind == Kind::kReplicated; }
bool IsTiled(const HloSharding& s) { return s.kind == Kind::kTiled; }
bool IsManual(const HloSharding& s) { return s.kind == Kind::kManual; }

int64_t DataRank(const HloSharding& s) {
  if (s.kind != Kind::kTiled) return 0;
  return static_cast<int64_t>(s.tile_dims.size() - s.last_tile_dims.size());
}

int64_t TilesAlong(const HloSharding& s, int64_t d) {
  if (s.kind != Kind::kTiled || d >= DataRank(s)) return 1;
  return s.tile_dims[d];
}

int64_t ReplicationFactor(const HloSharding& s) {
  int64_t r = 1, data = DataRank(s);
  for (size_t i = 0; i < s.last_tile_dims.size(); ++i)
    if (s.last_tile_dims[i] == Sub::kReplicated) r *= s.tile_dims[data + i];
  return r;
}

int64_t NumDevicesOf(const HloSharding& s) {
  return s.kind == Kind::kTiled ? static_cast<int64_t>(s.devices.size()) : 1;
}

absl::StatusOr<std::vector<int64_t>> TileIndexOf(const HloSharding& s, int64_t device) {
  int64_t data = DataRank(s);
  if (s.kind != Kind::kTiled) return std::vector<int64_t>();
  for (size_t i = 0; i < s.devices.size(); ++i) {
    if (s.devices[i] != device) continue;
    std::vector<int64_t> coords;
    IndexToCoords(static_cast<int64_t>(i), s.tile_dims, coords);
    coords.resize(data);
    return coords;
  }
  return Bad(absl::StrCat("device ", device, " holds no tile of ", ShardingToString(s)));
}

Shape ShardShape(const HloSharding& s, const Shape& shape) {
  if (s.kind != Kind::kTiled || !shape.IsArray()) return shape;
  Shape out = shape;
  for (int64_t d = 0; d < DataRank(s) && d < shape.rank(); ++d) {
    int64_t t = s.tile_dims[d];
    out.mutable_dimensions()[d] = (shape.dimensions(d) + t - 1) / t;
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> ShardOffsets(const HloSharding& s, const Shape& shape, int64_t device) {
  std::vector<int64_t> offsets(shape.rank(), 0);
  if (s.kind != Kind::kTiled) return offsets;
  auto tile = TileIndexOf(s, device);
  if (!tile.ok()) return tile.status();
  Shape local = ShardShape(s, shape);
  for (int64_t d = 0; d < shape.rank(); ++d) offsets[d] = (*tile)[d] * local.dimensions(d);
  return offsets;
}

absl::StatusOr<Literal> ExtractShard(const Literal& global, const HloSharding& s, int64_t device) {
  if (s.kind == Kind::kTuple) {
    if (s.tuple_elements.size() != static_cast<size_t>(global.tuple_size()))
      return Bad("tuple sharding does not match the value");
    std::vector<Literal> parts;
    for (int64_t i = 0; i < global.tuple_size(); ++i) {
      auto p = ExtractShard(global.tuple_element(i), s.tuple_elements[i], device);
      if (!p.ok()) return p.status();
      parts.push_back(std::move(*p));
    }
    return Literal::MakeTuple(std::move(parts));
  }
  if (s.kind != Kind::kTiled || !global.shape().IsArray()) return global;
  auto offsets = ShardOffsets(s, global.shape(), device);
  if (!offsets.ok()) return offsets.status();
  Shape local_shape = ShardShape(s, global.shape());
  auto local = Literal::Create(local_shape);
  if (!local.ok()) return local.status();
  const std::vector<int64_t>& gdims = global.shape().dimensions();
  std::vector<int64_t> idx, gidx(gdims.size());
  for (int64_t n = 0; n < local->element_count(); ++n) {
    IndexToCoords(n, local_shape.dimensions(), idx);
    bool inside = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      gidx[d] = idx[d] + (*offsets)[d];
      inside &= gidx[d] < gdims[d];
    }
    if (inside) local->SetRawBits(local->LinearIndex(idx), global.GetRawBits(global.LinearIndex(gidx)));
  }
  return std::move(*local);
}

absl::StatusOr<Literal> AssembleShards(absl::Span<const Literal> per_device, const HloSharding& s,
                                       const Shape& global_shape) {
  if (per_device.empty()) return Bad("no shards to assemble");
  if (s.kind == Kind::kTuple) {
    if (!global_shape.IsTuple() || s.tuple_elements.size() != global_shape.tuple_shapes().size())
      return Bad("tuple sharding does not match the shape");
    std::vector<Literal> parts;
    for (size_t i = 0; i < s.tuple_elements.size(); ++i) {
      std::vector<Literal> leaf;
      for (const Literal& l : per_device) {
        if (l.tuple_size() != static_cast<int64_t>(s.tuple_elements.size())) return Bad("shard is not a tuple");
        leaf.push_back(l.tuple_element(i));
      }
      auto p = AssembleShards(leaf, s.tuple_elements[i], global_shape.tuple_shapes(i));
      if (!p.ok()) return p.status();
      parts.push_back(std::move(*p));
    }
    return Literal::MakeTuple(std::move(parts));
  }
  if (s.kind == Kind::kMaximal) {
    if (s.device < 0 || s.device >= static_cast<int64_t>(per_device.size())) return Bad("maximal device out of range");
    return per_device[s.device];
  }
  if (s.kind != Kind::kTiled) return per_device[0];
  auto global = Literal::Create(global_shape);
  if (!global.ok()) return global.status();
  Shape local_shape = ShardShape(s, global_shape);
  std::vector<int64_t> idx, gidx(global_shape.rank());
  for (int64_t dev = 0; dev < static_cast<int64_t>(per_device.size()); ++dev) {
    auto offsets = ShardOffsets(s, global_shape, dev);
    if (!offsets.ok()) continue;  // this device holds no tile
    const Literal& local = per_device[dev];
    if (!local.shape().SameDimensions(local_shape))
      return Bad(absl::StrCat("device ", dev, "'s shard is ", local.shape().ToString(false), ", expected ",
                              local_shape.ToString(false)));
    for (int64_t n = 0; n < local.element_count(); ++n) {
      IndexToCoords(n, local_shape.dimensions(), idx);
      bool inside = true;
      for (size_t d = 0; d < idx.size(); ++d) {
        gidx[d] = idx[d] + (*offsets)[d];
        inside &= gidx[d] < global_shape.dimensions(d);
      }
      if (inside) global->SetRawBits(global->LinearIndex(gidx), local.GetRawBits(local.LinearIndex(idx)));
    }
  }
  return std::move(*global);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandDeviceList(const CollectiveDeviceList& list) {
  if (!list.mesh_text.empty()) {
    auto parsed = MeshScanner(list.mesh_text).ParseGroups();
    if (!parsed.ok()) return parsed.status();
    const MeshText& m = *parsed;
    auto devices = MeshDevices(m);
    if (!devices.ok()) return devices.status();
    std::vector<int64_t> perm;
    std::vector<bool> named(m.axis_names.size(), false);
    int64_t group_size = 1;
    for (const auto& a : m.group_axes) {
      auto i = AxisIndex(m, a);
      if (!i.ok()) return i.status();
      if (named[*i]) return Bad(absl::StrCat("replica groups name axis '", a, "' twice"));
      named[*i] = true;
      group_size *= m.axis_sizes[*i];
    }
    for (size_t i = 0; i < named.size(); ++i)
      if (!named[i]) perm.push_back(static_cast<int64_t>(i));
    for (const auto& a : m.group_axes) perm.push_back(*AxisIndex(m, a));
    std::vector<int64_t> flat = Transpose(*devices, m.axis_sizes, perm);
    std::vector<std::vector<int64_t>> groups;
    for (size_t b = 0; b < flat.size(); b += group_size)
      groups.emplace_back(flat.begin() + b, flat.begin() + b + group_size);
    return groups;
  }
  if (!list.iota) return list.groups;
  auto flat = MaterializeIota(*list.iota);
  if (!flat.ok()) return flat.status();
  if (list.iota->dims.size() != 2) return Bad("iota replica groups need [num_groups, group_size]");
  int64_t group_size = list.iota->dims[1];
  std::vector<std::vector<int64_t>> groups;
  for (size_t b = 0; b + group_size <= flat->size(); b += group_size)
    groups.emplace_back(flat->begin() + b, flat->begin() + b + group_size);
  return groups;
}

std::string ShardingToString(const HloSharding& s) {
  switch (s.kind) {
    case Kind::kReplicated: return "{replicated}";
    case Kind::kManual: return "{manual}";
    case Kind::kMaximal: return absl::StrCat("{maximal device=", s.device, "}");
    case Kind::kTuple: {
      std::vector<std::string> parts;
      for (const auto& e : s.tuple_elements) parts.push_back(ShardingToString(e));
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
    case Kind::kTiled: {
      std::string out = absl::StrCat("{devices=[", absl::StrJoin(s.tile_dims, ","), "]",
                                     absl::StrJoin(s.devices, ","));
      if (!s.last_tile_dims.empty()) {
        std::vector<std::string> subs;
        for (Sub t : s.last_tile_dims) subs.push_back(t == Sub::kManual ? "manual" : "replicated");
        if (subs.size() == 1 && subs[0] == "replicated")
          absl::StrAppend(&out, " last_tile_dim_replicate");
        else
          absl::StrAppend(&out, " last_tile_dims={", absl::StrJoin(subs, ", "), "}");
      }
      return out + "}";
    }
    default: return "{unknown}";
  }
}

}  // namespace hloc
