// Reading whole input files with bounded memory, and writing output files so that a failed or
// interrupted write never leaves a truncated file behind. Every file hloc reads whole or
// writes goes through these two functions.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace hloc {

// The most bytes read from standard input, a pipe or a device: those have no size to check
// before reading (/dev/zero never ends), so reading stops there with an error. 1 GiB, or a
// quarter of HostMemoryBytes() when that is less.
uint64_t MaxStreamInputBytes();

// All bytes of `path` ("-" reads standard input). A regular file larger than the memory the
// process may allocate is refused before it is read; standard input, a pipe or a device is
// read until its end or until it passes MaxStreamInputBytes(). Errors start with `path`
// ("<stdin>" for "-"): cannot open, a directory, too large, read error.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// Writes `contents` as `path`: into a temporary file in the same folder, renamed over `path`
// once every byte is written and the file closed, so readers see the old file or the whole new
// one. On any error the temporary is removed, `path` is left as it was and the error names it.
// A `path` that exists and is not a regular file (/dev/stdout, a FIFO, /dev/null) cannot be
// replaced: it is written in place, its write errors still reported. A symbolic link is
// followed: the file it names is replaced.
// The temporary is fsync'ed before the rename and the folder after it, so a crash cannot leave
// a truncated file under `path` either.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Installs (once; only for signals whose handler is still the default) the SIGINT/SIGTERM/SIGHUP
// handler that WriteFileAtomically otherwise installs at its first write: it removes every
// temporary being written, prints one line on standard error ("hloc: interrupted (SIGINT); no
// partial file is left") and re-raises the signal, so the process ends with the signal's status
// (130 / 143 in a shell). The hloc command calls it at start; a library caller that handles
// these signals itself keeps its handlers.
void InstallInterruptCleanup();

}  // namespace hloc
