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
  // Leave shapes in entry_computation_layout={...} without a layout as written (XLA's
  // keep_module_auto_layouts) instead of giving them the default layout.
  bool keep_module_auto_layouts = false;
};

// `filename` is used only in error messages.
absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                          std::string_view filename = "<text>",
                                                          const HloParserOptions& options = {});
absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path,
                                                              const HloParserOptions& options = {});
// A shape string such as "(f32[2,3]{1,0}, s32[])".
absl::StatusOr<Shape> ParseShape(std::string_view text);

// Stand-alone attribute values, as XLA's parser exposes them (the text must hold exactly one).
absl::StatusOr<HloSharding> ParseSharding(std::string_view text);  // "{devices=[2,1]0,1}"
absl::StatusOr<FrontendAttributes> ParseFrontendAttributes(std::string_view text);
absl::StatusOr<ConvolutionDimensionNumbers> ParseConvolutionDimensionNumbers(std::string_view text);
absl::StatusOr<CollectiveDeviceList> ParseReplicaGroups(std::string_view text);  // "{{0,1},{2,3}}"
absl::StatusOr<PaddingConfig> ParsePaddingConfig(std::string_view text);        // "0_1_0x2_3_4"
absl::StatusOr<Window> ParseWindow(std::string_view text);                      // "size=2x2 stride=1x1"
// A literal of a known shape: ParseLiteral(Shape(F32, {2}), "{1, 2}").
absl::StatusOr<Literal> ParseLiteral(const Shape& shape, std::string_view text);

}  // namespace hloc
