// CpuFft: FFTW plans for kFft thunks (see fft.h).
#include "runtime/cpu/fft.h"

#include <fftw3.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/thread_pool.h"

namespace hloc::runtime {
namespace {

// FFTW's planner (and plan destruction) touch global state: one lock for the process.
std::mutex& PlannerMutex() {
  static std::mutex mu;
  return mu;
}

// The double (fftw_) and single (fftwf_) precision APIs behind one name.
template <bool kDouble>
struct Fftw;
template <>
struct Fftw<true> {
  using Real = double;
  using Complex = fftw_complex;
  using Plan = fftw_plan;
  using IoDim = fftw_iodim64;
  static Plan C2C(int rank, const IoDim* dims, const IoDim* howmany, void* in, void* out, int sign, unsigned flags) {
    return fftw_plan_guru64_dft(rank, dims, 1, howmany, static_cast<Complex*>(in), static_cast<Complex*>(out), sign,
                                flags);
  }
  static Plan R2C(int rank, const IoDim* dims, const IoDim* howmany, void* in, void* out, unsigned flags) {
    return fftw_plan_guru64_dft_r2c(rank, dims, 1, howmany, static_cast<Real*>(in), static_cast<Complex*>(out),
                                    flags);
  }
  static Plan C2R(int rank, const IoDim* dims, const IoDim* howmany, void* in, void* out, unsigned flags) {
    return fftw_plan_guru64_dft_c2r(rank, dims, 1, howmany, static_cast<Complex*>(in), static_cast<Real*>(out),
                                    flags);
  }
  static void Execute(void* plan) { fftw_execute(static_cast<Plan>(plan)); }
  static void Destroy(void* plan) { fftw_destroy_plan(static_cast<Plan>(plan)); }
};
template <>
struct Fftw<false> {
  using Real = float;
  using Complex = fftwf_complex;
  using Plan = fftwf_plan;
  using IoDim = fftwf_iodim64;
  static Plan C2C(int rank, const IoDim* dims, const IoDim* howmany, void* in, void* out, int sign, unsigned flags) {
    return fftwf_plan_guru64_dft(rank, dims, 1, howmany, static_cast<Complex*>(in), static_cast<Complex*>(out), sign,
                                 flags);
  }
  static Plan R2C(int rank, const IoDim* dims, const IoDim* howmany, void* in, void* out, unsigned flags) {
    return fftwf_plan_guru64_dft_r2c(rank, dims, 1, howmany, static_cast<Real*>(in), static_cast<Complex*>(out),
                                     flags);
  }
  static Plan C2R(int rank, const IoDim* dims, const IoDim* howmany, void* in, void* out, unsigned flags) {
    return fftwf_plan_guru64_dft_c2r(rank, dims, 1, howmany, static_cast<Complex*>(in), static_cast<Real*>(out),
                                     flags);
  }
  static void Execute(void* plan) { fftwf_execute(static_cast<Plan>(plan)); }
  static void Destroy(void* plan) { fftwf_destroy_plan(static_cast<Plan>(plan)); }
};

// Row-major element strides of the extents `embed`.
std::vector<int64_t> Strides(const std::vector<int64_t>& embed) {
  std::vector<int64_t> s(embed.size(), 1);
  for (size_t i = embed.size(); i-- > 1;) s[i - 1] = s[i] * embed[i];
  return s;
}

// A plan for `batch` transforms reading `in` and writing `out`; null when FFTW cannot.
template <bool kDouble>
void* MakePlan(const FftGeometry& g, int64_t batch, void* in, void* out) {
  using F = Fftw<kDouble>;
  const int rank = static_cast<int>(g.n.size());
  const std::vector<int64_t> is = Strides(g.input_embed), os = Strides(g.output_embed);
  typename F::IoDim dims[3], howmany[1];
  for (int i = 0; i < rank; ++i) {
    dims[i].n = g.n[i];
    dims[i].is = is[i];
    dims[i].os = os[i];
  }
  howmany[0].n = batch;
  howmany[0].is = g.input_distance;
  howmany[0].os = g.output_distance;
  std::lock_guard<std::mutex> lock(PlannerMutex());
  switch (g.kind) {
    case FftGeometry::Kind::kC2C:
      return F::C2C(rank, dims, howmany, in, out, g.inverse ? FFTW_BACKWARD : FFTW_FORWARD,
                    FFTW_ESTIMATE | (in == out ? 0u : FFTW_PRESERVE_INPUT));
    case FftGeometry::Kind::kR2C:
      return F::R2C(rank, dims, howmany, in, out, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
    case FftGeometry::Kind::kC2R:
      return F::C2R(rank, dims, howmany, in, out, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
  }
  return nullptr;
}

template <typename Real>
void Scale(void* data, int64_t count, int64_t divisor) {
  const Real s = static_cast<Real>(1) / static_cast<Real>(divisor);
  Real* p = static_cast<Real*>(data);
  for (int64_t i = 0; i < count; ++i) p[i] *= s;
}

bool Overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + static_cast<uintptr_t>(b_bytes) && y < x + static_cast<uintptr_t>(a_bytes);
}

}  // namespace

// One contiguous run of the batch: its own plan over its own part of the arrays.
struct CpuFft::Piece {
  void* plan = nullptr;
  int64_t first = 0, count = 0;  // batch indices
};

absl::StatusOr<std::unique_ptr<CpuFft>> CpuFft::Create(const FftConfig& config, const void* input,
                                                       int64_t input_bytes, void* output, int64_t output_bytes,
                                                       int64_t parts) {
  absl::StatusOr<FftGeometry> g = AnalyzeFft(config, input_bytes, output_bytes);
  if (!g.ok()) return g.status();
  std::unique_ptr<CpuFft> fft(new CpuFft());
  fft->geometry_ = *g;
  fft->input_ = input;
  fft->output_ = output;
  const FftGeometry& geo = fft->geometry_;
  if (geo.zero_length || geo.batch == 0) return fft;  // nothing to plan
  const bool in_place = input == output && geo.kind == FftGeometry::Kind::kC2C;
  const bool copy_input = geo.kind == FftGeometry::Kind::kC2R ||
                          (!in_place && Overlap(input, geo.input_bytes(), output, geo.output_bytes()));
  void* read = const_cast<void*>(input);
  if (copy_input) {
    fft->scratch_ = fftw_malloc(static_cast<size_t>(std::max<int64_t>(geo.input_bytes(), 1)));
    if (fft->scratch_ == nullptr)
      return absl::ResourceExhaustedError(absl::StrCat("fft: cannot allocate ", geo.input_bytes(),
                                                       " bytes for a copy of the input of ", geo.description));
    read = fft->scratch_;
  }
  parts = std::clamp<int64_t>(parts, 1, geo.batch);
  fft->pieces_ = std::make_unique<Piece[]>(static_cast<size_t>(parts));
  fft->num_pieces_ = parts;
  for (int64_t p = 0; p < parts; ++p) {
    Piece& piece = fft->pieces_[p];
    piece.first = geo.batch * p / parts;
    piece.count = geo.batch * (p + 1) / parts - piece.first;
    uint8_t* in = static_cast<uint8_t*>(read) + piece.first * geo.input_distance * geo.input_element_bytes;
    uint8_t* out = static_cast<uint8_t*>(output) + piece.first * geo.output_distance * geo.output_element_bytes;
    piece.plan = geo.double_precision ? MakePlan<true>(geo, piece.count, in, out)
                                      : MakePlan<false>(geo, piece.count, in, out);
    if (piece.plan == nullptr)
      return absl::InternalError(absl::StrCat("fft: FFTW made no plan for ", geo.description));
  }
  return fft;
}

CpuFft::~CpuFft() {
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    for (int64_t p = 0; p < num_pieces_; ++p) {
      if (pieces_[p].plan == nullptr) continue;
      if (geometry_.double_precision) {
        Fftw<true>::Destroy(pieces_[p].plan);
      } else {
        Fftw<false>::Destroy(pieces_[p].plan);
      }
    }
  }
  if (scratch_ != nullptr) fftw_free(scratch_);
}

void CpuFft::Run(ThreadPool* pool) {
  const FftGeometry& g = geometry_;
  if (g.zero_length) {
    if (g.output_bytes() > 0) std::memset(output_, 0, static_cast<size_t>(g.output_bytes()));
    return;
  }
  if (num_pieces_ == 0) return;
  auto run_piece = [&](int64_t p) {
    const Piece& piece = pieces_[p];
    if (scratch_ != nullptr) {
      const int64_t row = g.input_distance * g.input_element_bytes;
      std::memcpy(static_cast<uint8_t*>(scratch_) + piece.first * row,
                  static_cast<const uint8_t*>(input_) + piece.first * row, static_cast<size_t>(piece.count * row));
    }
    if (g.double_precision) {
      Fftw<true>::Execute(piece.plan);
    } else {
      Fftw<false>::Execute(piece.plan);
    }
    if (g.scale_divisor != 1) {
      const int64_t reals_per = g.output_distance * (g.kind == FftGeometry::Kind::kC2R ? 1 : 2);
      const int64_t real_bytes = g.double_precision ? 8 : 4;
      void* out = static_cast<uint8_t*>(output_) + piece.first * reals_per * real_bytes;
      if (g.double_precision) {
        Scale<double>(out, piece.count * reals_per, g.scale_divisor);
      } else {
        Scale<float>(out, piece.count * reals_per, g.scale_divisor);
      }
    }
  };
  if (num_pieces_ == 1 || pool == nullptr) {
    for (int64_t p = 0; p < num_pieces_; ++p) run_piece(p);
  } else {
    pool->ParallelFor(num_pieces_, run_piece);
  }
}

const char* FftwVersion() { return fftw_version; }

}  // namespace hloc::runtime
