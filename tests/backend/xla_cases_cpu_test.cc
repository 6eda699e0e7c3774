// XLA's parser cases (tests/xla-hlo-cases) run on the CPU backend as on the reference evaluator.
// The conformance tests only parse, verify and print these modules, and the differential tests
// ran the corpus and hand-written kernels, so constructs that only XLA's parser cases hold (a
// tuple-shaped constant, copy-start/copy-done, variadic reduce-window) never ran on the backend:
// issue 35 found them wrong there (M1, M2). Here every case with a runnable entry is evaluated
// and compiled (without passes and through the cpu pipeline) on the same random inputs, and
// every output leaf is compared. A case is left out only for a stated reason: a category decided
// from the case itself (too large, several devices, a module XLA's test leaves unverified) or an
// entry of NotRunnable (the evaluator cannot run it), Random (no one right answer) or CpuGaps
// (the CPU backend does not compile it, in one or both modes). NotRunnable and CpuGaps entries
// are checked: one that starts to work fails the test, so the lists stay true.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/cpu_test_util.h"
#include "conformance/test_util.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/verifier.h"

namespace hloc {
namespace {

using testutil::ManifestRow;

constexpr char kMadeUpTarget[] = "a custom-call to a made-up target (XLA's test only parses it): nothing implements it";
constexpr char kHostTransfer[] = "host transfers (send/recv, infeed/outfeed): the evaluator has no host to talk to";

// Cases whose entry the evaluator cannot run, by file, with why: nothing to compare them with.
const std::map<std::string, std::string>& NotRunnable() {
  static const std::map<std::string, std::string> cases = {
      {"valid/026_SendRecv.hlo", kHostTransfer},
      {"valid/027_SendRecvWoChannelID.hlo", kHostTransfer},
      {"valid/028_SendRecvWithHostTransfer.hlo", kHostTransfer},
      {"valid/109_InfeedOutfeed_short.hlo", kHostTransfer},
      {"valid_other/087_PipelinedSendRecv.hlo", kHostTransfer},
      {"valid/036_CustomCallWithOpaque.hlo", kMadeUpTarget},
      {"valid/037_CustomCallWithBackendConfigInCurlyBraces.hlo", kMadeUpTarget},
      {"valid/038_CustomCallWithLiteral.hlo", kMadeUpTarget},
      {"valid/039_CustomCallWithLiteralTuple.hlo", kMadeUpTarget},
      {"valid/040_CustomCallWithLiteralR0.hlo", kMadeUpTarget},
      {"valid/086_CustomCallWithLayoutConstraints.hlo", kMadeUpTarget},
      {"valid/087_CustomCallWithLayoutConstraintsNoOperands.hlo", kMadeUpTarget},
      {"valid/088_CustomCallWithLayoutConstraintsTupleShapes.hlo", kMadeUpTarget},
      {"valid/089_CustomCallWithHasSideEffect.hlo", kMadeUpTarget},
      {"valid/090_CustomCallWithAliasing.hlo", kMadeUpTarget},
      {"valid/091_CustomCallWithSchedule.hlo", kMadeUpTarget},
      {"valid/092_CustomCallWithStatusReturningVersion.hlo", kMadeUpTarget},
      {"valid/098_AsyncOpsWithSyntaxSugar.hlo", kMadeUpTarget},
      {"valid/099_AsyncOpsWithSyntaxSugarAndThreadName.hlo", kMadeUpTarget},
      {"valid/100_HloComputationWithParallelThreadName.hlo", kMadeUpTarget},
      {"valid/121_CustomCall_short.hlo", kMadeUpTarget},
      {"valid/122_CustumCallSingleComp_short.hlo", kMadeUpTarget},
      {"valid/123_CustumCallMultipleComps_short.hlo", kMadeUpTarget},
      {"valid/159_CustomCallWithWindowAndDimLabelsAndFeatureGroupCount_short.hlo", kMadeUpTarget},
      {"valid/160_CustomCallWithUnknownDimLabels_short.hlo", kMadeUpTarget},
      {"valid/045_ConvolutionDynamic.hlo",
       "custom-call DynamicConvolutionForward: XLA:GPU's dynamic-shape convolution, which hloc does not implement"},
      {"valid/074_AsyncStartWithAliasing.hlo", "custom-call BarrierStart: a TPU barrier, which hloc does not implement"},
      {"valid/134_ReduceScatter_short.hlo", "its replica groups name 2 devices, but the module runs on one"},
      {"valid/135_AllGather_short.hlo", "its all-gather needs 4 devices, but the module runs on one"},
      {"valid/136_AllGatherWithLayout_short.hlo", "its all-gather needs 4 devices, but the module runs on one"},
  };
  return cases;
}

// Cases whose results are random draws, with no one right answer to compare (neither XLA's nor
// hloc's rng fixes an algorithm).
const std::map<std::string, std::string>& Random() {
  static const std::map<std::string, std::string> cases = {
      {"valid/096_RngGetAndUpdateState.hlo",
       "rng-get-and-update-state: an RNG state, whatever the implementation keeps (and no CPU pass expands it yet)"},
      {"valid/110_Rng_short.hlo", "rng: random draws (and no CPU pass expands rng yet: rng-bit-generator-expander "
                                  "expands rng-bit-generator only)"},
  };
  return cases;
}

// Cases the CPU backend does not compile, with why: those with `only_without_passes` compile
// through the pipeline and are compared that way. Each must still fail where it is listed.
struct CpuGap {
  bool only_without_passes;
  std::string reason;
};
const std::map<std::string, CpuGap>& CpuGaps() {
  static const std::map<std::string, CpuGap> cases = {
      {"valid/062_BatchNormTraining.hlo", {true, "batch-norm-* have no kernel: the pipeline's batchnorm_expander expands them"}},
      {"valid/063_BatchNormInference.hlo", {true, "batch-norm-* have no kernel: the pipeline's batchnorm_expander expands them"}},
      {"valid/064_BatchNormGrad.hlo", {true, "batch-norm-* have no kernel: the pipeline's batchnorm_expander expands them"}},
      {"valid/097_RngBitGenerator.hlo", {true, "rng-bit-generator has no kernel: the pipeline's rng-bit-generator-expander "
                                               "expands it"}},
      {"valid/118_TopK_short.hlo", {true, "the CPU top-k kernel takes row-major layouts (layout assignment gives them)"}},
  };
  return cases;
}

bool Runs(const ManifestRow& row) {
  return (row.set == "valid" || row.set == "valid_other") &&
         (row.kind == "module" || row.kind == "single_instruction");
}

// Bytes of all array leaves of `shape` (saturating: the large cases overflow nothing).
int64_t Bytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : shape.tuple_shapes()) total = std::min<int64_t>(total + Bytes(s), int64_t{1} << 62);
    return total;
  }
  if (!shape.IsArray()) return 0;
  double n = std::max(1, ByteWidth(shape.element_type()));
  for (int64_t d : shape.dimensions()) n *= static_cast<double>(d);
  return n > 4e18 ? int64_t{1} << 62 : static_cast<int64_t>(n);
}

// Why a case cannot be compared, decided from the case; empty when it can.
std::string CategoryReason(const ManifestRow& row, const HloModule& module) {
  constexpr int64_t kMaxBytes = int64_t{1} << 30;
  int64_t input_bytes = 0;
  for (const HloInstruction* p : module.entry_computation()->parameters()) input_bytes += Bytes(p->shape());
  if (input_bytes > kMaxBytes) return absl::StrCat("its inputs take ", input_bytes, " bytes, too many for a test");
  const int64_t result_bytes = Bytes(module.entry_computation()->root_instruction()->shape());
  if (result_bytes > kMaxBytes) return absl::StrCat("its results take ", result_bytes, " bytes, too many for a test");
  const int64_t devices = module.config().replica_count * module.config().num_partitions;
  if (devices > 1)
    return absl::StrCat("runs on ", devices, " devices (this test runs one; cpu_spmd_test compares multi-device "
                        "runs of its own modules)");
  if (absl::StrContains(row.check, "unverified") && !VerifyModule(module).ok())
    return "XLA's test only parses it, and it does not verify";
  return "";
}

std::vector<Literal> RandomArgs(const HloModule& module, uint64_t seed) {
  std::mt19937 rng(seed);
  std::vector<Literal> args;
  for (const HloInstruction* p : module.entry_computation()->parameters())
    args.push_back(cputest::RandomLiteral(p->shape(), rng));
  return args;
}

absl::StatusOr<std::unique_ptr<HloModule>> Parse(const ManifestRow& row) {
  return ParseHloModuleFile(testutil::XlaCasesDir() + "/" + row.file, testutil::ParserOptionsFor(row));
}

// Compiles the case (through the pipeline when `passes`), runs it on `args` and compares each
// result leaf with the evaluator's `expected`. Failures are CHECKs, so both modes always run.
void CheckOnCpu(const ManifestRow& row, bool passes, const std::vector<Literal>& args, const Literal& expected) {
  INFO((passes ? "cpu pipeline" : "no passes"));
  absl::StatusOr<std::unique_ptr<HloModule>> module = Parse(row);
  REQUIRE(module.ok());
  const std::vector<bool> fed_by_dot = OutputsFedByDotOrConvolution(**module);
  absl::StatusOr<runtime::Executable> exe = cputest::Compile(**module, passes);
  absl::StatusOr<std::vector<Literal>> got =
      exe.ok() ? cputest::Run(*std::move(exe), args) : absl::StatusOr<std::vector<Literal>>(exe.status());
  INFO("compile and run: " << (got.ok() ? std::string("ok") : std::string(got.status().message())));
  CHECK(got.ok());
  if (!got.ok()) return;
  const std::vector<const Literal*> want = FlattenLeaves(expected);
  CHECK(got->size() == want.size());
  for (size_t i = 0; i < want.size() && i < got->size(); ++i) {
    const PrimitiveType t = want[i]->shape().element_type();
    const bool dot = i < fed_by_dot.size() && fed_by_dot[i];
    CompareResult r = CompareLiterals((*got)[i], *want[i], DefaultTolerance(t, dot), DefaultAbsoluteFloor(t, dot));
    INFO("out" << i << ": " << r.message << " error " << r.error << " threshold " << r.threshold);
    CHECK(r.ok);
  }
}

// A case listed in CpuGaps must still fail to compile (else the entry is stale).
void CheckStillFails(const ManifestRow& row, bool passes) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = Parse(row);
  REQUIRE(module.ok());
  INFO("listed in CpuGaps, but compiles " << (passes ? "with" : "without") << " passes: update the list");
  CHECK(!cputest::Compile(**module, passes).ok());
}

void CheckCase(const ManifestRow& row, uint64_t seed) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = Parse(row);
  INFO("parse: " << (module.ok() ? std::string("ok") : std::string(module.status().message())));
  REQUIRE(module.ok());
  const std::string category = CategoryReason(row, **module);
  if (!category.empty()) {
    REQUIRE(NotRunnable().count(row.file) == 0);  // one reason per case
    WARN(row.file << ": not compared: " << category);
    return;
  }
  if (auto random = Random().find(row.file); random != Random().end()) {
    WARN(row.file << ": not compared: " << random->second);
    return;
  }
  const std::vector<Literal> args = RandomArgs(**module, seed);
  absl::StatusOr<Literal> expected = EvaluateModule(**module, args);
  if (auto listed = NotRunnable().find(row.file); listed != NotRunnable().end()) {
    INFO("listed as not runnable (" << listed->second << ") but the evaluator runs it: remove it from the list");
    CHECK(!expected.ok());
    return;
  }
  INFO("eval: " << (expected.ok() ? std::string("ok") : std::string(expected.status().message())));
  REQUIRE(expected.ok());
  auto gap = CpuGaps().find(row.file);
  for (bool passes : {false, true}) {
    if (gap != CpuGaps().end() && (!passes || !gap->second.only_without_passes)) {
      WARN(row.file << ": not compared " << (passes ? "with" : "without") << " passes: " << gap->second.reason);
      CheckStillFails(row, passes);
      continue;
    }
    CheckOnCpu(row, passes, args, *expected);
  }
}

TEST_CASE("XLA parser cases run on the CPU backend as on the evaluator", "[cpu][xla-cases]") {
  absl::StatusOr<std::vector<ManifestRow>> manifest =
      testutil::ReadManifest(testutil::XlaCasesDir() + "/manifest.tsv");
  REQUIRE(manifest.ok());
  uint64_t seed = 1;
  int runnable = 0;
  for (const ManifestRow& row : *manifest) {
    ++seed;
    if (!Runs(row)) continue;
    ++runnable;
    SECTION(row.file) { CheckCase(row, seed); }
  }
  CHECK(runnable > 200);
}

}  // namespace
}  // namespace hloc
