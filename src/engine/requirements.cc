#include "engine/requirements.h"

#include "engine/profile.h"

namespace hloc {

namespace {

struct RequirementInfo {
  const char* name;
  const char* summary;
};

constexpr RequirementInfo kRequirements[] = {
#define HLOC_REQUIREMENT(name, summary) {#name, summary},
#include "generated/requirements.inc"
#undef HLOC_REQUIREMENT
};
static_assert(sizeof(kRequirements) / sizeof(kRequirements[0]) == kNumRequirements);

}  // namespace

const char* RequirementName(Requirement requirement) { return kRequirements[static_cast<int>(requirement)].name; }

const char* RequirementSummary(Requirement requirement) {
  return kRequirements[static_cast<int>(requirement)].summary;
}

std::optional<Requirement> FindRequirement(std::string_view name) {
  for (int i = 0; i < kNumRequirements; ++i)
    if (name == kRequirements[i].name) return static_cast<Requirement>(i);
  return std::nullopt;
}

bool HasCapability(const HardwareProfile* profile, Requirement requirement) {
  if (profile == nullptr) return false;
  auto it = profile->capabilities.find(RequirementName(requirement));
  return it != profile->capabilities.end() && it->second;
}

bool RequirementsHold(const Requirement* requirements, int n, const HardwareProfile* profile,
                      std::string_view target) {
  for (int i = 0; i < n; ++i) {
    const Requirement r = requirements[i];
    if (!target.empty() && (r == Requirement::kIsCpu || r == Requirement::kIsGpu)) {
      if ((r == Requirement::kIsCpu) != (target == "cpu")) return false;
      continue;
    }
    if (!HasCapability(profile, r)) return false;
  }
  return true;
}

}  // namespace hloc
