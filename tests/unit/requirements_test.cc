// hloc::Requirement (src/engine/requirements.h): the enum hloc-tblgen generates from
// rules/base/Requirements.td, and RequirementsHold, the one decision rewrite rules, layout rows
// and fusion records' `Requires` lists go through.
#include <filesystem>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "engine/profile.h"
#include "engine/profile_loader.h"
#include "engine/requirements.h"

namespace hloc {
namespace {

Profile LoadShippedProfile(const std::string& name) {
  auto p = LoadProfileFile((std::filesystem::path(HLOC_SOURCE_DIR) / "configs" / (name + ".yaml")).string());
  if (!p.ok()) FAIL("profile " << name << ": " << p.status().message());
  return *p;
}

TEST_CASE("the Requirement enum and its names", "[requirements]") {
  REQUIRE(kNumRequirements > 0);
  std::set<std::string> names;
  for (int i = 0; i < kNumRequirements; ++i) {
    const Requirement r = static_cast<Requirement>(i);
    names.insert(RequirementName(r));
    CHECK(FindRequirement(RequirementName(r)) == r);
    CHECK(std::string(RequirementSummary(r)).size() > 0);
  }
  CHECK(names.size() == static_cast<size_t>(kNumRequirements));  // one enumerator per record
  CHECK(std::string(RequirementName(Requirement::kIsHopperOrNewer)) == "IsHopperOrNewer");
  CHECK_FALSE(FindRequirement("IsHoperOrNewer").has_value());
  // A profile may set exactly the records' names.
  std::set<std::string> known;
  for (const auto& [name, where] : KnownCapabilities()) known.insert(name);
  CHECK(known == names);
}

TEST_CASE("RequirementsHold: profile capabilities, no profile, and the target's IsCpu/IsGpu", "[requirements]") {
  const Requirement none[] = {Requirement::kIsGpu};  // not read when n is 0
  CHECK(RequirementsHold(none, 0, nullptr));
  CHECK(RequirementsHold(nullptr, 0, nullptr));

  const Requirement hopper[] = {Requirement::kIsGpu, Requirement::kIsHopperOrNewer};
  CHECK_FALSE(RequirementsHold(hopper, 2, nullptr));  // no profile: nothing hardware-specific
  const Profile h200 = LoadShippedProfile("h200"), a100 = LoadShippedProfile("a100"),
                cpu = LoadShippedProfile("cpu");
  CHECK(RequirementsHold(hopper, 2, &h200.hardware));
  CHECK_FALSE(RequirementsHold(hopper, 2, &a100.hardware));
  CHECK_FALSE(RequirementsHold(hopper, 2, &cpu.hardware));

  // A capability the profile neither sets nor derives does not hold; set to true, it does.
  HardwareProfile bare;
  const Requirement tma[] = {Requirement::kHasTma};
  CHECK_FALSE(RequirementsHold(tma, 1, &bare));
  bare.capabilities["HasTma"] = false;
  CHECK_FALSE(RequirementsHold(tma, 1, &bare));
  bare.capabilities["HasTma"] = true;
  CHECK(RequirementsHold(tma, 1, &bare));
  CHECK(HasCapability(&bare, Requirement::kHasTma));
  CHECK_FALSE(HasCapability(nullptr, Requirement::kHasTma));

  // With a target (fusion legality's), IsCpu and IsGpu follow it, with or without a profile;
  // the other requirements still need the profile.
  const Requirement is_cpu[] = {Requirement::kIsCpu};
  const Requirement is_gpu[] = {Requirement::kIsGpu};
  CHECK(RequirementsHold(is_cpu, 1, nullptr, "cpu"));
  CHECK_FALSE(RequirementsHold(is_gpu, 1, nullptr, "cpu"));
  CHECK(RequirementsHold(is_gpu, 1, &cpu.hardware, "gpu"));  // the target wins over the profile's kind
  CHECK_FALSE(RequirementsHold(is_cpu, 1, &cpu.hardware, "gpu"));
  CHECK(RequirementsHold(hopper, 2, &h200.hardware, "gpu"));
  CHECK_FALSE(RequirementsHold(hopper, 2, nullptr, "gpu"));  // IsHopperOrNewer needs the profile
  CHECK_FALSE(RequirementsHold(is_cpu, 1, nullptr));         // no target: the profile decides
  CHECK(RequirementsHold(is_cpu, 1, &cpu.hardware));
}

}  // namespace
}  // namespace hloc
