// --gen-layout, --gen-fusion and --gen-library: LayoutConstraint, FusionRule and LibraryPattern
// records (rules/base/Layout.td, Fusion.td, Library.td) of the main file become plain C++
// tables (src/engine/rule_tables.h) and one registration function each. Fusion vetoes become
// small predicate functions built from the same Constraint records rewrite rules use; library
// patterns become a function that checks their LibraryConstraints and calls their Fn.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gen_common.h"
#include "llvm/Support/raw_ostream.h"
#include "passes/layout/layout_kinds.h"  // only the HLOC_LAYOUT_KINDS X-macro: no hloc library is linked
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"

namespace hloc_gen {
namespace {

using llvm::Record;

std::vector<const Record*> MainFileRecords(const llvm::RecordKeeper& records, const char* cls) {
  std::vector<const Record*> out;
  if (!records.getClass(cls)) return out;
  for (const Record* r : records.getAllDerivedDefinitions(cls))
    if (InMainFile(r)) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const Record* a, const Record* b) { return a->getID() < b->getID(); });
  return out;
}

std::string SummaryOf(const Record* r) {
  std::string s = r->getValueAsString("Summary").str();
  return s.empty() ? CommentAbove(r) : s;
}

// `static const char* const <var>[] = {...};` for a list of defs (names); returns the
// variable, or "nullptr" for an empty list.
std::string NameArray(std::string& out, const std::string& var, const std::vector<std::string>& names) {
  if (names.empty()) return "nullptr";
  out += "const char* const " + var + "[] = {";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + CppString(names[i]);
  out += "};\n";
  return var;
}

size_t NumRequirements(const Record* r) { return r->getValueAsListOfDefs("Requires").size(); }

// The opcode expression of the record's `Opcode` field, or "" after an error.
std::string OpcodeExpr(const Record* r) {
  const Record* op = r->getValueAsDef("Opcode");
  const OpcodeInfo* info = OpcodeOfOpRecord(op);
  if (!info) {
    llvm::PrintError(r->getLoc(), "'" + op->getName().str() + "' names no HLO opcode (not in src/ir/opcode.h)");
    return "";
  }
  return std::string("static_cast<int>(HloOpcode::") + info->enumerator + ")";
}

// The opcode expressions of the ops the record's `Opcode` field (an Op or an OpSet) stands for,
// one per op; empty after an error (printed at the record).
std::vector<std::string> OpcodeExprs(const llvm::RecordKeeper& records, const Record* r) {
  std::vector<const Record*> ops;
  if (!ExpandOps(records, r->getValueAsDef("Opcode"), r, ops)) return {};
  std::vector<std::string> out;
  for (const Record* op : ops)
    out.push_back(std::string("static_cast<int>(HloOpcode::") + OpcodeOfOpRecord(op)->enumerator + ")");
  return out;
}

// An op given a second row of the same table in one file: the engine would read only one of
// them (the first Fusible row, the last OpCost row), so the other is an error.
bool ClaimOps(const Record* r, const std::vector<std::string>& opcodes, std::map<std::string, const Record*>& owner,
              const char* table) {
  bool ok = true;
  for (const std::string& opcode : opcodes) {
    auto [it, inserted] = owner.emplace(opcode, r);
    if (inserted) continue;
    std::string op = opcode.substr(opcode.find("::k") + 3);
    op.pop_back();
    llvm::PrintError(r->getLoc(), std::string(table) + " '" + r->getName().str() + "' gives '" + op +
                                      "' a second row; it already has one from '" + it->second->getName().str() + "'");
    llvm::PrintNote(it->second->getLoc(), "the first row is here");
    ok = false;
  }
  return ok;
}

// The LayoutKind records the layout-assignment engine computes (src/passes/layout/layout_kinds.h).
bool IsKnownLayoutKind(llvm::StringRef name) {
  static const char* const kKinds[] = {
#define HLOC_GEN_LAYOUT_KIND(kind) #kind,
      HLOC_LAYOUT_KINDS(HLOC_GEN_LAYOUT_KIND)
#undef HLOC_GEN_LAYOUT_KIND
  };
  for (const char* k : kKinds)
    if (name == k) return true;
  return false;
}

// Every LayoutKind record read (this file's and those it includes) must be one the C++ computes:
// a kind the engine does not know would make its rows do nothing. False after an error.
bool CheckLayoutKinds(const llvm::RecordKeeper& records) {
  if (!records.getClass("LayoutKind")) return true;
  bool ok = true;
  for (const Record* k : records.getAllDerivedDefinitions("LayoutKind")) {
    if (IsKnownLayoutKind(k->getName())) continue;
    llvm::PrintError(k->getLoc(), "LayoutKind '" + k->getName().str() +
                                      "' is not computed by the layout-assignment engine: add it to HLOC_LAYOUT_KINDS "
                                      "(src/passes/layout/layout_kinds.h) and its case to ComputeKind "
                                      "(src/passes/layout/layout_constraints.cc)");
    ok = false;
  }
  return ok;
}

void EmitRegistration(llvm::raw_ostream& os, const std::string& fn, const std::string& table, const std::string& field,
                      bool empty) {
  os << "void " << fn << "(GeneratedTables& tables) {\n";
  if (empty) os << "  (void)tables;\n";
  else os << "  for (const auto& row : " << table << ") tables." << field << ".push_back(&row);\n";
  os << "}\n";
}

// One veto condition: (Constraint $producer, $consumer, 3, "s") or (Unless (...)).
bool VetoCondition(const Record* veto, const llvm::DagInit* dag, std::string& body) {
  auto error = [&](const std::string& m) {
    llvm::PrintError(veto->getLoc(), "in fusion veto '" + veto->getName().str() + "': " + m);
    return false;
  };
  const auto* def = llvm::dyn_cast<llvm::DefInit>(dag->getOperator());
  const Record* op = def ? def->getDef() : nullptr;
  bool negate = false;
  if (op && op->getName() == "Unless") {
    const auto* inner = dag->getNumArgs() == 1 ? llvm::dyn_cast<llvm::DagInit>(dag->getArg(0)) : nullptr;
    if (!inner) return error("(Unless ...) takes exactly one constraint DAG");
    dag = inner;
    def = llvm::dyn_cast<llvm::DefInit>(dag->getOperator());
    op = def ? def->getDef() : nullptr;
    negate = true;
  }
  if (!op || !op->isSubClassOf("Constraint"))
    return error("unknown condition '" + dag->getOperator()->getAsString() + "': expected a Constraint record");
  std::string call = op->getValueAsString("Fn").str() + "(ctx";
  for (unsigned i = 0; i < dag->getNumArgs(); ++i) {
    const llvm::Init* arg = dag->getArg(i);
    std::string name = dag->getArgNameStr(i).str();
    if (llvm::isa<llvm::UnsetInit>(arg)) {
      if (name != "producer" && name != "consumer")
        return error("$" + (name.empty() ? std::string("?") : name) +
                     " is unbound: a veto's conditions may use $producer and $consumer");
      call += ", " + name;
    } else if (const auto* i64 = llvm::dyn_cast<llvm::IntInit>(arg)) {
      call += ", int64_t{" + std::to_string(i64->getValue()) + "}";
    } else if (const auto* s = llvm::dyn_cast<llvm::StringInit>(arg)) {
      call += ", " + CppString(s->getValue());
    } else {
      return error("argument " + arg->getAsString() + " of " + op->getName().str() +
                   " must be $producer, $consumer or an int or string literal");
    }
  }
  call += ")";
  body += std::string("  if (") + (negate ? "" : "!") + call + ") return false;  // " + (negate ? "Unless " : "") +
          op->getName().str() + "\n";
  return true;
}

// One library-pattern constraint: (LibraryConstraint $root, 3, "s") or (Unless (...)); appends
// `  if (!Fn(rw, root, ...)) return absl::OkStatus();` to body.
bool LibraryCondition(const Record* pattern, const llvm::DagInit* dag, std::string& body) {
  auto error = [&](const std::string& m) {
    llvm::PrintError(pattern->getLoc(), "in library pattern '" + pattern->getName().str() + "': " + m);
    return false;
  };
  const auto* def = llvm::dyn_cast<llvm::DefInit>(dag->getOperator());
  const Record* op = def ? def->getDef() : nullptr;
  bool negate = false;
  if (op && op->getName() == "Unless") {
    const auto* inner = dag->getNumArgs() == 1 ? llvm::dyn_cast<llvm::DagInit>(dag->getArg(0)) : nullptr;
    if (!inner) return error("(Unless ...) takes exactly one constraint DAG");
    dag = inner;
    def = llvm::dyn_cast<llvm::DefInit>(dag->getOperator());
    op = def ? def->getDef() : nullptr;
    negate = true;
  }
  if (!op || !op->isSubClassOf("LibraryConstraint"))
    return error("unknown constraint '" + dag->getOperator()->getAsString() + "': expected a LibraryConstraint record");
  std::string call = op->getValueAsString("Fn").str() + "(rw";
  for (unsigned i = 0; i < dag->getNumArgs(); ++i) {
    const llvm::Init* arg = dag->getArg(i);
    std::string name = dag->getArgNameStr(i).str();
    if (llvm::isa<llvm::UnsetInit>(arg)) {
      if (name != "root")
        return error("$" + (name.empty() ? std::string("?") : name) +
                     " is unbound: a library pattern's constraints may use $root only");
      call += ", root";
    } else if (const auto* i64 = llvm::dyn_cast<llvm::IntInit>(arg)) {
      call += ", int64_t{" + std::to_string(i64->getValue()) + "}";
    } else if (const auto* s = llvm::dyn_cast<llvm::StringInit>(arg)) {
      call += ", " + CppString(s->getValue());
    } else {
      return error("argument " + arg->getAsString() + " of " + op->getName().str() +
                   " must be $root or an int or string literal");
    }
  }
  call += ")";
  body += std::string("  if (") + (negate ? "" : "!") + call + ") return absl::OkStatus();  // " +
          (negate ? "Unless " : "") + op->getName().str() + "\n";
  return true;
}

}  // namespace

bool CheckRequirementRecords(const llvm::RecordKeeper& records) {
  if (!records.getClass("Requirement")) return true;
  bool ok = true;
  for (const Record* r : records.getAllDerivedDefinitions("Requirement")) {
    const std::string file = RecordFile(r);
    if (file == "base/Requirements.td" || llvm::StringRef(file).ends_with("/base/Requirements.td")) continue;
    llvm::PrintError(r->getLoc(), "Requirement '" + r->getName().str() +
                                      "' is defined outside rules/base/Requirements.td: define it there (hloc's enum "
                                      "of requirements, hloc::Requirement, is generated from that file alone)");
    ok = false;
  }
  return ok;
}

std::string RequirementArray(std::string& out, const std::string& prefix, const std::string& var, const Record* r) {
  const std::vector<Record*> reqs = r->getValueAsListOfDefs("Requires");
  if (reqs.empty()) return "nullptr";
  out += prefix + "const Requirement " + var + "[] = {";
  for (size_t i = 0; i < reqs.size(); ++i) out += (i ? ", " : "") + std::string("Requirement::k") + reqs[i]->getName().str();
  out += "};\n";
  return var;
}

bool EmitRequirements(llvm::raw_ostream& os, const llvm::RecordKeeper& records) {
  std::vector<const Record*> reqs;
  if (records.getClass("Requirement"))
    for (const Record* r : records.getAllDerivedDefinitions("Requirement")) reqs.push_back(r);
  std::sort(reqs.begin(), reqs.end(), [](const Record* a, const Record* b) { return a->getName() < b->getName(); });
  os << "// HLOC_REQUIREMENT(Name, \"summary\"): one per Requirement record, by name (src/engine/requirements.h).\n";
  for (const Record* r : reqs) {
    if (r->isAnonymous()) {
      llvm::PrintError(r->getLoc(), "a Requirement record needs a name (rows and profiles name it)");
      return true;
    }
    os << "HLOC_REQUIREMENT(" << r->getName() << ", " << CppString(r->getValueAsString("Summary")) << ")\n";
  }
  return false;
}

bool EmitLayout(llvm::raw_ostream& os, const llvm::RecordKeeper& records) {
  const std::string stem = FileStem(records);
  bool failed = false;
  std::string arrays, rows;
  if (!CheckLayoutKinds(records)) failed = true;
  for (const Record* r : MainFileRecords(records, "LayoutConstraint")) {
    std::string opcode = OpcodeExpr(r);
    const Record* kind = r->getValueAsDef("Layout");
    if (!IsKnownLayoutKind(kind->getName())) {
      llvm::PrintError(r->getLoc(), "layout constraint '" + r->getName().str() + "' names LayoutKind '" +
                                        kind->getName().str() + "', which the layout-assignment engine does not compute");
      failed = true;
      continue;
    }
    int64_t operand = r->getValueAsInt("Operand");
    if (operand < -2) {
      llvm::PrintError(r->getLoc(), "Operand " + std::to_string(operand) +
                                        " is not an operand index, Result.Index (-1) or EveryOperand.Index (-2)");
      failed = true;
    }
    if (opcode.empty()) {
      failed = true;
      continue;
    }
    std::string req = RequirementArray(arrays, "", "kLayoutRequires_" + CppIdent(r->getName()), r);
    rows += "    {" + CppString(r->getName()) + ", " + opcode + ", " + std::to_string(operand) + ", " +
            CppString(r->getValueAsDef("Layout")->getName()) + ", " + (r->getValueAsBit("Required") ? "true" : "false") +
            ", " + std::to_string(r->getValueAsInt("Priority")) + ", " + req + ", " +
            std::to_string(NumRequirements(r)) + ",\n     " + CppString(SummaryOf(r)) + ", " +
            CppString(RecordFile(r)) + ", " + std::to_string(RecordLine(r)) +
            ", static_cast<int>(layout::LayoutKind::k" + kind->getName().str() + ")},\n";
  }
  if (failed) return true;
  os << "#include <cstdint>\n\n#include \"engine/rule_tables.h\"\n#include \"ir/opcode.h\"\n"
        "#include \"passes/layout/layout_kinds.h\"\n\nnamespace hloc {\nnamespace {\n"
     << arrays;
  if (!rows.empty()) os << "const LayoutConstraintInfo kLayoutConstraints[] = {\n" << rows << "};\n";
  os << "}  // namespace\n\n";
  EmitRegistration(os, "RegisterLayout_" + stem, "kLayoutConstraints", "layout", rows.empty());
  os << "\n}  // namespace hloc\n";
  return false;
}

bool EmitFusion(llvm::raw_ostream& os, const llvm::RecordKeeper& records) {
  const std::string stem = FileStem(records);
  bool failed = false;
  std::string arrays, fusible, costs, vetoes, functions;
  std::map<std::string, const Record*> fusible_owner, cost_owner;  // opcode -> its row (ClaimOps)
  for (const Record* r : MainFileRecords(records, "FusionRule")) {
    std::string req_names = std::to_string(NumRequirements(r));
    std::string where = CppString(SummaryOf(r)) + ", " + CppString(RecordFile(r)) + ", " + std::to_string(RecordLine(r));
    std::string id = CppIdent(r->getName());
    if (r->isSubClassOf("Fusible")) {
      std::vector<std::string> opcodes = OpcodeExprs(records, r);
      if (opcodes.empty() || (NumRequirements(r) == 0 && !ClaimOps(r, opcodes, fusible_owner, "Fusible"))) {
        failed = true;
        continue;
      }
      std::vector<std::string> kinds;
      for (const Record* k : r->getValueAsListOfDefs("Kinds")) kinds.push_back(k->getValueAsString("Name").str());
      if (kinds.empty()) {
        llvm::PrintError(r->getLoc(), "Fusible '" + r->getName().str() + "' lists no fusion kinds");
        failed = true;
        continue;
      }
      std::string kinds_var = NameArray(arrays, "kKinds_" + id, kinds);
      std::string req = RequirementArray(arrays, "", "kFusionRequires_" + id, r);
      for (const std::string& opcode : opcodes)
        fusible += "    {" + CppString(r->getName()) + ", " + opcode + ", " + kinds_var + ", " +
                   std::to_string(kinds.size()) + ", " + (r->getValueAsBit("AsProducer") ? "true" : "false") + ", " +
                   (r->getValueAsBit("AsConsumer") ? "true" : "false") + ", " + req + ", " + req_names + ",\n     " +
                   where + "},\n";
    } else if (r->isSubClassOf("OpCost")) {
      std::vector<std::string> opcodes = OpcodeExprs(records, r);
      if (opcodes.empty() || !ClaimOps(r, opcodes, cost_owner, "OpCost")) {
        failed = true;
        continue;
      }
      const Record* cls = r->getValueAsDef("Class");
      for (const std::string& opcode : opcodes)
        costs += "    {" + CppString(r->getName()) + ", " + opcode + ", " + CppString(cls->getName()) + ", " +
                 std::to_string(cls->getValueAsInt("RelativeCost")) + ",\n     " + where + ", " +
                 (cls->getValueAsBit("SlowInF64") ? "true" : "false") + ", " +
                 (cls->getValueAsBit("Expensive") ? "true" : "false") + "},\n";
    } else if (r->isSubClassOf("FusionVeto")) {
      std::string reason = r->getValueAsString("Reason").str();
      if (reason.empty()) {
        llvm::PrintError(r->getLoc(), "fusion veto '" + r->getName().str() + "' needs a reason (shown by --explain-fusion)");
        failed = true;
        continue;
      }
      std::string body;
      bool ok = true;
      for (const llvm::Init* c : r->getValueAsListInit("Conditions")->getValues()) {
        const auto* dag = llvm::dyn_cast<llvm::DagInit>(c);
        if (!dag) {
          llvm::PrintError(r->getLoc(), "a veto condition must be a DAG such as (HasOneUse $producer)");
          ok = false;
          continue;
        }
        ok = VetoCondition(r, dag, body) && ok;
      }
      if (!ok) {
        failed = true;
        continue;
      }
      functions += "// " + RecordFile(r) + ":" + std::to_string(RecordLine(r)) + "\nbool Veto_" + id +
                   "(RewriteContext& ctx, [[maybe_unused]] HloInstruction* producer, [[maybe_unused]] HloInstruction* "
                   "consumer) {\n  (void)ctx;\n" +
                   body + "  return true;\n}\n\n";
      std::string req = RequirementArray(arrays, "", "kFusionRequires_" + id, r);
      vetoes += "    {" + CppString(r->getName()) + ", " + CppString(reason) + ", " + req + ", " + req_names + ",\n     " +
                where + ", Veto_" + id + ", " + (r->getValueAsBit("Duplication") ? "true" : "false") + ", " +
                (r->getValueAsBit("QueueOnly") ? "true" : "false") + "},\n";
    } else {
      llvm::PrintError(r->getLoc(), "'" + r->getName().str() +
                                        "' derives from FusionRule but is none of Fusible, OpCost or FusionVeto");
      failed = true;
    }
  }
  if (failed) return true;
  os << "#include <cstdint>\n\n#include \"engine/rewrite.h\"\n#include \"engine/rule_helpers.h\"\n"
        "#include \"engine/rule_tables.h\"\n#include \"ir/opcode.h\"\n";
  for (const std::string& h : CppHeaders(records)) os << "#include \"" << h << "\"\n";
  os << "\nnamespace hloc {\nnamespace {\n" << arrays << "\n" << functions;
  if (!fusible.empty()) os << "const FusibleInfo kFusible[] = {\n" << fusible << "};\n";
  if (!costs.empty()) os << "const OpCostInfo kOpCosts[] = {\n" << costs << "};\n";
  if (!vetoes.empty()) os << "const FusionVetoInfo kFusionVetoes[] = {\n" << vetoes << "};\n";
  os << "}  // namespace\n\n";
  os << "void RegisterFusion_" << stem << "(GeneratedTables& tables) {\n";
  if (fusible.empty() && costs.empty() && vetoes.empty()) os << "  (void)tables;\n";
  if (!fusible.empty()) os << "  for (const auto& row : kFusible) tables.fusible.push_back(&row);\n";
  if (!costs.empty()) os << "  for (const auto& row : kOpCosts) tables.op_costs.push_back(&row);\n";
  if (!vetoes.empty()) os << "  for (const auto& row : kFusionVetoes) tables.vetoes.push_back(&row);\n";
  os << "}\n\n}  // namespace hloc\n";
  return false;
}

bool EmitSpmd(llvm::raw_ostream& os, const llvm::RecordKeeper& records) {
  const std::string stem = FileStem(records);
  std::string rows;
  for (const Record* r : MainFileRecords(records, "SpmdStrategy"))
    rows += "    {" + CppString(r->getName()) + ", " + CppString(SummaryOf(r)) + ", " + CppString(RecordFile(r)) + ", " +
            std::to_string(RecordLine(r)) + "},\n";
  os << "#include \"engine/rule_tables.h\"\n\nnamespace hloc {\n";
  if (!rows.empty()) os << "namespace {\nconst SpmdStrategyInfo kSpmdStrategies[] = {\n" << rows << "};\n}  // namespace\n\n";
  EmitRegistration(os, "RegisterSpmd_" + stem, "kSpmdStrategies", "spmd_strategies", rows.empty());
  os << "\n}  // namespace hloc\n";
  return false;
}

}  // namespace hloc_gen

namespace hloc_gen {

bool EmitLibrary(llvm::raw_ostream& os, const llvm::RecordKeeper& records) {
  const std::string stem = FileStem(records);
  bool failed = false;
  std::string arrays, rows, functions;
  for (const Record* r : MainFileRecords(records, "LibraryPattern")) {
    const std::string id = CppIdent(r->getName());
    const std::string fn = r->getValueAsString("Fn").str();
    const std::string pass = r->getValueAsString("Pass").str();
    if (fn.empty() || pass.empty()) {
      llvm::PrintError(r->getLoc(), "library pattern '" + r->getName().str() + "' needs a Pass and an Fn");
      failed = true;
      continue;
    }
    const Record* root = r->getValueAsDef("Root");
    const OpcodeInfo* info = OpcodeOfOpRecord(root);
    if (!info) {
      llvm::PrintError(r->getLoc(), "'" + root->getName().str() + "' names no HLO opcode (not in src/ir/opcode.h)");
      failed = true;
      continue;
    }
    const std::string opcode = std::string("static_cast<int>(HloOpcode::") + info->enumerator + ")";
    std::string body;
    bool ok = true;
    for (const llvm::Init* c : r->getValueAsListInit("Constraints")->getValues()) {
      const auto* dag = llvm::dyn_cast<llvm::DagInit>(c);
      if (!dag) {
        llvm::PrintError(r->getLoc(), "a library pattern's constraint must be a DAG such as (ReadsLtMatmul $root)");
        ok = false;
        continue;
      }
      ok = LibraryCondition(r, dag, body) && ok;
    }
    if (!ok) {
      failed = true;
      continue;
    }
    functions += "// " + RecordFile(r) + ":" + std::to_string(RecordLine(r)) + "\nabsl::Status Library_" + id +
                 "(library::gemm::Rewrite& rw, HloInstruction* root) {\n" + body + "  return " + fn +
                 "(rw, root);\n}\n\n";
    std::vector<std::string> epilogues;
    for (const Record* e : r->getValueAsListOfDefs("Epilogues")) epilogues.push_back(e->getValueAsString("Name").str());
    std::string epi = NameArray(arrays, "kEpilogues_" + id, epilogues);
    rows += "    {" + CppString(r->getName()) + ", " + CppString(pass) + ", " + CppString(r->getValueAsString("Group")) +
            ", " + opcode + ",\n     " + CppString(r->getValueAsString("Matches")) + ",\n     " + epi + ", " +
            std::to_string(epilogues.size()) + ", " + CppString(r->getValueAsString("Sets")) + ", " +
            CppString(r->getValueAsString("Reference")) + ",\n     " + CppString(SummaryOf(r)) + ", " +
            CppString(RecordFile(r)) + ", " + std::to_string(RecordLine(r)) + ", Library_" + id + "},\n";
  }
  if (failed) return true;
  os << "#include <cstdint>\n\n#include \"absl/status/status.h\"\n#include \"engine/rule_tables.h\"\n"
        "#include \"ir/opcode.h\"\n";
  if (!rows.empty())
    for (const std::string& h : CppHeaders(records)) os << "#include \"" << h << "\"\n";
  os << "\nnamespace hloc {\n";
  if (!rows.empty())
    os << "namespace {\n" << arrays << "\n" << functions << "const LibraryPatternInfo kLibraryPatterns[] = {\n" << rows
       << "};\n}  // namespace\n\n";
  EmitRegistration(os, "RegisterLibrary_" + stem, "kLibraryPatterns", "library_patterns", rows.empty());
  os << "\n}  // namespace hloc\n";
  return false;
}

}  // namespace hloc_gen
