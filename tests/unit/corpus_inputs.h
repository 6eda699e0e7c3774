// The entry arguments of a corpus module from its inputs.npz (arg0..argN, reinterpreted by each
// parameter's type: bf16 from uint16 bit patterns). Shared by the passes' semantics tests.
#pragma once
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "io/npy.h"
#include "ir/module.h"

namespace hloc {

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
