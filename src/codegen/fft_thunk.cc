// FftThunk: see fft_thunk.h.
#include "codegen/fft_thunk.h"

#include "absl/strings/str_cat.h"
#include "runtime/executable/fft_config.h"

namespace hloc::codegen {
namespace {

bool RowMajor(const Shape& s) {
  if (!s.has_layout()) return true;
  const auto& m2m = s.layout().minor_to_major;
  for (size_t i = 0; i < m2m.size(); ++i)
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  return true;
}

const char* FftTypeName(FftType t) {
  switch (t) {
    case FftType::kFft: return "FFT";
    case FftType::kIfft: return "IFFT";
    case FftType::kRfft: return "RFFT";
    case FftType::kIrfft: return "IRFFT";
  }
  return "?";
}

}  // namespace

absl::StatusOr<runtime::Thunk> FftThunk(const HloInstruction& fft, const std::vector<KernelArgument>& arguments) {
  if (fft.operand_count() != 1 || arguments.size() != 2 || arguments[0].is_output || !arguments[1].is_output)
    return absl::InvalidArgumentError("an fft takes one array operand and gives one array");
  const Shape& in = arguments[0].shape;
  const Shape& out = arguments[1].shape;
  for (const Shape* s : {&in, &out}) {
    if (!RowMajor(*s))
      return absl::UnimplementedError(absl::StrCat("the FFT library reads and writes row-major arrays; ", s->ToString(),
                                                   " has another layout (layout assignment should have given it "
                                                   "the default one)"));
  }
  runtime::Thunk t;
  t.kind = runtime::ThunkKind::kFft;
  t.name = fft.name();
  runtime::FftConfig& c = t.fft;
  c.fft_type = FftTypeName(fft.attrs().fft_type);
  c.input_type = std::string(PrimitiveTypeName(in.element_type()));
  c.output_type = std::string(PrimitiveTypeName(out.element_type()));
  c.fft_length = fft.attrs().fft_length;
  c.input_dimensions = in.dimensions();
  c.output_dimensions = out.dimensions();
  // The runtime's own checks, here too, so a module the runtime would refuse fails to compile.
  absl::StatusOr<runtime::FftGeometry> g = runtime::AnalyzeFft(c, arguments[0].slice.size, arguments[1].slice.size);
  if (!g.ok()) return g.status();
  t.arguments = {arguments[0].slice, arguments[1].slice};
  t.written = {false, true};
  return t;
}

}  // namespace hloc::codegen
