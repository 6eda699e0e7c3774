// Pieces of the HLO text printer shared by hlo_printer.cc (modules, computations,
// instructions), hlo_printer_attributes.cc (attribute values) and literal_printer.cc
// (constants). Everything here follows XLA's own text format (HloInstruction::ToString and
// friends), so that XLA can read what we write and print(parse(x)) is a fixed point.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/attributes.h"
#include "ir/hlo_printer.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"
#include "ir/sharding.h"

namespace hloc::printer_internal {

// ---- shapes --------------------------------------------------------------------------
// XLA's ShapeUtil::HumanString[WithLayout]: tuples get a /*index=N*/ comment before every
// fifth element; scalars print no "{}" layout.
void AppendShape(std::string* out, const Shape& shape, bool print_layout);
std::string ShapeText(const Shape& shape, bool print_layout);
// "(p0, p1, /*index=5*/p5)->result", as in entry_computation_layout={...}.
std::string ComputationLayoutText(const std::vector<Shape>& params, const Shape& result);

// ---- strings -------------------------------------------------------------------------
// absl::CEscape on a std::string_view (Debian's Abseil has its own string_view).
std::string Escape(std::string_view s);
// "\"" + Escape(s) + "\"".
std::string Quoted(std::string_view s);
// XLA's LexesAsJsonDict: s is "{...}" with balanced braces outside "strings" and nothing
// but whitespace around it. Such values (backend_config, frontend attributes) print bare.
bool LexesAsJsonDict(std::string_view s);
// "{1,2,3}".
std::string BracedList(const std::vector<int64_t>& v);

// ---- attribute values (hlo_printer_attributes.cc) ------------------------------------
std::string OpMetadataText(const OpMetadata& m);
std::string WindowText(const Window& w);                         // size=3x3 stride=2x2 ...
std::string ConvDimLabelsText(const ConvolutionDimensionNumbers& d);  // b01f_01io->b01f
std::string PaddingConfigText(const PaddingConfig& p);           // 0_1x2_3[_4]
std::string DotDimsText(const DotDimensionNumbers& d);           // lhs_batch_dims=... , ...
std::string RaggedDotDimsText(const RaggedDotDimensionNumbers& d);
std::string GatherDimsText(const GatherDimensionNumbers& d);
std::string ScatterDimsText(const ScatterDimensionNumbers& d);
std::string SliceText(const std::vector<SliceDimension>& s);     // {[0:4], [1:3]}
std::string IotaTileText(const IotaTileAssignment& iota);        // [2,2]<=[4] / T(1,0)
std::string DeviceListText(const CollectiveDeviceList& d);       // {{0,1},{2,3}} / iota / mesh
std::string SourceTargetPairsText(const std::vector<std::pair<int64_t, int64_t>>& p);
std::string FrontendAttributesText(const FrontendAttributes& a);  // {k="v",k2={json}}
std::string OutputOperandAliasingText(const std::vector<OutputOperandAlias>& a);
std::string ShardingText(const HloSharding& s, bool include_metadata);
std::string ComparisonDirectionText(ComparisonDirection d);      // EQ, NE, ...
std::string ComparisonTypeText(ComparisonType t);                // FLOAT, TOTALORDER, ...
std::string PrecisionText(Precision p);                           // default, high, ...
std::string FusionKindText(FusionKind k);                         // kLoop, ...
std::string RandomDistributionText(RandomDistribution d);         // rng_uniform
std::string RandomAlgorithmText(RandomAlgorithm a);               // rng_three_fry
std::string FftTypeText(FftType t);                               // FFT, IRFFT, ...
std::string TriangularTransposeText(TriangularTranspose t);       // NO_TRANSPOSE, ...
std::string CustomCallApiVersionText(CustomCallApiVersion v);     // API_VERSION_...
std::string CustomCallScheduleText(CustomCallSchedule s);         // SCHEDULE_LATEST, ...

// ---- instruction attributes (hlo_printer_attributes.cc) -----------------------------
// Collects "name=value" pieces; joined with ", " after the operand list.
class AttrList {
 public:
  void Add(std::string s) { parts_.push_back(std::move(s)); }
  template <typename... T>
  void Cat(const T&... v) { parts_.push_back(absl::StrCat(v...)); }
  const std::vector<std::string>& parts() const { return parts_; }

 private:
  std::vector<std::string> parts_;
};
// The attributes XLA prints per instruction class (PrintExtraAttributesImpl): window,
// dimension numbers, replica groups, custom-call fields, ... and the raw attributes that
// belong there. Called computations, sharding and the rest are the caller's.
void AddOpcodeAttributes(AttrList& a, const HloInstruction& inst, const HloPrintOptions& o);
// Raw attributes (kept verbatim by the parser) whose place XLA fixes explicitly (origin=,
// result_accuracy=, is_composite=, custom-call literal=/padding_type=); all others print
// with the opcode-specific attributes.
bool IsPlacedRawAttribute(const HloInstruction& inst, const std::string& name);
// Appends "name=value" for the raw attribute `name`, if the instruction has it.
void AddRawAttribute(AttrList& a, const HloInstruction& inst, const std::string& name);

// ---- literals (literal_printer.cc) ---------------------------------------------------
// Element i of an array literal as XLA's LiteralBase::GetAsString prints it (floats via
// RoundTripFpToString, complex as "(re, im)", pred as true/false).
std::string LiteralElementText(const Literal& literal, int64_t i);
// XLA's Literal::PrintWithoutShapeOneline / PrintWithLayoutOneline.
void AppendLiteral(std::string* out, const Literal& literal, bool print_shape, bool print_layout);
// Narrow/standard float formatting of a value of type t given by its bit pattern.
std::string FloatBitsText(PrimitiveType t, uint64_t bits);
std::string FloatText(float v);
std::string DoubleText(double v);

}  // namespace hloc::printer_internal
