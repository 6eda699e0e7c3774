// call-inliner: XLA's CallInliner. Every kCall is replaced by a copy of its callee's body (callees
// before callers, so nested calls flatten completely), with fresh module-unique names; the
// computations left uncalled are then removed by DCE.
#pragma once
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/pass.h"

namespace hloc {

struct CallInlinerOptions {
  // Only inline calls of computations that have a single call site (XLA's single_call_site);
  // a call marked inlineable="true" is inlined regardless.
  bool single_call_site = false;
  // Composite calls (is_composite=true) whose composite.name is listed stay calls.
  std::vector<std::string> composites_to_preserve;
  // Give inlined instructions with a channel id a fresh one (XLA's uniquify_channel_ids), so
  // a computation inlined twice does not repeat its channels.
  bool uniquify_channel_ids = false;
};

class CallInlinerPass : public HloPass {
 public:
  explicit CallInlinerPass(CallInlinerOptions options = {}) : options_(std::move(options)) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

  // Whether XLA's CallInliner would inline this call: a kCall without backend config, not inside
  // an async computation, not a preserved composite, not marked inlineable="false"/"xla_late".
  static bool IsInlineable(const HloInstruction& call, const CallInlinerOptions& options,
                           bool in_async_computation);

  // Inlines one call: its callee's instructions are copied into the caller (parameters map to
  // the call's operands) and the call is replaced by the copy of the callee's root. Returns
  // the map from callee instructions to their copies. Does not remove the callee.
  static absl::StatusOr<absl::flat_hash_map<const HloInstruction*, HloInstruction*>> Inline(HloInstruction* call);

 private:
  CallInlinerOptions options_;
};

void RegisterCallInlinerPass(PassRegistry& registry);

}  // namespace hloc
