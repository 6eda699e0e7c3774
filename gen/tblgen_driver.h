// hloc-tblgen's work on one parsed file, apart from its command line (hloc_tblgen.cpp), so that
// the fuzz target fuzz/tblgen.cc runs exactly what hloc-tblgen runs, in memory.
#pragma once
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Record.h"

namespace hloc_gen {

enum Action { kPrintRecords, kGenRules, kGenLayout, kGenFusion, kGenSpmd, kGenLibrary, kGenAll, kGenRequirements };

// TableGen's diagnostics printed as TableGen prints them, plus a "did you mean" note for an
// undefined name; installed on llvm::SrcMgr.
void DiagnosticHandler(const llvm::SMDiagnostic& diag, void*);

// The backends of `action` over the parsed records (TableGenMain's callback). True on error.
bool RunAction(Action action, llvm::raw_ostream& os, llvm::RecordKeeper& records);

// hloc-tblgen on a file held in memory: parses `text` (named `name`; includes looked up in
// `include_dirs`) into `records` (fresh) and runs `action` into *out. Diagnostics go to stderr.
// True on error. Fatal TableGen errors (PrintFatalError) still end the process, as in
// hloc-tblgen.
bool CompileTd(llvm::StringRef text, llvm::StringRef name, const std::vector<std::string>& include_dirs,
               Action action, llvm::RecordKeeper& records, std::string* out);

}  // namespace hloc_gen
