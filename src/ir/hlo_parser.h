// Parser for HLO text: XLA's module syntax (long and short instruction forms), JAX dumps with
// stack-frame tables, XLA's optimized dumps (fusions, backend_config JSON, shardings,
// is_scheduled), and bare single instructions. Errors read "FILE:LINE:COL: message".
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

struct HloParserOptions {
  // Nesting limit for operands, shapes, tuple literals and inline computations.
  int max_recursion_depth = 200;
  // Give array shapes without a layout the default layout (XLA's fill_missing_layouts).
  bool fill_missing_layouts = true;
  // replica_count when the module header does not say.
  int64_t default_replica_count = 1;
};

// `filename` is used only in error messages.
absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                          std::string_view filename = "<text>",
                                                          const HloParserOptions& options = {});
absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path,
                                                              const HloParserOptions& options = {});
// A shape string such as "(f32[2,3]{1,0}, s32[])".
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace hloc
