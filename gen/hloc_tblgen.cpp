// hloc-tblgen: turns rules/**/*.td into C++ (rewrite rules, layout and fusion tables).
//
//   hloc-tblgen --gen-rules  -I rules rules/simplify/X.td -o X.rules.cc [--source-root DIR] [-d X.d]
//   hloc-tblgen --gen-layout | --gen-fusion | --gen-spmd | --gen-library | --gen-all | --print-records ...
//   hloc-tblgen --gen-requirements -I rules rules/base/Requirements.td -o requirements.inc
//
// TableGen does the parsing (includes, let-blocks, classes, located errors); the backends in
// rules_backend.cpp and tables_backend.cpp read the records of the main file only, so each
// .td compiles to one independent .cc and the build regenerates only what changed.
#include <string>

#include "gen_common.h"
#include "tblgen_driver.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/TableGen/Error.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"

namespace {

using namespace hloc_gen;  // Action

llvm::cl::opt<Action> action(
    llvm::cl::desc("Action to perform:"),
    llvm::cl::values(clEnumValN(kPrintRecords, "print-records", "Print all records (the default)"),
                     clEnumValN(kGenRules, "gen-rules", "Rewrite rules: one C++ function per Rule record"),
                     clEnumValN(kGenLayout, "gen-layout", "LayoutConstraint records as a C++ table"),
                     clEnumValN(kGenFusion, "gen-fusion", "FusionRule records as C++ tables"),
                     clEnumValN(kGenSpmd, "gen-spmd", "SpmdStrategy records as a C++ table"),
                     clEnumValN(kGenLibrary, "gen-library", "LibraryPattern records as a C++ table"),
                     clEnumValN(kGenRequirements, "gen-requirements",
                                "Requirement records (rules/base/Requirements.td) as an X-macro list (the C++ enum)"),
                     clEnumValN(kGenAll, "gen-all",
                                "--gen-rules, --gen-layout, --gen-fusion, --gen-spmd and --gen-library in one file")),
    llvm::cl::init(kPrintRecords));

llvm::cl::opt<std::string> source_root(
    "source-root", llvm::cl::desc("Directory stripped from .td paths in the generated tables (the repository root)"),
    llvm::cl::value_desc("dir"), llvm::cl::init(""));

llvm::cl::opt<std::string> stem_override(
    "stem", llvm::cl::desc("Suffix of the registration functions (default: the input file's name)"),
    llvm::cl::value_desc("name"), llvm::cl::init(""));

bool Run(llvm::raw_ostream& os, llvm::RecordKeeper& records) { return hloc_gen::RunAction(action, os, records); }

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "hloc-tblgen: hloc's rule compiler\n");
  std::string root = source_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  hloc_gen::SetOptions({root, stem_override});
  llvm::SrcMgr.setDiagHandler(hloc_gen::DiagnosticHandler);
  return llvm::TableGenMain(argv[0], &Run);
}
