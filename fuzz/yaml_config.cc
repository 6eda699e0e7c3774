// libFuzzer target: YAML pipeline manifests and hardware profiles (src/engine/pipeline.cc,
// src/engine/profile_loader.cc; issue 17).
//
// The input is loaded as a pipeline manifest and as a profile, as `hloc opt --pipeline F` and
// `--profile F` load them. A pipeline that loads must print (--print-pipeline) to YAML that
// loads back to the same pipeline; a profile that loads must print (--print-profile) and its
// patches are applied to the built-in pipeline it names (gpu or cpu). Errors are fine; a crash,
// a sanitizer report or a round-trip difference is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "fuzz_util.h"

namespace {

const hloc::Pipeline* BuiltinPipeline(const std::string& name) {
  static const hloc::Pipeline* gpu = nullptr;
  static const hloc::Pipeline* cpu = nullptr;
  static bool loaded = false;
  if (!loaded) {
    loaded = true;
    for (auto [which, slot] : {std::pair{"gpu", &gpu}, std::pair{"cpu", &cpu}}) {
      auto p = hloc::LoadPipelineFile(std::string("<built-in>/pipelines/") + which + ".yaml");
      if (!p.ok()) {
        std::fprintf(stderr, "fuzz: cannot load the built-in %s pipeline: %s\n", which,
                     std::string(p.status().message()).c_str());
        std::abort();
      }
      *slot = new hloc::Pipeline(std::move(*p));
    }
  }
  if (name == "gpu") return gpu;
  if (name == "cpu") return cpu;
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  BuiltinPipeline("gpu");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto pipeline = hloc::LoadPipelineString(text, "<fuzz>.yaml"); pipeline.ok()) {
    (void)hloc::CheckPipelineNames(*pipeline);
    const std::string printed = hloc::PrintPipeline(*pipeline);
    auto again = hloc::LoadPipelineString(printed, "<printed>.yaml");
    if (!again.ok()) {
      hloc_fuzz::Fail("a printed pipeline does not load back: " + std::string(again.status().message()), printed);
    }
    if (!hloc::SamePipeline(*pipeline, *again)) hloc_fuzz::Fail("load(print(p)) differs from p", printed);
    const std::string printed_again = hloc::PrintPipeline(*again);
    if (printed_again != printed) hloc_fuzz::Fail("print(load(print(p))) != print(p)", printed, printed_again);
  }
  if (auto profile = hloc::LoadProfileString(text, "<fuzz>.yaml"); profile.ok()) {
    (void)hloc::PrintProfile(*profile);
    if (const hloc::Pipeline* base = BuiltinPipeline(profile->hardware.pipeline)) {
      hloc::Pipeline patched = *base;
      if (hloc::ApplyPatches(*profile, patched).ok()) (void)hloc::PrintPipeline(patched);
    }
  }
  return 0;
}
