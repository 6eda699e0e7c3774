// hloc-tblgen's work on one parsed file (see tblgen_driver.h): the diagnostic handler, the
// backends by action, and the in-memory driver the fuzz target uses.
#include "tblgen_driver.h"

#include <cctype>
#include <memory>
#include <string>

#include "gen_common.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Parser.h"

namespace hloc_gen {

namespace {

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

}  // namespace

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

bool RunAction(Action action, llvm::raw_ostream& os, llvm::RecordKeeper& records) {
  // Rows name requirements by their enumerators: every Requirement record must be one.
  if (action != kPrintRecords && !CheckRequirementRecords(records)) return true;
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
    case kGenLibrary:
      EmitPreamble(os, records, "--gen-library");
      return EmitLibrary(os, records);
    case kGenRequirements:
      EmitPreamble(os, records, "--gen-requirements");
      return EmitRequirements(os, records);
    case kGenAll: {
      // Run every backend even after an error, so one run reports all of a file's mistakes.
      EmitPreamble(os, records, "--gen-all");
      bool failed = EmitRules(os, records);
      failed = EmitLayout(os, records) || failed;
      failed = EmitFusion(os, records) || failed;
      failed = EmitSpmd(os, records) || failed;
      failed = EmitLibrary(os, records) || failed;
      return failed;
    }
  }
  return true;
}


bool CompileTd(llvm::StringRef text, llvm::StringRef name, const std::vector<std::string>& include_dirs,
               Action action, llvm::RecordKeeper& records, std::string* out) {
  llvm::SourceMgr input;
  // LLVM 19's TableGen lexer skips a false #ifdef region line by line, looking for '\n' past the
  // buffer's end when the last line has none (an out-of-bounds read found by fuzz_tblgen): the
  // text always ends with a newline here. (Included files are TableGen's own to read.)
  const bool ends_line = !text.empty() && text.back() == '\n';
  input.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(ends_line ? text.str() : text.str() + "\n", name),
                           llvm::SMLoc());
  input.setIncludeDirs(include_dirs);
  input.setDiagHandler(DiagnosticHandler);
  const unsigned errors_before = llvm::ErrorsPrinted;
  // Parses through the global llvm::SrcMgr, as TableGenMain does, and hands the buffers back.
  if (llvm::TableGenParseFile(input, records)) return true;
  // The backends print errors at records' locations through llvm::SrcMgr.
  llvm::SrcMgr = llvm::SourceMgr();
  llvm::SrcMgr.takeSourceBuffersFrom(input);
  llvm::SrcMgr.setIncludeDirs(include_dirs);
  llvm::SrcMgr.setDiagHandler(DiagnosticHandler);
  llvm::raw_string_ostream os(*out);
  const bool failed = RunAction(action, os, records);
  os.flush();
  llvm::SrcMgr = llvm::SourceMgr();
  return failed || llvm::ErrorsPrinted != errors_before;
}

}  // namespace hloc_gen
