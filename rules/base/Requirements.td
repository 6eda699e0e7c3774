//===- rules/base/Requirements.td - every Requirement a record may name ------===//
//
// The hardware capabilities and compilation modes that rows' `Requires` lists name. Every
// Requirement record is defined here and only here (hloc-tblgen refuses one defined elsewhere):
// `hloc-tblgen --gen-requirements` turns this file into the C++ enum hloc::Requirement
// (src/engine/requirements.h), the generated tables hold its enumerators, and a profile's
// `capabilities:` key must be one of these names (an error at its FILE:LINE:COL otherwise).
//
// A requirement holds when the profile's capability of that name is true (RequirementsHold,
// src/engine/requirements.cc): set in a profile's `capabilities:` or derived from its hardware
// facts by DeriveCapabilities (src/engine/profile_loader.cc), which derives all of those below.
// A new record here that the loader does not derive holds only where a profile sets it.
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_REQUIREMENTS_TD
#define HLOC_BASE_REQUIREMENTS_TD

include "base/Dsl.td"

// The kind of hardware (the profile's `kind:`). Fusion legality also reads these two from the
// compilation target when it has one.
def IsGpu : Requirement<"the profile is a GPU">;
def IsCpu : Requirement<"the profile is a CPU">;

// From the profile's `tensor_cores:`.
def HasTensorCores : Requirement<"the GPU has tensor cores">;

// From the GPU's compute capability (NVIDIA's: Ampere 8.0, Ada 8.9, Hopper 9.0).
def HasBf16 : Requirement<"the GPU computes in bf16 (compute capability 8.0 or newer)">;
def HasAsyncCopy : Requirement<"the GPU has cp.async (compute capability 8.0 or newer)">;
def HasFp8 : Requirement<"the GPU computes in fp8 (compute capability 8.9 or newer)">;
def HasTma : Requirement<"the GPU has the tensor memory accelerator (compute capability 9.0 or newer)">;
def HasClusters : Requirement<"the GPU has thread-block clusters (compute capability 9.0 or newer)">;
def IsHopperOrNewer : Requirement<"the GPU's compute capability is 9.0 or newer">;
def HasWgmma : Requirement<"the GPU has wgmma (compute capability 9.x: Hopper only)">;

#endif  // HLOC_BASE_REQUIREMENTS_TD
