// Shared pieces of hloc-tblgen's backends: where a record was defined, the comment above it,
// C++ literal escaping, and the opcode table (taken from src/ir/opcode.h so the generator and
// the compiler can never disagree about names or operand counts).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/TableGen/Record.h"

namespace hloc_gen {

struct GenOptions {
  std::string source_root;  // stripped from file paths in generated tables (e.g. the repo root)
  std::string stem;         // overrides the registration-function suffix (default: input stem)
};
const GenOptions& Options();
void SetOptions(GenOptions options);

// "rules/simplify/X.td" (relative to --source-root when it is a prefix) and the 1-based line of
// the record's def.
std::string RecordFile(const llvm::Record* record);
int RecordLine(const llvm::Record* record);
// Whether the record was defined in the main input file (not in an included one).
bool InMainFile(const llvm::Record* record);
// The `//` comment lines directly above the def, joined with spaces ("" if none).
std::string CommentAbove(const llvm::Record* record);
// The registration suffix: --stem, or the main file's name without directory and extension,
// with anything but [A-Za-z0-9_] turned into '_'.
std::string FileStem(const llvm::RecordKeeper& records);

// A C++ string literal ("..." with escapes).
std::string CppString(llvm::StringRef s);
// A valid C++ identifier made from s.
std::string CppIdent(llvm::StringRef s);

struct OpcodeInfo {
  const char* enumerator;  // "kAdd"
  const char* text;        // "add"
  int arity;               // -1 = variadic
};
// By XLA text name ("add"); nullptr when it is not an opcode.
const OpcodeInfo* FindOpcodeByText(llvm::StringRef text);

// The record's `Op` (a def of class Op): its opcode, or an error printed at `loc_record`.
const OpcodeInfo* OpcodeOfOpRecord(const llvm::Record* op);

// The ops an Op or OpSet record (class OpOrSet, rules/base/Dsl.td) stands for: an Op itself;
// an OpSet its Ops, then every Op of `records` (in definition order) having a trait of its
// AnyOf, less its Except. Errors (an empty set, a member naming no HLO opcode, a member listed
// twice, an Except op that is not a member, a record that is neither) are printed at `user`'s
// location, with a note at the set's own def; returns false after one.
bool ExpandOps(const llvm::RecordKeeper& records, const llvm::Record* op_or_set, const llvm::Record* user,
               std::vector<const llvm::Record*>& ops);

// The C++ #includes named by CppHeader records (any file), sorted and unique.
std::vector<std::string> CppHeaders(const llvm::RecordKeeper& records);

// Backends. Each returns true on error (errors already printed at their records).
bool EmitRules(llvm::raw_ostream& os, const llvm::RecordKeeper& records);
bool EmitLayout(llvm::raw_ostream& os, const llvm::RecordKeeper& records);
bool EmitFusion(llvm::raw_ostream& os, const llvm::RecordKeeper& records);
// --gen-spmd: SpmdStrategy records (rules/base/Spmd.td) as a table of names (tables_backend.cpp).
bool EmitSpmd(llvm::raw_ostream& os, const llvm::RecordKeeper& records);
// --gen-library: LibraryPattern records (rules/base/Library.td) as a table whose rows point at
// generated functions (their constraints, then their Fn) (tables_backend.cpp).
bool EmitLibrary(llvm::raw_ostream& os, const llvm::RecordKeeper& records);
// --gen-requirements: every Requirement record (rules/base/Requirements.td) as the X-macro list
// `HLOC_REQUIREMENT(Name, "summary")`, by name, that src/engine/requirements.h makes the enum
// hloc::Requirement of (tables_backend.cpp).
bool EmitRequirements(llvm::raw_ostream& os, const llvm::RecordKeeper& records);
// Every Requirement record must be defined in rules/base/Requirements.td, the file the enum is
// generated from: one defined elsewhere would have no enumerator. Errors at the record; false
// after one.
bool CheckRequirementRecords(const llvm::RecordKeeper& records);
// `const Requirement <var>[] = {Requirement::kIsGpu, ...};` appended to `out` for the record's
// `Requires` list; returns the variable, or "nullptr" for an empty list. `prefix` goes before
// `const` ("static " or "").
std::string RequirementArray(std::string& out, const std::string& prefix, const std::string& var,
                             const llvm::Record* record);
// The file preamble shared by all backends.
void EmitPreamble(llvm::raw_ostream& os, const llvm::RecordKeeper& records, llvm::StringRef what);

}  // namespace hloc_gen
