// logistic-expander (XLA's LogisticExpander): logistic(x) becomes 1 / (1 + exp(-x)), the
// expansion XLA's GPU and CPU pipelines use. Older XLA also offered 0.5 + 0.5 * tanh(0.5 * x)
// (LogisticExpansionType::kTanh); the option expansion_type selects it.
#pragma once
#include "engine/pass.h"

namespace hloc {

class LogisticExpander : public HloPass {
 public:
  static constexpr const char* kName = "logistic-expander";
  enum class ExpansionType { kExp, kTanh };
  explicit LogisticExpander(ExpansionType type = ExpansionType::kExp) : type_(type) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  ExpansionType type_;
};

}  // namespace hloc
