#include "gen_common.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>

#include "ir/opcode.h"  // only the HLOC_OPCODES X-macro: no hloc library is linked
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/TableGen/Error.h"

namespace hloc_gen {

namespace {
GenOptions& MutableOptions() {
  static GenOptions options;
  return options;
}

// The location a person wrote: for a def that is its own line; for records made by a defm,
// the defm line (the last location).
llvm::SMLoc UserLoc(const llvm::Record* record) {
  llvm::ArrayRef<llvm::SMLoc> locs = record->getLoc();
  return locs.empty() ? llvm::SMLoc() : locs.back();
}

using hloc::kVariadic;
const OpcodeInfo kOpcodes[] = {
#define HLOC_GEN_OPCODE(e, name, arity) {#e, name, arity},
    HLOC_OPCODES(HLOC_GEN_OPCODE)
#undef HLOC_GEN_OPCODE
};
}  // namespace

const GenOptions& Options() { return MutableOptions(); }
void SetOptions(GenOptions options) { MutableOptions() = std::move(options); }

std::string RecordFile(const llvm::Record* record) {
  llvm::SMLoc loc = UserLoc(record);
  if (!loc.isValid()) return "<unknown>";
  unsigned buffer = llvm::SrcMgr.FindBufferContainingLoc(loc);
  if (buffer == 0) return "<unknown>";
  std::string path = llvm::SrcMgr.getMemoryBuffer(buffer)->getBufferIdentifier().str();
  std::string root = Options().source_root;
  if (!root.empty()) {
    if (root.back() != '/') root += '/';
    if (llvm::StringRef(path).starts_with(root)) path = path.substr(root.size());
  }
  return path;
}

int RecordLine(const llvm::Record* record) {
  llvm::SMLoc loc = UserLoc(record);
  if (!loc.isValid()) return 0;
  return static_cast<int>(llvm::SrcMgr.getLineAndColumn(loc).first);
}

bool InMainFile(const llvm::Record* record) {
  llvm::SMLoc loc = UserLoc(record);
  return loc.isValid() && llvm::SrcMgr.FindBufferContainingLoc(loc) == llvm::SrcMgr.getMainFileID();
}

std::string CommentAbove(const llvm::Record* record) {
  llvm::SMLoc loc = UserLoc(record);
  if (!loc.isValid()) return "";
  unsigned buffer = llvm::SrcMgr.FindBufferContainingLoc(loc);
  if (buffer == 0) return "";
  llvm::StringRef text = llvm::SrcMgr.getMemoryBuffer(buffer)->getBuffer();
  llvm::StringRef before = text.substr(0, loc.getPointer() - text.data());
  size_t newline = before.rfind('\n');
  if (newline == llvm::StringRef::npos) return "";
  before = before.substr(0, newline);  // everything up to the end of the line above the def
  std::vector<std::string> lines;
  while (true) {
    size_t p = before.rfind('\n');
    llvm::StringRef line = (p == llvm::StringRef::npos ? before : before.substr(p + 1)).trim();
    if (!line.starts_with("//")) break;
    lines.push_back(line.ltrim('/').trim().str());
    if (p == llvm::StringRef::npos) break;
    before = before.substr(0, p);
  }
  std::reverse(lines.begin(), lines.end());
  std::string out;
  for (const std::string& l : lines) {
    if (l.empty()) continue;
    if (!out.empty()) out += ' ';
    out += l;
  }
  return out;
}

std::string FileStem(const llvm::RecordKeeper& records) {
  std::string stem = Options().stem;
  if (stem.empty()) stem = llvm::sys::path::stem(records.getInputFilename()).str();
  return CppIdent(stem);
}

std::string CppString(llvm::StringRef s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  // "??x" would be a trigraph in old dialects; splitting keeps the literal plain everywhere.
  size_t pos = 0;
  while ((pos = out.find("??", pos)) != std::string::npos) {
    out.replace(pos, 2, "?\" \"?");
    pos += 5;
  }
  return out + "\"";
}

std::string CppIdent(llvm::StringRef s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

const OpcodeInfo* FindOpcodeByText(llvm::StringRef text) {
  for (const OpcodeInfo& info : kOpcodes)
    if (text == info.text) return &info;
  return nullptr;
}

const OpcodeInfo* OpcodeOfOpRecord(const llvm::Record* op) {
  const llvm::RecordVal* name = op->getValue("Name");
  const llvm::StringInit* text = name ? llvm::dyn_cast<llvm::StringInit>(name->getValue()) : nullptr;
  if (!text) return nullptr;
  return FindOpcodeByText(text->getValue());
}

bool ExpandOps(const llvm::RecordKeeper& records, const llvm::Record* op_or_set, const llvm::Record* user,
               std::vector<const llvm::Record*>& ops) {
  ops.clear();
  const std::string set_name = op_or_set->isAnonymous() ? std::string("OpSet<...>") : op_or_set->getName().str();
  auto error = [&](const std::string& message) {
    llvm::PrintError(user->getLoc(), message);
    if (op_or_set != user && !op_or_set->getLoc().empty() && !op_or_set->isAnonymous())
      llvm::PrintNote(op_or_set->getLoc(), "op set '" + set_name + "' is defined here");
    return false;
  };
  if (op_or_set->isSubClassOf("Op")) {
    if (!OpcodeOfOpRecord(op_or_set))
      return error("'" + op_or_set->getName().str() + "' names no HLO opcode (not in src/ir/opcode.h)");
    ops.push_back(op_or_set);
    return true;
  }
  if (!op_or_set->isSubClassOf("OpSet"))
    return error("'" + op_or_set->getName().str() + "' is neither an Op nor an OpSet");
  std::vector<const llvm::Record*> members;
  std::set<const llvm::Record*> seen;
  for (const llvm::Record* op : op_or_set->getValueAsListOfDefs("Ops")) {
    if (!seen.insert(op).second)
      return error("op set '" + set_name + "' lists '" + op->getName().str() + "' twice");
    members.push_back(op);
  }
  std::vector<llvm::Record*> traits = op_or_set->getValueAsListOfDefs("AnyOf");
  if (!traits.empty()) {
    std::vector<const llvm::Record*> all;
    for (const llvm::Record* op : records.getAllDerivedDefinitions("Op")) all.push_back(op);
    std::stable_sort(all.begin(), all.end(), [](const llvm::Record* a, const llvm::Record* b) { return a->getID() < b->getID(); });
    for (const llvm::Record* op : all) {
      bool has = false;
      for (const llvm::Record* t : op->getValueAsListOfDefs("Traits"))
        has |= std::find(traits.begin(), traits.end(), t) != traits.end();
      if (has && seen.insert(op).second) members.push_back(op);
    }
  }
  for (const llvm::Record* op : op_or_set->getValueAsListOfDefs("Except")) {
    auto it = std::find(members.begin(), members.end(), op);
    if (it == members.end())
      return error("op set '" + set_name + "' excepts '" + op->getName().str() + "', which is not a member");
    members.erase(it);
  }
  if (members.empty()) return error("op set '" + set_name + "' is empty");
  for (const llvm::Record* op : members)
    if (!OpcodeOfOpRecord(op))
      return error("op set '" + set_name + "' names '" + op->getName().str() +
                   "', which names no HLO opcode (not in src/ir/opcode.h)");
  ops = std::move(members);
  return true;
}

std::vector<std::string> CppHeaders(const llvm::RecordKeeper& records) {
  std::set<std::string> headers;
  if (records.getClass("CppHeader")) {
    for (const llvm::Record* r : records.getAllDerivedDefinitions("CppHeader"))
      headers.insert(r->getValueAsString("Path").str());
  }
  return {headers.begin(), headers.end()};
}

void EmitPreamble(llvm::raw_ostream& os, const llvm::RecordKeeper& records, llvm::StringRef what) {
  os << "// Generated by hloc-tblgen (" << what << ") from " << llvm::sys::path::filename(records.getInputFilename())
     << ". Do not edit: change the .td file.\n";
}

}  // namespace hloc_gen
