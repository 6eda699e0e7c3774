// Compiling and running modules on the CPU backend in tests (cpu_test_util.h).
#include "backend/cpu_test_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/thunk_emitter.h"
#include "eval/compare.h"
#include "runtime/cpu/cpu_executable.h"

namespace hloc::cputest {
namespace {

using codegen::cpu::CpuCompileOptions;
using codegen::cpu::CpuCompiler;

std::vector<int64_t> Strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& m2m) {
  std::vector<int64_t> strides(dims.size(), 1);
  int64_t s = 1;
  for (int64_t d : m2m) {
    strides[d] = s;
    s *= dims[d];
  }
  return strides;
}

// Row-major literal <-> host buffer in the executable's layout.
runtime::HostBuffer ToHost(const Literal& lit, const runtime::ArrayShape& shape) {
  runtime::HostBuffer h;
  h.shape = shape;
  Shape s = lit.shape();
  Layout l;
  l.minor_to_major = shape.minor_to_major;
  s.set_layout(l);
  h.data = codegen::LiteralBytesInLayout(lit, s);
  return h;
}

absl::StatusOr<Literal> FromHost(const runtime::HostBuffer& h) {
  std::optional<PrimitiveType> t = ParsePrimitiveType(h.shape.element_type);
  if (!t) return absl::InvalidArgumentError("bad element type " + h.shape.element_type);
  Literal lit(Shape(*t, h.shape.dimensions));
  const int64_t w = h.shape.element_size_in_bytes;
  const int64_t n = lit.element_count();
  if (static_cast<int64_t>(h.data.size()) < n * w) return absl::InvalidArgumentError("short result buffer");
  const std::vector<int64_t>& dims = h.shape.dimensions;
  const std::vector<int64_t> strides = Strides(dims, h.shape.minor_to_major);
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t physical = 0;
    for (size_t d = 0; d < dims.size(); ++d) physical += index[d] * strides[d];
    std::memcpy(lit.untyped_data() + linear * w, h.data.data() + physical * w, w);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return lit;
}

}  // namespace

absl::StatusOr<runtime::Executable> Compile(HloModule& module, bool passes) {
  CpuCompileOptions options;
  if (passes) {
    const std::string source = HLOC_SOURCE_DIR;
    absl::Status s = codegen::cpu::LoadCpuProfileAndPipeline("cpu", {source + "/configs"}, {source + "/pipelines"},
                                                             options);
    if (!s.ok()) return s;
  }
  return CpuCompiler::Compile(module, options);
}

// Runs `exe` on `args` (one literal per entry parameter) and returns the result leaves.
absl::StatusOr<std::vector<Literal>> Run(runtime::Executable exe, const std::vector<Literal>& args) {
  std::vector<runtime::HostBuffer> inputs;
  std::vector<const Literal*> leaves;
  for (const Literal& a : args)
    for (const Literal* l : FlattenLeaves(a)) leaves.push_back(l);
  if (leaves.size() != exe.parameter_shapes.size())
    return absl::InvalidArgumentError(absl::StrCat(leaves.size(), " arguments for ", exe.parameter_shapes.size(),
                                                   " parameters"));
  for (size_t i = 0; i < leaves.size(); ++i) inputs.push_back(ToHost(*leaves[i], exe.parameter_shapes[i]));
  runtime::CpuRunOptions options;
  options.num_threads = 4;
  absl::StatusOr<std::unique_ptr<runtime::CpuExecutable>> loaded = runtime::CpuExecutable::Load(std::move(exe), options);
  if (!loaded.ok()) return loaded.status();
  absl::StatusOr<std::vector<runtime::HostBuffer>> results = (*loaded)->Run(inputs);
  if (!results.ok()) return results.status();
  std::vector<Literal> out;
  for (const runtime::HostBuffer& h : *results) {
    absl::StatusOr<Literal> l = FromHost(h);
    if (!l.ok()) return l.status();
    out.push_back(std::move(*l));
  }
  return out;
}

Literal RandomLiteral(const Shape& shape, std::mt19937& rng, int64_t int_range) {
  if (shape.IsTuple()) {
    std::vector<Literal> parts;
    for (const Shape& s : shape.tuple_shapes()) parts.push_back(RandomLiteral(s, rng, int_range));
    return Literal::MakeTuple(std::move(parts));
  }
  Literal lit(shape);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int64_t> integer(0, int_range - 1);
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (IsFloatingPoint(shape.element_type())) {
      lit.SetDouble(i, real(rng));
    } else if (shape.element_type() == PrimitiveType::PRED) {
      lit.SetInt(i, integer(rng) % 2);
    } else {
      lit.SetInt(i, integer(rng));
    }
  }
  return lit;
}

}  // namespace hloc::cputest
