#include "ir/instruction.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/module.h"

namespace hloc {

HloInstruction::HloInstruction(HloOpcode opcode, Shape shape, std::string name)
    : opcode_(opcode), shape_(std::move(shape)), name_(std::move(name)) {}

void HloInstruction::AppendOperand(HloInstruction* op) {
  operands_.push_back(op);
  op->users_.push_back(this);
}

namespace {
void EraseOne(std::vector<HloInstruction*>& v, HloInstruction* x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) v.erase(it);
}
bool Contains(const std::vector<HloInstruction*>& v, HloInstruction* x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
}  // namespace

void HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction* new_op) {
  HloInstruction* old = operands_[i];
  operands_[i] = new_op;
  // A user appears once in users_ per use; keep the multiset in step.
  EraseOne(old->users_, this);
  new_op->users_.push_back(this);
}

void HloInstruction::ReplaceAllUsesWith(HloInstruction* other) {
  std::vector<HloInstruction*> users = users_;
  for (HloInstruction* u : users) {
    for (int64_t i = 0; i < u->operand_count(); ++i)
      if (u->operands_[i] == this) u->ReplaceOperandWith(i, other);
  }
  if (parent_ && parent_->root_instruction() == this) parent_->set_root_instruction(other);
}

void HloInstruction::AddControlDependencyTo(HloInstruction* successor) {
  if (Contains(control_successors_, successor)) return;
  control_successors_.push_back(successor);
  successor->control_predecessors_.push_back(this);
}

void HloInstruction::DetachFromOperandsAndUsers() {
  for (HloInstruction* op : operands_) EraseOne(op->users_, this);
  operands_.clear();
  for (HloInstruction* p : control_predecessors_) EraseOne(p->control_successors_, this);
  for (HloInstruction* s : control_successors_) EraseOne(s->control_predecessors_, this);
  control_predecessors_.clear();
  control_successors_.clear();
}

std::string HloInstruction::LocationPrefix() const {
  if (!location_.known()) return "";
  const HloModule* module = parent_ != nullptr ? parent_->parent() : nullptr;
  const std::string file = module != nullptr && !module->source_file().empty() ? module->source_file() : "<text>";
  return absl::StrCat(file, ":", location_.line, ":", location_.column, ": ");
}

bool HloInstruction::IsRoot() const { return parent_ && parent_->root_instruction() == this; }

}  // namespace hloc
