// hloc-tblgen: turns rules/**/*.td into C++ (rewrite rules, layout and fusion tables).
//
//   hloc-tblgen --gen-rules  -I rules rules/simplify/X.td -o X.rules.cc [--source-root DIR] [-d X.d]
//   hloc-tblgen --gen-layout | --gen-fusion | --gen-all | --print-records ...
//
// TableGen does the parsing (includes, let-blocks, classes, located errors); the backends in
// rules_backend.cpp and tables_backend.cpp read the records of the main file only, so each
// .td compiles to one independent .cc and the build regenerates only what changed.
#include <cctype>
#include <string>

#include "gen_common.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/TableGen/Error.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"

namespace {

enum Action { kPrintRecords, kGenRules, kGenLayout, kGenFusion, kGenSpmd, kGenAll };

llvm::cl::opt<Action> action(
    llvm::cl::desc("Action to perform:"),
    llvm::cl::values(clEnumValN(kPrintRecords, "print-records", "Print all records (the default)"),
                     clEnumValN(kGenRules, "gen-rules", "Rewrite rules: one C++ function per Rule record"),
                     clEnumValN(kGenLayout, "gen-layout", "LayoutConstraint records as a C++ table"),
                     clEnumValN(kGenFusion, "gen-fusion", "FusionRule records as C++ tables"),
                     clEnumValN(kGenSpmd, "gen-spmd", "SpmdStrategy records as a C++ table"),
                     clEnumValN(kGenAll, "gen-all", "--gen-rules, --gen-layout, --gen-fusion and --gen-spmd in one file")),
    llvm::cl::init(kPrintRecords));

llvm::cl::opt<std::string> source_root(
    "source-root", llvm::cl::desc("Directory stripped from .td paths in the generated tables (the repository root)"),
    llvm::cl::value_desc("dir"), llvm::cl::init(""));

llvm::cl::opt<std::string> stem_override(
    "stem", llvm::cl::desc("Suffix of the registration functions (default: the input file's name)"),
    llvm::cl::value_desc("name"), llvm::cl::init(""));

// TableGen's parser says `Variable not defined: 'Sine'` for any unknown name. Most often it is
// an Op or a matcher/constraint misspelt or named after XLA's text ("sine" is the Op Sin): say
// which def was meant. The message is printed as TableGen prints it, then a note.
std::string Suggest(llvm::StringRef name) {
  // XLA's text name written in CamelCase: Sine -> "sine", DynamicSlice -> "dynamic-slice".
  std::string text;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (i > 0 && c >= 'A' && c <= 'Z') text += '-';
    text += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  if (const hloc_gen::OpcodeInfo* info = hloc_gen::FindOpcodeByText(text)) {
    const std::string op = std::string(info->enumerator).substr(1);  // kSin -> Sin
    if (op != name) return "did you mean '" + op + "'? (the Op for XLA's '" + info->text + "', rules/base/Ops.td)";
  }
  // Otherwise the closest def in the files read so far (Ops.td, Common.td, this file).
  std::string best;
  unsigned best_d = ~0u;
  for (unsigned b = 1; b <= llvm::SrcMgr.getNumBuffers(); ++b) {
    llvm::StringRef buf = llvm::SrcMgr.getMemoryBuffer(b)->getBuffer();
    for (size_t at = buf.find("def "); at != llvm::StringRef::npos; at = buf.find("def ", at + 4)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(buf[at - 1])) || buf[at - 1] == '_')) continue;
      llvm::StringRef rest = buf.substr(at + 4).ltrim(" \t");
      const size_t len = rest.find_if_not([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      llvm::StringRef candidate = rest.substr(0, len);
      if (candidate.empty() || candidate == name) continue;
      const unsigned d = name.edit_distance(candidate, /*AllowReplacements=*/true);
      if (d < best_d) best_d = d, best = candidate.str();
    }
  }
  if (!best.empty() && best_d <= std::max<size_t>(1, name.size() / 3)) return "did you mean '" + best + "'?";
  return "";
}

void DiagnosticHandler(const llvm::SMDiagnostic& diag, void*) {
  // Print it as TableGen would (with the include stack), without this handler.
  llvm::SrcMgr.setDiagHandler(nullptr);
  llvm::SrcMgr.PrintMessage(llvm::errs(), diag);
  llvm::SrcMgr.setDiagHandler(DiagnosticHandler);
  llvm::StringRef message = diag.getMessage();
  if (diag.getKind() != llvm::SourceMgr::DK_Error || !message.consume_front("Variable not defined: '")) return;
  const std::string hint = Suggest(message.rtrim("'"));
  if (hint.empty()) return;
  llvm::errs() << diag.getFilename() << ":" << diag.getLineNo() << ":" << diag.getColumnNo() + 1 << ": note: " << hint
               << "\n";
}

bool Run(llvm::raw_ostream& os, llvm::RecordKeeper& records) {
  using namespace hloc_gen;
  switch (action) {
    case kPrintRecords:
      os << records;
      return false;
    case kGenRules:
      EmitPreamble(os, records, "--gen-rules");
      return EmitRules(os, records);
    case kGenLayout:
      EmitPreamble(os, records, "--gen-layout");
      return EmitLayout(os, records);
    case kGenFusion:
      EmitPreamble(os, records, "--gen-fusion");
      return EmitFusion(os, records);
    case kGenSpmd:
      EmitPreamble(os, records, "--gen-spmd");
      return EmitSpmd(os, records);
    case kGenAll: {
      // Run every backend even after an error, so one run reports all of a file's mistakes.
      EmitPreamble(os, records, "--gen-all");
      bool failed = EmitRules(os, records);
      failed = EmitLayout(os, records) || failed;
      failed = EmitFusion(os, records) || failed;
      failed = EmitSpmd(os, records) || failed;
      return failed;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "hloc-tblgen: hloc's rule compiler\n");
  std::string root = source_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  hloc_gen::SetOptions({root, stem_override});
  llvm::SrcMgr.setDiagHandler(DiagnosticHandler);
  return llvm::TableGenMain(argv[0], &Run);
}
