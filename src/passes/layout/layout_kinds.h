// The LayoutKind records (rules/base/Layout.td, rules/layout/*.td) the layout-assignment engine
// computes: one enumerator per record, of the record's name. hloc-tblgen reads this list too
// (it includes this header for the X-macro only): every LayoutKind record must be in it, else
// generation fails at the record's .td line, and each generated LayoutConstraintInfo row
// carries its kind as `static_cast<int>(LayoutKind::k<Name>)`. ComputeKind
// (layout_constraints.cc) switches over the enum with no default under -Werror=switch, so a
// kind added here without its computation fails the build.
#pragma once

namespace hloc::layout {

// X(record name), in no particular order.
#define HLOC_LAYOUT_KINDS(X)   \
  X(DefaultLayout)             \
  X(ContractingMinor)          \
  X(Int8ContractingMinor)      \
  X(BatchMajor)                \
  X(ChannelsLast)              \
  X(ChannelsFirst)             \
  X(SameAsOperand0)            \
  X(SameAsResult)              \
  X(OperandLayoutConstraints)  \
  X(AsWritten)                 \
  X(CudnnConvIntegerNhwc)      \
  X(CudnnConvHopperNhwc)       \
  X(CudnnConvHalfNhwc)         \
  X(CudnnConvNchw)

enum class LayoutKind {
#define HLOC_LAYOUT_KIND_ENUMERATOR(name) k##name,
  HLOC_LAYOUT_KINDS(HLOC_LAYOUT_KIND_ENUMERATOR)
#undef HLOC_LAYOUT_KIND_ENUMERATOR
};

}  // namespace hloc::layout
