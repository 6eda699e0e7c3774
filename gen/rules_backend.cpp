// --gen-rules: every `Rule` record of the main file becomes one straight-line C++ function
// (match, constraints, build, replace) plus a RuleInfo row; see rules/base/Dsl.td for the
// language. Malformed rules are reported at their def (file:line:col with the caret line).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gen_common.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"

namespace hloc_gen {
namespace {

using llvm::DagInit;
using llvm::DefInit;
using llvm::Init;
using llvm::IntInit;
using llvm::Record;
using llvm::StringInit;
using llvm::UnsetInit;

bool IsA(const Record* r, const char* cls) { return r && r->isSubClassOf(cls); }

// The def a DAG's operator names, or nullptr.
const Record* OperatorDef(const DagInit* dag) {
  if (const auto* def = llvm::dyn_cast<DefInit>(dag->getOperator())) return def->getDef();
  return nullptr;
}

std::string KindOf(const Record* r) {
  if (IsA(r, "Op")) return "an Op";
  if (IsA(r, "OpSet")) return "an OpSet (a rule may range over one op set only)";
  if (IsA(r, "Matcher")) return "a Matcher";
  if (IsA(r, "Constraint")) return "a Constraint";
  if (IsA(r, "AttrFn")) return "an AttrFn";
  if (IsA(r, "Builder")) return "a Builder";
  if (IsA(r, "Rule")) return "a Rule";
  return "not a rule-language record";
}

// A DAG as the rule language writes it: (Multiply $x, (ScalarConstant 2)).
std::string DagText(const DagInit* dag) {
  std::string out = "(" + dag->getOperator()->getAsString();
  if (!dag->getNameStr().empty()) out += ":$" + dag->getNameStr().str();
  for (unsigned i = 0; i < dag->getNumArgs(); ++i) {
    out += i == 0 ? " " : ", ";
    const Init* arg = dag->getArg(i);
    std::string name = dag->getArgNameStr(i).str();
    if (llvm::isa<UnsetInit>(arg)) {
      out += name.empty() ? "?" : "$" + name;
      continue;
    }
    if (const auto* sub = llvm::dyn_cast<DagInit>(arg)) out += DagText(sub);
    else out += arg->getAsString();
    if (!name.empty()) out += ":$" + name;
  }
  return out + ")";
}

// One argument as written: $x, ?, 3, "s", (Op ...).
std::string ArgText(const Init* arg, llvm::StringRef name) {
  if (llvm::isa<UnsetInit>(arg)) return name.empty() ? "?" : "$" + name.str();
  std::string text = llvm::isa<DagInit>(arg) ? DagText(llvm::cast<DagInit>(arg)) : arg->getAsString();
  return name.empty() ? text : text + ":$" + name.str();
}

std::string UndeclaredPassMessage(const std::string& pass, const std::set<std::string>& declared);

// Generates one rule. Errors are printed at the rule's def and set `failed`.
class RuleEmitter {
 public:
  // `declared_passes`: the RewritePass names (null: the file declares none, no check).
  // `set`/`member`: the rule ranges over an OpSet; this emitter writes its rule for `member`,
  // every occurrence of `set` as a DAG operator standing for it.
  RuleEmitter(const Record* rule, const std::set<std::string>* declared_passes, const Record* set = nullptr,
              const Record* member = nullptr)
      : rule_(rule), declared_passes_(declared_passes), set_(set), member_(member) {}

  bool failed() const { return failed_; }
  int root_opcode_expr_is_any() const { return root_opcode_.empty(); }
  const std::string& root_opcode() const { return root_opcode_; }  // "HloOpcode::kAdd" or ""

  // The C++ text of the rule's function(s); "" on error.
  std::string Emit() {
    const std::string name = rule_->getName().str();
    fn_ = "Rule_" + CppIdent(name) + (member_ ? "_" + CppIdent(member_->getName()) : "");
    if (rule_->isAnonymous()) Error("a rule needs a name (def Name : Rule<...>) so YAML can enable or disable it");
    const std::string pass = rule_->getValueAsString("Pass").str();
    if (pass.empty())
      Error("rule '" + name + "' has no Pass: wrap it in `let Pass = \"algsimp\" in { ... }` or set `let Pass = ...`");
    else if (declared_passes_ != nullptr && !declared_passes_->count(pass))
      Error(UndeclaredPassMessage(pass, *declared_passes_));

    const DagInit* pattern = rule_->getValueAsDag("Pattern");
    const Record* root_op = OpOf(pattern);
    commutative_ = rule_->getValueAsBit("Commutative");
    if (IsA(root_op, "Op")) {
      if (const OpcodeInfo* info = OpcodeOfOpRecord(root_op)) root_opcode_ = std::string("HloOpcode::") + info->enumerator;
      if (commutative_ && pattern->getNumArgs() != 2)
        Error("Commutative is set but the root (" + root_op->getName().str() + ") has " +
              std::to_string(pattern->getNumArgs()) + " operands in the pattern; it needs exactly two");
    } else if (IsA(root_op, "Matcher")) {
      if (commutative_) Error("Commutative is set but the root is a Matcher, not a binary op");
    } else {
      Error(std::string("the pattern's root must be an Op (rules/base/Ops.td) or a Matcher; '") +
            (root_op ? root_op->getName().str() : pattern->getOperator()->getAsString()) + "' is " +
            KindOf(root_op));
      return "";
    }

    body_.clear();
    MatchNode(pattern, "root", /*is_root=*/true);
    for (const Init* c : rule_->getValueAsListInit("Constraints")->getValues()) {
      const auto* dag = llvm::dyn_cast<DagInit>(c);
      if (!dag) {
        Error("a constraint must be a DAG such as (IsIntegral $x); got " + c->getAsString());
        continue;
      }
      EmitConstraint(dag);
    }
    EmitResult();
    if (failed_) return "";

    std::string out;
    out += "// " + RecordFile(rule_) + ":" + std::to_string(RecordLine(rule_)) + "\n";
    if (commutative_) {
      out += "static bool " + fn_ + "_Try(RewriteContext& ctx, HloInstruction* root, bool swap) {\n";
      out += body_;
      out += "}\n";
      out += "static bool " + fn_ + "(RewriteContext& ctx, HloInstruction* root) {\n";
      out += "  return " + fn_ + "_Try(ctx, root, false) || " + fn_ + "_Try(ctx, root, true);\n}\n";
    } else {
      out += "static bool " + fn_ + "(RewriteContext& ctx, HloInstruction* root) {\n";
      out += body_;
      out += "}\n";
    }
    return out;
  }

  const std::string& fn() const { return fn_; }

 private:
  // The def a DAG's operator names, with the rule's op set replaced by the member being emitted.
  const Record* OpOf(const DagInit* dag) const {
    const Record* r = OperatorDef(dag);
    return r != nullptr && r == set_ ? member_ : r;
  }

  void Error(const std::string& message) {
    llvm::PrintError(rule_->getLoc(), "in rule '" + rule_->getName().str() + "'" +
                                          (member_ ? " (for " + member_->getName().str() + " of its op set)" : "") +
                                          ": " + message);
    failed_ = true;
  }
  void Line(const std::string& code) { body_ += "  " + code + "\n"; }
  std::string Temp(const char* prefix) { return prefix + std::to_string(next_temp_++); }

  // Binds $name to `expr` (a C++ expression of type HloInstruction*), or checks that a
  // repeated name is the same instruction.
  void Bind(const std::string& name, const std::string& expr) {
    if (name.empty()) return;
    auto it = bound_.find(name);
    if (it != bound_.end()) {
      Line("if (" + it->second + " != " + expr + ") return ctx.Refuse(" +
           CppString("$" + name + " is not the same instruction at both places") + ");");
      return;
    }
    std::string var = "v_" + CppIdent(name);
    Line("[[maybe_unused]] HloInstruction* " + var + " = " + expr + ";");
    bound_[name] = var;
    bound_order_.push_back(var);
  }

  // After an error in a pattern node: its $names (and its sub-patterns') as bound, with no code
  // (the rule is not emitted), so later uses of them are not reported as unbound.
  void BindNamesOnly(const DagInit* dag) {
    auto mark = [&](const std::string& name) {
      if (!name.empty() && !bound_.count(name)) bound_[name] = "nullptr";
    };
    mark(dag->getNameStr().str());
    for (unsigned i = 0; i < dag->getNumArgs(); ++i) {
      mark(dag->getArgNameStr(i).str());
      if (const auto* sub = llvm::dyn_cast<DagInit>(dag->getArg(i))) BindNamesOnly(sub);
    }
  }

  // Operand i of the node held in `var`; the root's two operands swap in a commutative retry.
  std::string OperandExpr(const std::string& var, unsigned i, bool is_root) const {
    if (is_root && commutative_) return var + "->operand(swap ? " + std::to_string(1 - i) + " : " + std::to_string(i) + ")";
    return var + "->operand(" + std::to_string(i) + ")";
  }

  // A literal matcher/constraint/attr/builder argument; "" (after an error) if not a literal.
  std::string Literal(const Init* arg, const std::string& where) {
    if (const auto* i = llvm::dyn_cast<IntInit>(arg)) return "int64_t{" + std::to_string(i->getValue()) + "}";
    if (const auto* s = llvm::dyn_cast<StringInit>(arg)) return CppString(s->getValue());
    Error("argument " + ArgText(arg, "") + " of " + where + " must be an int or a string literal");
    return "";
  }

  void MatchNode(const DagInit* dag, const std::string& var, bool is_root) {
    const Record* op = OpOf(dag);
    std::string op_name = op ? op->getName().str() : dag->getOperator()->getAsString();
    if (IsA(op, "Matcher")) {
      std::vector<std::string> args = {var};
      for (unsigned i = 0; i < dag->getNumArgs(); ++i) {
        if (!dag->getArgNameStr(i).empty() && llvm::isa<UnsetInit>(dag->getArg(i))) {
          Error("matcher " + op_name + " takes literal arguments only; use a constraint to relate $" +
                dag->getArgNameStr(i).str() + " to it");
          continue;
        }
        args.push_back(Literal(dag->getArg(i), "matcher " + op_name));
      }
      std::string fn = op->getValueAsString("Fn").str();
      if (fn.empty()) Error("matcher " + op_name + " has no Fn");
      Line("if (!" + fn + "(" + Join(args) + ")) return ctx.Refuse(" + CppString("matcher " + DagText(dag) + " failed") +
           ");");
      Bind(dag->getNameStr().str(), var);
      return;
    }
    if (!IsA(op, "Op")) {
      Error("unknown operator '" + op_name + "' in the pattern: expected an Op (rules/base/Ops.td) or a Matcher, but it is " +
            KindOf(op));
      return;
    }
    const OpcodeInfo* info = OpcodeOfOpRecord(op);
    if (!info) {
      Error("Op '" + op_name + "' names no HLO opcode (its Name is not in src/ir/opcode.h)");
      return;
    }
    unsigned n = dag->getNumArgs();
    if (info->arity >= 0 && static_cast<int>(n) != info->arity) {
      Error(op_name + " takes " + std::to_string(info->arity) + " operand(s), but the pattern gives it " + std::to_string(n) +
            " (" + DagText(dag) + ")");
      // Its $names still count as bound: the rest of the rule then reports only real mistakes,
      // not "unbound" for every name written in this node.
      BindNamesOnly(dag);
      return;
    }
    // (The root's opcode always matches: the driver tries a rule on its root opcode only.)
    Line("if (" + var + "->opcode() != HloOpcode::" + info->enumerator + " || " + var + "->operand_count() != " +
         std::to_string(n) + ") return ctx.Refuse(" + CppString("no " + op_name + " at " + DagText(dag)) + ");");
    Bind(dag->getNameStr().str(), var);
    for (unsigned i = 0; i < n; ++i) {
      const Init* arg = dag->getArg(i);
      std::string name = dag->getArgNameStr(i).str();
      std::string expr = OperandExpr(var, i, is_root);
      if (llvm::isa<UnsetInit>(arg)) {
        Bind(name, expr);  // $x binds (or re-checks); a bare ? matches anything
        continue;
      }
      const DagInit* sub = llvm::dyn_cast<DagInit>(arg);
      if (const auto* def = llvm::dyn_cast<DefInit>(arg)) {
        if (IsA(def->getDef(), "Matcher")) {
          sub = DagInit::get(const_cast<DefInit*>(def), nullptr, {}, {});  // bare `Zero` means (Zero)
        } else {
          Error("operand " + std::to_string(i) + " of " + op_name + " is the record '" + def->getDef()->getName().str() +
                "' (" + KindOf(def->getDef()) + "); write a sub-pattern in parentheses, a Matcher, or $name");
          continue;
        }
      }
      if (!sub) {
        Error("operand " + std::to_string(i) + " of " + op_name + " is " + ArgText(arg, "") +
              "; a pattern operand is $name, ?, (Op ...) or (Matcher ...) — match constants with e.g. (ScalarConstant 2)");
        continue;
      }
      std::string child = Temp("n");
      Line("HloInstruction* " + child + " = " + expr + ";");
      MatchNode(sub, child, /*is_root=*/false);
      Bind(name, child);  // (Op ...):$x
    }
  }

  // Arguments of a constraint, AttrFn or Builder: bound $names, ints, strings.
  std::vector<std::string> CallArgs(const DagInit* dag, const std::string& where, bool allow_results) {
    std::vector<std::string> args;
    for (unsigned i = 0; i < dag->getNumArgs(); ++i) {
      const Init* arg = dag->getArg(i);
      std::string name = dag->getArgNameStr(i).str();
      if (llvm::isa<UnsetInit>(arg)) {
        if (name.empty()) {
          Error("argument " + std::to_string(i) + " of " + where + " is '?'; pass a bound $name or a literal");
          continue;
        }
        auto it = bound_.find(name);
        if (it != bound_.end()) {
          args.push_back(it->second);
          continue;
        }
        auto rit = allow_results ? results_.find(name) : results_.end();
        if (rit != results_.end()) {
          args.push_back(rit->second);
          continue;
        }
        Error("$" + name + " in " + where + " is unbound: bind it in the pattern" +
              std::string(allow_results ? " (or name an earlier result node (Op:$" + name + " ...))" : ""));
        continue;
      }
      args.push_back(Literal(arg, where));
    }
    return args;
  }

  void EmitConstraint(const DagInit* dag) {
    const Record* op = OpOf(dag);
    bool negate = false;
    if (op && op->getName() == "Unless") {
      const DagInit* inner = dag->getNumArgs() == 1 ? llvm::dyn_cast<DagInit>(dag->getArg(0)) : nullptr;
      if (!inner) {
        Error("(Unless ...) takes exactly one constraint DAG, e.g. (Unless (IsFloat $x))");
        return;
      }
      dag = inner;
      op = OpOf(dag);
      negate = true;
    }
    std::string op_name = op ? op->getName().str() : dag->getOperator()->getAsString();
    if (!IsA(op, "Constraint")) {
      Error("unknown constraint '" + op_name + "': a constraint DAG's operator must be a Constraint record, but it is " +
            KindOf(op));
      return;
    }
    std::string fn = op->getValueAsString("Fn").str();
    if (fn.empty()) Error("constraint " + op_name + " has no Fn");
    std::vector<std::string> args = {"ctx"};
    for (std::string& a : CallArgs(dag, "constraint " + op_name, /*allow_results=*/false)) args.push_back(a);
    Line(std::string("if (") + (negate ? "" : "!") + fn + "(" + Join(args) + ")) return ctx.Refuse(" +
         CppString(negate ? "(Unless " + DagText(dag) + "): it holds" : DagText(dag) + " does not hold") + ");");
  }

  void EmitResult() {
    const DagInit* result = rule_->getValueAsDag("Result");
    const Record* op = OpOf(result);
    std::string native = rule_->getValueAsString("Native").str();
    if (!native.empty()) {
      if (!op || op->getName() != "replaceWith" || result->getNumArgs() != 0)
        Error("a NativeRule's result is built by its C++ function; do not set Result");
      std::vector<std::string> args = {"ctx", "root"};
      for (const std::string& v : bound_order_) args.push_back(v);
      Line("return " + native + "(" + Join(args) + ");  // NativeRule");
      return;
    }
    if (op && op->getName() == "replaceWith") {
      if (result->getNumArgs() != 1 || !llvm::isa<UnsetInit>(result->getArg(0)) || result->getArgNameStr(0).empty()) {
        Error("(replaceWith $x) takes exactly one bound $name");
        return;
      }
      std::string name = result->getArgNameStr(0).str();
      auto it = bound_.find(name);
      if (it == bound_.end()) {
        Error("$" + name + " in the result is unbound: bind it in the pattern");
        return;
      }
      Line("return ctx.Replace(root, " + it->second + ");");
      return;
    }
    Line("const size_t mark = ctx.created().size();");
    std::string value;
    if (IsA(op, "Op")) {
      value = BuildNode(result);
    } else if (IsA(op, "Builder")) {
      value = CallBuilder(result);
    } else {
      Error("unknown operator '" + (op ? op->getName().str() : result->getOperator()->getAsString()) +
            "' in the result: expected replaceWith, an Op or a Builder, but it is " + KindOf(op));
      return;
    }
    if (value.empty()) return;
    Line("return ctx.Replace(root, " + value + ") || RefuseRule(ctx, mark);");
  }

  std::string CallBuilder(const DagInit* dag) {
    const Record* op = OpOf(dag);
    std::string fn = op->getValueAsString("Fn").str();
    if (fn.empty()) Error("builder " + op->getName().str() + " has no Fn");
    std::vector<std::string> args = {"ctx"};
    for (std::string& a : CallArgs(dag, "builder " + op->getName().str(), /*allow_results=*/true)) args.push_back(a);
    std::string var = Temp("r");
    Line("HloInstruction* " + var + " = " + fn + "(" + Join(args) + ");  // " + op->getName().str());
    Line("if (" + var + " == nullptr) return RefuseRule(ctx, mark);");
    NameResult(dag->getNameStr().str(), var);
    return var;
  }

  void NameResult(const std::string& name, const std::string& var) {
    if (name.empty()) return;
    if (bound_.count(name)) Error("result node $" + name + " reuses a name the pattern binds");
    else if (results_.count(name)) Error("result node $" + name + " is named twice");
    results_[name] = var;
  }

  // Builds (Op args...) bottom-up and returns the C++ variable holding it.
  std::string BuildNode(const DagInit* dag) {
    const Record* op = OpOf(dag);
    const OpcodeInfo* info = OpcodeOfOpRecord(op);
    std::string op_name = op->getName().str();
    if (!info) {
      Error("Op '" + op_name + "' names no HLO opcode (its Name is not in src/ir/opcode.h)");
      return "";
    }
    std::string spec = Temp("s");
    Line("NewInstruction " + spec + ";");
    std::vector<std::string> operands;
    for (unsigned i = 0; i < dag->getNumArgs(); ++i) {
      const Init* arg = dag->getArg(i);
      std::string name = dag->getArgNameStr(i).str();
      if (llvm::isa<UnsetInit>(arg)) {
        if (name.empty()) {
          Error("argument " + std::to_string(i) + " of result " + op_name + " is '?'; use a bound $name");
          continue;
        }
        auto it = bound_.find(name);
        auto rit = results_.find(name);
        if (it != bound_.end()) operands.push_back(it->second);
        else if (rit != results_.end()) operands.push_back(rit->second);
        else Error("$" + name + " in the result is unbound: bind it in the pattern or name an earlier result node");
        continue;
      }
      const DagInit* sub = llvm::dyn_cast<DagInit>(arg);
      if (const auto* def = llvm::dyn_cast<DefInit>(arg)) {
        if (IsA(def->getDef(), "AttrFn") || IsA(def->getDef(), "Builder"))
          sub = DagInit::get(const_cast<DefInit*>(def), nullptr, {}, {});
      }
      if (!sub) {
        Error("argument " + ArgText(arg, "") + " of result " + op_name +
              " must be $name, (Op ...), (AttrFn ...) or (Builder ...); literals go inside an AttrFn or Builder");
        continue;
      }
      const Record* sub_op = OpOf(sub);
      std::string sub_name = sub_op ? sub_op->getName().str() : sub->getOperator()->getAsString();
      if (IsA(sub_op, "AttrFn")) {
        std::string fn = sub_op->getValueAsString("Fn").str();
        if (fn.empty()) Error("attribute function " + sub_name + " has no Fn");
        std::vector<std::string> args = {"ctx", spec};
        for (std::string& a : CallArgs(sub, "attribute function " + sub_name, /*allow_results=*/true)) args.push_back(a);
        Line("if (!" + fn + "(" + Join(args) + ")) return RefuseRule(ctx, mark);  // " + sub_name);
      } else if (IsA(sub_op, "Builder")) {
        std::string v = CallBuilder(sub);
        if (!v.empty()) operands.push_back(v);
      } else if (IsA(sub_op, "Op")) {
        std::string v = BuildNode(sub);
        if (!v.empty()) operands.push_back(v);
      } else {
        Error("unknown operator '" + sub_name + "' in the result: expected an Op, an AttrFn or a Builder, but it is " +
              KindOf(sub_op));
      }
    }
    if (info->arity >= 0 && static_cast<int>(operands.size()) != info->arity && !failed_) {
      Error("result " + op_name + " takes " + std::to_string(info->arity) + " operand(s), but it is given " +
            std::to_string(operands.size()) + " (" + DagText(dag) + ")");
      return "";
    }
    std::string var = Temp("r");
    Line("HloInstruction* " + var + " = ctx.Create(HloOpcode::" + info->enumerator + ", {" + Join(operands) + "}, std::move(" +
         spec + "));");
    Line("if (" + var + " == nullptr) return RefuseRule(ctx, mark);");
    NameResult(dag->getNameStr().str(), var);
    return var;
  }

  static std::string Join(const std::vector<std::string>& parts) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    return out;
  }

  const Record* rule_;
  const std::set<std::string>* declared_passes_;
  const Record* set_;     // the OpSet the rule ranges over, or null
  const Record* member_;  // the op standing for set_ in this emission
  std::string fn_;
  std::string body_;
  std::string root_opcode_;
  bool commutative_ = false;
  bool failed_ = false;
  int next_temp_ = 0;
  std::map<std::string, std::string> bound_;    // pattern $name -> C++ variable
  std::vector<std::string> bound_order_;        // NativeRule arguments, in binding order
  std::map<std::string, std::string> results_;  // result node $name -> C++ variable
};

// A rule's Pass that no RewritePass record declares: a misspelt pass would otherwise become a
// pass of its own that no pipeline runs, and the rule would silently never fire.
std::string UndeclaredPassMessage(const std::string& pass, const std::set<std::string>& declared) {
  std::string best, list;
  unsigned best_d = ~0u;
  for (const std::string& d : declared) {
    list += (list.empty() ? "" : ", ") + d;
    unsigned dist = llvm::StringRef(pass).edit_distance(d, /*AllowReplacements=*/true);
    if (dist < best_d) best_d = dist, best = d;
  }
  std::string hint;
  if (!best.empty() && best_d <= std::max<size_t>(2, pass.size() / 3)) hint = " (did you mean '" + best + "'?)";
  return "Pass '" + pass + "' is not a rewrite pass" + hint + ": no pipeline runs it. Declared (RewritePass records): " +
         list + "; a new rule-driven pass needs `def : RewritePass<\"" + pass +
         "\">;` (rules/base/Dsl.td) and an entry in a pipeline (pipelines/*.yaml)";
}

// The OpSet records a DAG (and its sub-DAGs) names as operators.
void CollectOpSets(const DagInit* dag, std::vector<const Record*>& sets) {
  const Record* op = OperatorDef(dag);
  if (IsA(op, "OpSet") && std::find(sets.begin(), sets.end(), op) == sets.end()) sets.push_back(op);
  for (unsigned i = 0; i < dag->getNumArgs(); ++i)
    if (const auto* sub = llvm::dyn_cast<DagInit>(dag->getArg(i))) CollectOpSets(sub, sets);
}

// The op set a rule ranges over (null: none), in `sets`; false after an error (two sets).
bool RuleOpSet(const Record* rule, const Record*& set) {
  std::vector<const Record*> sets;
  CollectOpSets(rule->getValueAsDag("Pattern"), sets);
  CollectOpSets(rule->getValueAsDag("Result"), sets);
  for (const Init* c : rule->getValueAsListInit("Constraints")->getValues())
    if (const auto* dag = llvm::dyn_cast<DagInit>(c)) CollectOpSets(dag, sets);
  set = sets.empty() ? nullptr : sets.front();
  if (sets.size() <= 1) return true;
  llvm::PrintError(rule->getLoc(), "in rule '" + rule->getName().str() + "': it names two op sets, '" +
                                       sets[0]->getName().str() + "' and '" + sets[1]->getName().str() +
                                       "'; a rule ranges over one op set (write one rule per combination)");
  return false;
}

// The Tag records (rules/base/Dsl.td) of the input and its includes, in definition order: each
// one's YAML name is lower_snake_case and no other tag has it. Errors are printed at the tag's
// def; returns false after one.
bool CollectTags(const llvm::RecordKeeper& records, std::vector<const Record*>& tags) {
  if (!records.getClass("Tag")) return true;
  for (const Record* t : records.getAllDerivedDefinitions("Tag")) tags.push_back(t);
  std::stable_sort(tags.begin(), tags.end(), [](const Record* a, const Record* b) { return a->getID() < b->getID(); });
  bool ok = true;
  std::map<std::string, const Record*> by_name;
  for (const Record* t : tags) {
    const std::string name = t->getValueAsString("Name").str();
    const std::string def = t->isAnonymous() ? std::string("Tag<\"") + name + "\", ...>" : t->getName().str();
    bool snake = !name.empty() && name[0] >= 'a' && name[0] <= 'z';
    for (char c : name) snake = snake && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    if (!snake) {
      llvm::PrintError(t->getLoc(), "tag '" + def + "' has the name '" + name +
                                        "'; a tag's name (what YAML writes after `tag:`) is lower_snake_case, "
                                        "e.g. \"inexact_like_xla\"");
      ok = false;
      continue;
    }
    auto [it, inserted] = by_name.emplace(name, t);
    if (!inserted) {
      llvm::PrintError(t->getLoc(), "tag '" + def + "' has the name '" + name + "', which tag '" +
                                        it->second->getName().str() + "' already has");
      llvm::PrintNote(it->second->getLoc(), "the first tag named '" + name + "' is defined here");
      ok = false;
    }
  }
  return ok;
}

// The YAML names of a rule's Tags; false (after an error at the rule) when one is listed twice.
bool RuleTags(const Record* rule, std::vector<std::string>& names) {
  names.clear();
  for (const Record* t : rule->getValueAsListOfDefs("Tags")) {
    const std::string name = t->getValueAsString("Name").str();
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      llvm::PrintError(rule->getLoc(), "in rule '" + rule->getName().str() + "': it lists the tag '" +
                                           t->getName().str() + "' (" + name + ") twice");
      return false;
    }
    names.push_back(name);
  }
  return true;
}

std::string Summary(const Record* rule) {
  std::string s = rule->getValueAsString("Summary").str();
  if (s.empty()) s = CommentAbove(rule);
  if (s.empty())
    s = DagText(rule->getValueAsDag("Pattern")) + " => " + DagText(rule->getValueAsDag("Result"));
  return s;
}

}  // namespace

bool EmitRules(llvm::raw_ostream& os, const llvm::RecordKeeper& records) {
  const std::string stem = FileStem(records);
  std::vector<const Record*> rules;
  if (records.getClass("Rule")) {
    for (const Record* r : records.getAllDerivedDefinitions("Rule"))
      if (InMainFile(r)) rules.push_back(r);
  }
  // Declaration order (getAllDerivedDefinitions sorts by name): priority ties break by it.
  std::stable_sort(rules.begin(), rules.end(), [](const Record* a, const Record* b) { return a->getID() < b->getID(); });

  std::set<std::string> declared_passes;
  const bool check_passes = records.getClass("RewritePass") != nullptr;
  if (check_passes)
    for (const Record* r : records.getAllDerivedDefinitions("RewritePass"))
      declared_passes.insert(r->getValueAsString("Name").str());

  std::vector<const Record*> tags;
  bool failed = !CollectTags(records, tags);
  size_t rows = 0;
  std::string functions, table, names;
  for (const Record* rule : rules) {
    // A rule over an op set is emitted once per member op: one function and one table row each,
    // all with the rule's name (so YAML, traces and firings name the rule as written).
    const Record* set = nullptr;
    std::vector<const Record*> members = {nullptr};
    if (!RuleOpSet(rule, set) || (set != nullptr && !ExpandOps(records, set, rule, members))) {
      failed = true;
      continue;
    }
    std::vector<std::string> codes, fns, roots;
    bool rule_failed = false;
    for (const Record* member : members) {
      RuleEmitter emitter(rule, check_passes ? &declared_passes : nullptr, set, member);
      codes.push_back(emitter.Emit());
      fns.push_back(emitter.fn());
      roots.push_back(emitter.root_opcode());
      rule_failed |= emitter.failed();
    }
    std::vector<std::string> rule_tags;
    if (!RuleTags(rule, rule_tags)) rule_failed = true;
    if (rule_failed) {
      failed = true;
      continue;
    }
    // Rule names are global (YAML enables and disables rules by name, traces name them): one
    // symbol per name, so two rule files defining the same name fail the link, naming it.
    names += "extern \"C\" const char hloc_rule_name_" + CppIdent(rule->getName()) + "[] = " +
             CppString(RecordFile(rule) + ":" + std::to_string(RecordLine(rule))) + ";\n";
    for (const std::string& code : codes) functions += code + "\n";
    std::vector<Record*> reqs = rule->getValueAsListOfDefs("Requires");
    std::string requires_var = RequirementArray(functions, "static ", "kRequires_" + CppIdent(rule->getName()), rule);
    if (!reqs.empty()) functions += "\n";
    std::string tags_var = "nullptr";
    if (!rule_tags.empty()) {
      tags_var = "kTags_" + CppIdent(rule->getName());
      functions += "static const char* const " + tags_var + "[] = {";
      for (size_t i = 0; i < rule_tags.size(); ++i) functions += (i ? ", " : "") + CppString(rule_tags[i]);
      functions += "};\n\n";
    }
    for (size_t m = 0; m < members.size(); ++m, ++rows)
      table += "    {" + CppString(rule->getName()) + ", " + CppString(rule->getValueAsString("Pass")) + ", " +
               CppString(rule->getValueAsString("Group")) + ", " + std::to_string(rule->getValueAsInt("Priority")) +
               ", " + CppString(RecordFile(rule)) + ", " + std::to_string(RecordLine(rule)) + ", " +
               (roots[m].empty() ? std::string("-1") : "static_cast<int>(" + roots[m] + ")") + ", " + requires_var +
               ", " + std::to_string(reqs.size()) + ",\n     " + CppString(Summary(rule)) + ", " + fns[m] + ", " + tags_var + ", " +
               std::to_string(rule_tags.size()) + "},\n";
  }
  if (failed) return true;

  os << "#include <cstddef>\n#include <cstdint>\n#include <utility>\n\n";
  os << "#include \"engine/rewrite.h\"\n#include \"engine/rule_helpers.h\"\n#include \"ir/opcode.h\"\n";
  for (const std::string& h : CppHeaders(records)) os << "#include \"" << h << "\"\n";
  if (!names.empty()) {
    os << "\n// Rule names are global: a second definition of one in another rule file fails the link here.\n"
       << names;
  }
  os << "\nnamespace hloc {\nnamespace {\n\n" << functions;
  if (!rules.empty()) os << "const RuleInfo kRules[] = {\n" << table << "};\n\n";
  // The declared tags this file sees (the registry keeps one per name), so YAML can name a tag
  // that is declared even where no rule carries it yet.
  if (!tags.empty()) {
    os << "const TagInfo kDeclaredTags[] = {\n";
    for (const Record* t : tags)
      os << "    {" << CppString(t->getValueAsString("Name")) << ", " << CppString(t->getValueAsString("Summary"))
         << "},\n";
    os << "};\n\n";
  }
  os << "}  // namespace\n\n";
  os << "// " << rules.size() << " rule(s)";
  if (rows != rules.size()) os << ", " << rows << " after expanding op sets";
  os << ".\n";
  os << "void RegisterRules_" << stem << "(RuleRegistry& registry) {\n";
  if (rules.empty() && tags.empty()) os << "  (void)registry;\n";
  if (!tags.empty()) os << "  for (const TagInfo& tag : kDeclaredTags) registry.RegisterTag(&tag);\n";
  if (!rules.empty()) os << "  for (const RuleInfo& rule : kRules) registry.Register(&rule);\n";
  os << "}\n\n}  // namespace hloc\n";
  return false;
}

}  // namespace hloc_gen
