// AnalyzeFft: see fft_config.h. The rules are XLA's shape inference for fft
// (xla/service/shape_inference.cc InferFftShape), restated for what a runtime reads.
#include "runtime/executable/fft_config.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc::runtime {
namespace {

constexpr size_t kMaxRank = 64;  // far above any real array; keeps hostile files cheap

std::string Dims(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

// Product of `dims`, or an error when it overflows int64.
absl::StatusOr<int64_t> Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) {
    if (__builtin_mul_overflow(p, dims[i], &p))
      return absl::InvalidArgumentError(absl::StrCat("fft: the extents ", Dims(dims), " overflow 64 bits"));
  }
  return p;
}

}  // namespace

absl::StatusOr<FftGeometry> AnalyzeFft(const FftConfig& c, int64_t input_bytes, int64_t output_bytes) {
  FftGeometry g;
  const std::string& t = c.fft_type;
  std::string complex_type, real_type;
  if (t == "FFT" || t == "IFFT") {
    g.kind = FftGeometry::Kind::kC2C;
    complex_type = c.input_type;
    if (c.output_type != c.input_type)
      return absl::InvalidArgumentError(absl::StrCat("fft: ", t, " maps ", c.input_type, " to itself, not to ",
                                                     c.output_type));
  } else if (t == "RFFT") {
    g.kind = FftGeometry::Kind::kR2C;
    real_type = c.input_type;
    complex_type = c.output_type;
  } else if (t == "IRFFT") {
    g.kind = FftGeometry::Kind::kC2R;
    complex_type = c.input_type;
    real_type = c.output_type;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("fft: unknown fft type '", t, "' (FFT, IFFT, RFFT or IRFFT)"));
  }
  g.inverse = t == "IFFT" || t == "IRFFT";
  if (complex_type == "c64" && (real_type.empty() || real_type == "f32")) {
    g.double_precision = false;
  } else if (complex_type == "c128" && (real_type.empty() || real_type == "f64")) {
    g.double_precision = true;
  } else {
    return absl::UnimplementedError(absl::StrCat("fft: ", t, " of ", c.input_type, " to ", c.output_type,
                                                 " is not supported (c64/c128 complex, f32/f64 real, of one precision)"));
  }
  const int64_t complex_bytes = g.double_precision ? 16 : 8, real_bytes = complex_bytes / 2;
  g.input_element_bytes = g.kind == FftGeometry::Kind::kR2C ? real_bytes : complex_bytes;
  g.output_element_bytes = g.kind == FftGeometry::Kind::kC2R ? real_bytes : complex_bytes;

  const size_t r = c.fft_length.size(), rank = c.input_dimensions.size();
  if (r < 1 || r > 3) return absl::InvalidArgumentError(absl::StrCat("fft: fft_length has ", r, " entries (1 to 3)"));
  if (rank < r || rank > kMaxRank || c.output_dimensions.size() != rank)
    return absl::InvalidArgumentError(absl::StrCat("fft: input ", Dims(c.input_dimensions), " and output ",
                                                   Dims(c.output_dimensions), " must have one rank, at least ", r));
  for (const std::vector<int64_t>* v : {&c.fft_length, &c.input_dimensions, &c.output_dimensions})
    for (int64_t d : *v)
      if (d < 0) return absl::InvalidArgumentError(absl::StrCat("fft: negative extent in ", Dims(*v)));
  const size_t lead = rank - r;
  for (size_t i = 0; i < lead; ++i)
    if (c.input_dimensions[i] != c.output_dimensions[i])
      return absl::InvalidArgumentError(absl::StrCat("fft: batch dimensions differ between input ",
                                                     Dims(c.input_dimensions), " and output ",
                                                     Dims(c.output_dimensions)));
  g.n = c.fft_length;
  g.input_embed.assign(c.input_dimensions.begin() + lead, c.input_dimensions.end());
  g.output_embed.assign(c.output_dimensions.begin() + lead, c.output_dimensions.end());
  // What each side must hold: the full lengths, except the halved last dimension of the
  // complex side of RFFT (written: exactly N/2+1) and IRFFT (read: the first N/2+1 of it);
  // 0 for N = 0, as XLA's shape inference has it.
  std::vector<int64_t> want_in = g.n, want_out = g.n;
  const int64_t half = g.n.back() == 0 ? 0 : g.n.back() / 2 + 1;
  if (g.kind == FftGeometry::Kind::kR2C) want_out.back() = half;
  if (g.kind == FftGeometry::Kind::kC2R) want_in.back() = half;
  bool ok = g.output_embed == want_out;
  for (size_t i = 0; i < r && ok; ++i) {
    const bool last_of_c2r = g.kind == FftGeometry::Kind::kC2R && i + 1 == r;
    ok = last_of_c2r ? g.input_embed[i] >= want_in[i] : g.input_embed[i] == want_in[i];
  }
  g.description = absl::StrCat(t, " ", c.input_type, Dims(c.input_dimensions), " -> ", c.output_type,
                               Dims(c.output_dimensions), " fft_length={", absl::StrJoin(g.n, ","), "}");
  if (!ok)
    return absl::InvalidArgumentError(absl::StrCat("fft: ", g.description, ": the transformed dimensions must be ",
                                                   Dims(want_in), " in and ", Dims(want_out), " out"));
  absl::StatusOr<int64_t> batch = Product(c.input_dimensions, 0, lead);
  absl::StatusOr<int64_t> idist = Product(g.input_embed, 0, r);
  absl::StatusOr<int64_t> odist = Product(g.output_embed, 0, r);
  absl::StatusOr<int64_t> length = Product(g.n, 0, r);
  absl::StatusOr<int64_t> in_elems = Product(c.input_dimensions, 0, rank);
  absl::StatusOr<int64_t> out_elems = Product(c.output_dimensions, 0, rank);
  for (const auto* s : {&batch, &idist, &odist, &length, &in_elems, &out_elems})
    if (!s->ok()) return s->status();
  g.batch = *batch;
  g.input_distance = *idist;
  g.output_distance = *odist;
  g.input_elements = *in_elems;
  g.output_elements = *out_elems;
  g.zero_length = *length == 0;
  if (g.inverse && *length > 0) g.scale_divisor = *length;
  int64_t need_in, need_out;
  if (__builtin_mul_overflow(g.input_elements, g.input_element_bytes, &need_in) ||
      __builtin_mul_overflow(g.output_elements, g.output_element_bytes, &need_out))
    return absl::InvalidArgumentError(absl::StrCat("fft: ", g.description, ": byte sizes overflow 64 bits"));
  if (need_in > input_bytes || need_out > output_bytes)
    return absl::InvalidArgumentError(absl::StrCat("fft: ", g.description, " needs ", need_in, " input and ", need_out,
                                                   " output bytes; its slices hold ", input_bytes, " and ",
                                                   output_bytes));
  return g;
}

}  // namespace hloc::runtime
