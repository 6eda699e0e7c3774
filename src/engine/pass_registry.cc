#include <mutex>

#include "engine/pass.h"

namespace hloc {

PassRegistry& PassRegistry::Global() {
  static PassRegistry* registry = [] {
    auto* r = new PassRegistry();
    RegisterAllPasses(*r);
    return r;
  }();
  return *registry;
}

void PassRegistry::Register(PassInfo info) {
  std::string name = info.name;
  passes_[name] = std::move(info);
}

const PassInfo* PassRegistry::Find(const std::string& name) const {
  auto it = passes_.find(name);
  return it == passes_.end() ? nullptr : &it->second;
}

std::vector<const PassInfo*> PassRegistry::All() const {
  std::vector<const PassInfo*> out;
  for (const auto& [name, info] : passes_) out.push_back(&info);
  return out;
}

}  // namespace hloc
