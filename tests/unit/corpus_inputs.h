// What the passes' semantics tests share about the corpus: the small modules' paths, and the
// entry arguments of a module from its inputs.npz (arg0..argN, reinterpreted by each
// parameter's type: bf16 from uint16 bit patterns).
#pragma once
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "io/npy.h"
#include "ir/module.h"

namespace hloc {

// tests/corpus/*.small.before_optimizations.txt (the first wave), sorted (HLOC_TESTS_DIR is set
// by CMake); with `second_wave`, tests/corpus/public2's too (the CPU backend's corpus test runs
// both; the pass-semantics tests do not yet: copy-insertion is not idempotent on flax_gru_train).
inline std::vector<std::string> SmallCorpusModules(bool second_wave = false) {
  std::vector<std::string> files;
  for (const char* wave : {"/corpus", "/corpus/public2"}) {
    if (std::string(wave) == "/corpus/public2" && !second_wave) continue;
    for (const auto& e : std::filesystem::directory_iterator(std::string(HLOC_TESTS_DIR) + wave))
      if (absl::EndsWith(e.path().filename().string(), ".small.before_optimizations.txt")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline absl::StatusOr<std::vector<Literal>> LoadCorpusInputs(const HloModule& module,
                                                             const std::string& npz) {
  absl::StatusOr<std::vector<NpyArray>> arrays = ReadNpz(npz);
  if (!arrays.ok()) return arrays.status();
  const HloComputation* entry = module.entry_computation();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const NpyArray* found = nullptr;
    for (const NpyArray& a : *arrays)
      if (a.name == absl::StrCat("arg", i)) found = &a;
    if (found == nullptr) return absl::NotFoundError(absl::StrCat(npz, " has no arg", i));
    absl::StatusOr<Literal> lit = ReinterpretAs(*found, entry->parameter_instruction(i)->shape());
    if (!lit.ok()) return lit.status();
    args.push_back(std::move(*lit));
  }
  return args;
}

}  // namespace hloc
