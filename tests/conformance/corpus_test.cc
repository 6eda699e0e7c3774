// Corpus conformance (tests/corpus, see its README): every HLO module parses, verifies and
// round-trips through the printer; every small module evaluates to its outputs.npz within the
// README's thresholds, and the whole small corpus evaluates in under 60 s. One dynamic section
// per file, so a failure names the file.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "io/npy.h"
#include "ir/computation.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace hloc {
namespace {

using testutil::Basename;
using testutil::CorpusDir;
using testutil::EndsWith;

constexpr double kSmallCorpusBudgetSeconds = 60.0;

// ---------------------------------------------------------------------------------------
// Parse, verify, round-trip.

struct ParseStats {
  int files = 0, parsed = 0, verified = 0, fixed_point = 0, long_form = 0, identical = 0;
};
ParseStats& Stats() {
  static ParseStats s;
  return s;
}

void CheckCorpusFile(const std::string& path) {
  ParseStats& stats = Stats();
  ++stats.files;
  auto text = testutil::ReadFile(path);
  REQUIRE(text.ok());
  auto module = ParseHloModuleFile(path);
  if (!module.ok()) {
    FAIL_CHECK("parse failed: " << module.status().message());
    return;
  }
  ++stats.parsed;
  absl::Status verified = VerifyModule(**module);
  if (verified.ok()) {
    ++stats.verified;
  } else {
    FAIL_CHECK("verifier rejected it: " << verified.message());
  }

  // print(parse(F)) must parse back and print identically (the re-parsed module prints the
  // same as the first).
  testutil::FixedPointResult fp = testutil::CheckPrintFixedPoint(**module, HloPrintOptions());
  if (fp.ok) {
    ++stats.fixed_point;
  } else {
    FAIL_CHECK("default print: " << fp.error);
  }
  // Not required here (the printer's own test holds it): whether print(parse(F)) == F, the
  // byte-exact fidelity to XLA's dump. Counted for the summary.
  if (fp.printed == *text) ++stats.identical;

  // XLA's long form (operand shapes) must parse back to the same module too. Async syntax
  // sugar is off here: with it the wrapped computations are not printed, and re-parsing
  // re-creates them under new names and in another place, an equivalent but not identical
  // text (the printer's roundtrip_test holds the sugared form to its own fixed point).
  HloPrintOptions long_options = HloPrintOptions::Long();
  long_options.syntax_sugar_async_ops = false;
  std::string long_text = PrintModule(**module, long_options);
  auto from_long = ParseHloModule(long_text, Basename(path) + " (long form)");
  if (!from_long.ok()) {
    FAIL_CHECK("long-form print does not parse back: " << from_long.status().message());
    return;
  }
  std::string again = PrintModule(**from_long, HloPrintOptions());
  if (again == fp.printed) {
    ++stats.long_form;
  } else {
    FAIL_CHECK("long-form print re-parses to a different module: "
               << testutil::FirstDifference(fp.printed, again));
  }
}

TEST_CASE("corpus: every HLO file parses, verifies and round-trips", "[corpus][parse]") {
  std::vector<std::string> files = testutil::CorpusHloFiles();
  REQUIRE(files.size() >= 100);  // 112 when this was written; fewer means a broken checkout
  for (const std::string& path : files) {
    std::string rel = path.substr(CorpusDir().size() + 1);
    DYNAMIC_SECTION(rel) { CheckCorpusFile(path); }
  }
}

// ---------------------------------------------------------------------------------------
// Evaluation against outputs.npz.

// The small modules: NAME with NAME.small.{before,after}_optimizations.txt and
// NAME.small.{inputs,outputs}.npz in corpus/, and public2/NAME for the second public wave
// (spmd/ is for two devices: parse only; layers/ is for compile time: parse only).
std::vector<std::string> SmallModuleNames() {
  std::vector<std::string> names;
  const std::string suffix = ".small.inputs.npz";
  for (const char* wave : {"", "public2/"}) {
    for (const std::string& path : testutil::ListFiles(CorpusDir() + "/" + wave, suffix)) {
      std::string base = Basename(path);
      names.push_back(wave + base.substr(0, base.size() - suffix.size()));
    }
  }
  return names;
}

// out_dtypes of "NAME.small" in results.json, as numpy names. A small scanner is enough:
// the file is machine-written with one key per line.
std::vector<std::string> ResultsOutDtypes(const std::string& wave_and_name) {
  // "public2/NAME" is NAME in public2/results.json.
  size_t slash = wave_and_name.rfind('/');
  const std::string wave = slash == std::string::npos ? "" : wave_and_name.substr(0, slash + 1);
  const std::string name = wave_and_name.substr(slash == std::string::npos ? 0 : slash + 1);
  static std::map<std::string, std::string> files;
  if (!files.count(wave)) files[wave] = testutil::ReadFile(CorpusDir() + "/" + wave + "results.json").value_or("");
  const std::string& json = files[wave];
  std::vector<std::string> dtypes;
  size_t at = json.find("\"" + name + ".small\": {");
  if (at == std::string::npos) return dtypes;
  size_t end = json.find('}', at);
  size_t list = json.find("\"out_dtypes\": [", at);
  if (list == std::string::npos || list > end) return dtypes;
  size_t close = json.find(']', list);
  for (size_t q = json.find('"', list + 15); q != std::string::npos && q < close;) {
    size_t q2 = json.find('"', q + 1);
    if (q2 == std::string::npos) break;
    dtypes.push_back(json.substr(q + 1, q2 - q - 1));
    q = json.find('"', q2 + 1);
  }
  return dtypes;
}

std::string NumpyName(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::PRED: return "bool";
    case PrimitiveType::S8: return "int8";
    case PrimitiveType::S16: return "int16";
    case PrimitiveType::S32: return "int32";
    case PrimitiveType::S64: return "int64";
    case PrimitiveType::U8: return "uint8";
    case PrimitiveType::U16: return "uint16";
    case PrimitiveType::U32: return "uint32";
    case PrimitiveType::U64: return "uint64";
    case PrimitiveType::F16: return "float16";
    case PrimitiveType::BF16: return "bfloat16";
    case PrimitiveType::F32: return "float32";
    case PrimitiveType::F64: return "float64";
    case PrimitiveType::C64: return "complex64";
    case PrimitiveType::C128: return "complex128";
    default: return std::string(PrimitiveTypeName(t));
  }
}

const NpyArray* FindArray(const std::vector<NpyArray>& arrays, const std::string& name) {
  for (const NpyArray& a : arrays)
    if (a.name == name) return &a;
  return nullptr;
}

// arg0..argN of inputs.npz, reinterpreted as the entry parameters' types.
absl::StatusOr<std::vector<Literal>> LoadInputs(const HloModule& module, const std::string& npz) {
  auto arrays = ReadNpz(npz);
  if (!arrays.ok()) return arrays.status();
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  if (static_cast<int64_t>(arrays->size()) != entry->num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(npz, " holds ", arrays->size(),
                                                   " arrays; the entry has ",
                                                   entry->num_parameters(), " parameters"));
  }
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const NpyArray* a = FindArray(*arrays, absl::StrCat("arg", i));
    if (a == nullptr) return absl::NotFoundError(absl::StrCat(npz, " has no arg", i));
    if (entry->parameter_instruction(i) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("entry parameter ", i, " is missing"));
    }
    auto lit = ReinterpretAs(*a, entry->parameter_instruction(i)->shape());
    if (!lit.ok()) return lit.status();
    args.push_back(std::move(*lit));
  }
  return args;
}

struct EvalRecord {
  bool evaluated = false;  // EvaluateModule returned a result
  bool unsupported = false;
  double seconds = 0;
  std::string verdict;  // "match (...)", "MISMATCH (...)", "unsupported", "error: ..."
};
// name -> record, shared between the per-module sections and the timing test, so a full run
// evaluates each module once.
std::map<std::string, EvalRecord>& Records(bool optimized) {
  static std::map<std::string, EvalRecord> before, after;
  return optimized ? after : before;
}

bool IsUnsupported(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnimplemented ||
         s.message().find("unsupported") != std::string_view::npos ||
         s.message().find("not supported") != std::string_view::npos;
}

// Parses, evaluates and compares one small module; records its time and verdict. With
// `optimized`, unsupported-op errors are counted, not failures, except for XLA:GPU's cuBLAS /
// cuDNN library calls, which the evaluator runs (src/eval/eval_library_calls.cc).
void EvaluateSmallModule(const std::string& name, bool optimized) {
  EvalRecord& rec = Records(optimized)[name];
  rec = EvalRecord();
  const std::string stem = CorpusDir() + "/" + name + ".small.";
  const std::string hlo =
      stem + (optimized ? "after_optimizations.txt" : "before_optimizations.txt");
  auto module = ParseHloModuleFile(hlo);
  if (!module.ok()) {
    rec.verdict = "error: parse";
    FAIL_CHECK("parse failed: " << module.status().message());
    return;
  }
  auto args = LoadInputs(**module, stem + "inputs.npz");
  if (!args.ok()) {
    rec.verdict = "error: inputs";
    FAIL_CHECK("inputs: " << args.status().message());
    return;
  }
  auto start = std::chrono::steady_clock::now();
  auto result = EvaluateModule(**module, *args);
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) {
    const std::string msg(result.status().message());
    const bool library_call = msg.find("__cublas") != std::string::npos || msg.find("__cudnn") != std::string::npos;
    if (optimized && IsUnsupported(result.status()) && !library_call) {
      rec.unsupported = true;
      rec.verdict = "unsupported";
      INFO(name << ": " << result.status().message());
      SUCCEED("unsupported in the optimized module (counted, not a failure)");
      return;
    }
    rec.verdict = absl::StrCat("error: ", testutil::Shorten(std::string(result.status().message()), 120));
    FAIL_CHECK("evaluation failed: " << result.status().message());
    return;
  }
  rec.evaluated = true;

  std::vector<const Literal*> leaves = FlattenLeaves(*result);
  std::vector<bool> fed = OutputsFedByDotOrConvolution(**module);
  auto expected = ReadNpz(stem + "outputs.npz");
  if (!expected.ok()) {
    rec.verdict = "error: outputs.npz";
    FAIL_CHECK(expected.status().message());
    return;
  }
  CHECK(leaves.size() == expected->size());
  CHECK(fed.size() == leaves.size());
  std::vector<std::string> dtypes = ResultsOutDtypes(name);
  CHECK(dtypes.size() == leaves.size());
  bool all_match = leaves.size() == expected->size();
  double worst_error = 0, worst_threshold = 0;  // the output closest to its threshold
  for (size_t i = 0; i < leaves.size(); ++i) {
    std::string out_name = absl::StrCat("out", i);
    INFO(name << " " << out_name << " " << leaves[i]->shape().ToString(false));
    if (i < dtypes.size()) CHECK(NumpyName(leaves[i]->element_type()) == dtypes[i]);
    const NpyArray* ref_array = FindArray(*expected, out_name);
    if (ref_array == nullptr) {
      FAIL_CHECK("outputs.npz has no " << out_name);
      all_match = false;
      continue;
    }
    auto ref = ReinterpretAs(*ref_array, leaves[i]->shape());
    if (!ref.ok()) {
      FAIL_CHECK("expected output does not fit the result: " << ref.status().message());
      all_match = false;
      continue;
    }
    bool dot_fed = i < fed.size() && fed[i];
    CompareResult cmp = CompareLiterals(*leaves[i], *ref, DefaultTolerance(leaves[i]->element_type(), dot_fed),
                                        DefaultAbsoluteFloor(leaves[i]->element_type(), dot_fed));
    INFO("relative error " << cmp.error << " (threshold " << cmp.threshold << ")");
    double worst_ratio = worst_threshold > 0 ? worst_error / worst_threshold : -1;
    if (cmp.threshold > 0 && cmp.error / cmp.threshold > worst_ratio) {
      worst_error = cmp.error;
      worst_threshold = cmp.threshold;
    }
    if (!cmp.ok) {
      all_match = false;
      FAIL_CHECK(out_name << " does not match: " << cmp.message);
    }
  }
  rec.verdict = all_match ? "match" : "MISMATCH";
  if (worst_threshold > 0) {
    absl::StrAppend(&rec.verdict, absl::StrFormat(" (worst float output: error %.2g, threshold %.0e)",
                                                  worst_error, worst_threshold));
  } else {
    absl::StrAppend(&rec.verdict, " (exact outputs only)");
  }

  // Negative control: the same comparison must notice one wrong element, so a "match" above
  // cannot come from a comparison that looks at nothing.
  for (size_t i = 0; i < leaves.size() && i < expected->size(); ++i) {
    if (leaves[i]->element_count() == 0) continue;
    Literal wrong = *leaves[i];
    PrimitiveType t = wrong.element_type();
    if (t == PrimitiveType::PRED) {
      wrong.SetRawBits(0, wrong.GetPred(0) ? 0 : 1);
    } else if (IsIntegral(t)) {
      wrong.SetRawBits(0, wrong.GetRawBits(0) ^ 1);
    } else {
      double norm = 0;
      for (int64_t e = 0; e < wrong.element_count(); ++e) {
        double v = IsComplex(t) ? std::abs(wrong.GetComplex(e)) : wrong.GetDouble(e);
        if (std::isfinite(v)) norm += v * v;
      }
      double v0 = IsComplex(t) ? wrong.GetComplex(0).real() : wrong.GetDouble(0);
      double bumped = (std::isfinite(v0) ? v0 : 0.0) + 10.0 * (std::sqrt(norm) + 1.0);
      if (IsComplex(t)) wrong.SetComplex(0, {bumped, 0.0}); else wrong.SetDouble(0, bumped);
    }
    CompareResult cmp = CompareLiterals(wrong, *leaves[i], DefaultTolerance(t, true), DefaultAbsoluteFloor(t, true));
    INFO("negative control on out" << i);
    CHECK_FALSE(cmp.ok);
    break;
  }
}

TEST_CASE("corpus: small modules evaluate to their outputs.npz", "[corpus][eval]") {
  std::vector<std::string> names = SmallModuleNames();
  REQUIRE(names.size() >= 20);
  for (const std::string& name : names) {
    DYNAMIC_SECTION(name << ".small.before_optimizations.txt") { EvaluateSmallModule(name, false); }
  }
}

TEST_CASE("corpus: optimized small modules evaluate where the evaluator supports them",
          "[corpus][eval][optimized]") {
  for (const std::string& name : SmallModuleNames()) {
    DYNAMIC_SECTION(name << ".small.after_optimizations.txt") { EvaluateSmallModule(name, true); }
  }
}

TEST_CASE("corpus: XLA's cuDNN calls in optimized small modules evaluate and match",
          "[corpus][eval][optimized][library]") {
  // conv_bn_relu_pool: __cudnn$convForward; conv_train_step: __cudnn$convForward and
  // __cudnn$convBackwardFilter (both counted unsupported before eval_library_calls.cc).
  for (const char* name : {"conv_bn_relu_pool", "conv_train_step"}) {
    INFO(name);
    EvaluateSmallModule(name, true);
    const EvalRecord& rec = Records(true)[name];
    CHECK_FALSE(rec.unsupported);
    CHECK(rec.verdict.rfind("match", 0) == 0);
  }
}

void PrintTable(const char* title, const std::map<std::string, EvalRecord>& records) {
  double total = 0;
  int match = 0, unsupported = 0;
  std::printf("\n%s\n", title);
  for (const auto& [name, rec] : records) {
    std::printf("  %-26s %8.3f s  %s\n", name.c_str(), rec.seconds, rec.verdict.c_str());
    total += rec.seconds;
    match += rec.verdict.rfind("match", 0) == 0;
    unsupported += rec.unsupported;
  }
  std::printf("  %d of %zu match, %d unsupported; evaluation time %.2f s\n", match,
              records.size(), unsupported, total);
}

TEST_CASE("corpus: the small corpus evaluates within 60 s", "[corpus][eval][time]") {
  // Modules the section runs above did not reach (a filtered run) are evaluated here.
  for (const std::string& name : SmallModuleNames()) {
    if (Records(false).count(name) == 0) {
      INFO("evaluating " << name << ".small.before_optimizations.txt");
      EvaluateSmallModule(name, false);
    }
  }
  double total = 0;
  for (const auto& [name, rec] : Records(false)) total += rec.seconds;
  PrintTable("small corpus (before_optimizations):", Records(false));
  if (!Records(true).empty()) PrintTable("small corpus (after_optimizations):", Records(true));
  const ParseStats& s = Stats();
  if (s.files > 0) {
    std::printf(
        "\ncorpus HLO files: %d; parsed %d, verified %d, print fixed point %d, long form "
        "re-parses %d; print(parse(F)) == F byte for byte: %d\n",
        s.files, s.parsed, s.verified, s.fixed_point, s.long_form, s.identical);
  }
  INFO("small-corpus evaluation took " << total << " s");
  CHECK(total <= kSmallCorpusBudgetSeconds);
}

}  // namespace
}  // namespace hloc
