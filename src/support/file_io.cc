#include "support/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/host_memory.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxStreamBytes = uint64_t{1} << 30;
constexpr size_t kReadChunk = size_t{1} << 20;

std::string Errno() { return std::strerror(errno); }

// Closes a file descriptor when it goes out of scope (not standard input).
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd > 2) ::close(fd);
  }
};

// Reads `fd` to its end into `out`, failing once more than `limit` bytes have come.
// Reads to the end: into the room `out` already has (a regular file's reserved size), then into
// pieces of kReadChunk joined once at the end. Growing one string instead reallocates it by
// doubling while the old copy is alive, up to 3x the input at the peak (a 256 MiB stream needed
// 768 MiB, beyond a 1 GiB address-space limit once the process maps ~300 MiB of libraries).
absl::Status ReadToEnd(int fd, uint64_t limit, const std::string& name, std::string& out) {
  std::vector<std::string> pieces;
  uint64_t total = out.size();
  for (;;) {
    if (total > limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          name, ": more than ", limit, " bytes from standard input, a pipe or a device (hloc reads at most that ",
          "much from a source whose size it cannot know in advance; write the input to a file)"));
    }
    const bool into_out = pieces.empty() && out.size() < out.capacity();
    if (!into_out && (pieces.empty() || pieces.back().size() == kReadChunk)) {
      pieces.emplace_back();
      pieces.back().reserve(kReadChunk);
    }
    std::string& dst = into_out ? out : pieces.back();
    const size_t have = dst.size();
    dst.resize(into_out ? out.capacity() : kReadChunk);  // within the capacity: no reallocation
    const ssize_t n = ::read(fd, dst.data() + have, dst.size() - have);
    dst.resize(have + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::DataLossError(absl::StrCat(name, ": read error (", Errno(), ")"));
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
  }
  if (pieces.empty()) return absl::OkStatus();
  out.reserve(total);
  for (std::string& p : pieces) {
    out += p;
    std::string().swap(p);
  }
  return absl::OkStatus();
}

// ---- temporaries removed when the process is interrupted ----------------------------------------
// A write killed by SIGINT/SIGTERM/SIGHUP leaves its destination untouched; these slots let
// the signal handler remove the temporary too. Only async-signal-safe calls (unlink, signal,
// raise) run in the handler.
constexpr int kSlots = 16;
constexpr size_t kMaxTempPath = 4096;
enum SlotState : int { kFree = 0, kFilling = 1, kReady = 2 };
struct TempSlot {
  std::atomic<int> state{kFree};
  char path[kMaxTempPath];
};
TempSlot g_temps[kSlots];

// Writes a NUL-terminated string to standard error from a signal handler (write is
// async-signal-safe; iostreams and printf are not).
void SignalSafePrint(const char* text) {
  size_t n = std::strlen(text);
  while (n > 0) {
    const ssize_t w = ::write(2, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}

extern "C" void RemoveTempsAndReraise(int sig) {
  const int saved_errno = errno;
  int removed = 0;
  for (TempSlot& slot : g_temps)
    if (slot.state.load() == kReady && ::unlink(slot.path) == 0) ++removed;
  // One line: which signal, and that nothing half-written is left (outputs already renamed into
  // place are complete; the one being written is gone). The status the shell sees is the
  // signal's own (130 for SIGINT, 143 for SIGTERM), as the default action gives it.
  SignalSafePrint(sig == SIGINT ? "\nhloc: interrupted (SIGINT)" : sig == SIGTERM ? "\nhloc: terminated (SIGTERM)"
                                                                                  : "\nhloc: hung up (SIGHUP)");
  SignalSafePrint(removed > 0 ? "; the output being written was removed, no partial file is left\n"
                              : "; no partial file is left\n");
  std::signal(sig, SIG_DFL);
  errno = saved_errno;
  std::raise(sig);
}

void InstallSignalCleanupOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old;
      // Only where nobody else handles (or ignores) the signal.
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(sig, RemoveTempsAndReraise);
    }
  });
}

// Registers a temporary for removal on a signal for as long as it lives. With every slot taken
// (more concurrent writes than slots) the temporary is simply not cleaned up on a signal.
class TempRegistration {
 public:
  explicit TempRegistration(const std::string& path) {
    if (path.size() >= kMaxTempPath) return;
    InstallSignalCleanupOnce();
    for (TempSlot& slot : g_temps) {
      int expected = kFree;
      if (!slot.state.compare_exchange_strong(expected, kFilling)) continue;
      std::memcpy(slot.path, path.c_str(), path.size() + 1);
      slot.state.store(kReady);
      slot_ = &slot;
      return;
    }
  }
  ~TempRegistration() {
    if (slot_ != nullptr) slot_->state.store(kFree);
  }
  TempRegistration(const TempRegistration&) = delete;
  TempRegistration& operator=(const TempRegistration&) = delete;

 private:
  TempSlot* slot_ = nullptr;
};

// Creates the temporary `dir`/.`base`.tmp-XXXXXXXX for a write, registered for removal on a
// signal *before* it exists: registering after mkostemp left a window in which a signal found a
// temporary that no slot named (faults/f5-interrupt.test saw one left behind). A signal between
// the registration and the open finds nothing to unlink. Returns the descriptor, or -1 with errno.
int CreateRegisteredTemp(const fs::path& dir, const std::string& base, std::string* temp,
                         std::optional<TempRegistration>* registration) {
  static std::atomic<uint64_t> counter{std::random_device{}()};
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint64_t n = counter.fetch_add(0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(::getpid()) << 32);
    *temp = (dir / absl::StrCat(".", base, ".tmp-", absl::Hex(n & 0xffffffffull, absl::kZeroPad8))).string();
    registration->emplace(*temp);
    const int fd = ::open(temp->c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    const int err = errno;
    registration->reset();
    if (err != EEXIST) {
      errno = err;
      return -1;
    }
  }
  errno = EEXIST;
  return -1;
}

// Writes in pieces of kWriteChunk: a signal is handled between write calls, and one call for
// hundreds of megabytes would hold off the cleanup of an interrupted write until it returns.
constexpr size_t kWriteChunk = size_t{16} << 20;

absl::Status WriteAll(int fd, std::string_view contents) {
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, std::min(kWriteChunk, contents.size() - done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::DataLossError(n < 0 ? Errno() : "no progress");
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// /dev and /proc name devices and open files (/dev/stdout is the shell's redirection, perhaps
// to a file opened for appending): replacing them by rename would take the output away from
// whoever reads it, so they are written in place.
bool UnderDevOrProc(const std::string& path) {
  std::error_code ec;
  const std::string abs = fs::absolute(path, ec).lexically_normal().string();
  return abs.rfind("/dev/", 0) == 0 || abs.rfind("/proc/", 0) == 0;
}

// Makes the rename that put a file into `dir` durable (a crash or power loss right after it must
// not bring back the old file or an empty one). Best effort: some file systems cannot fsync a
// folder (EINVAL), which is not an error of the write.
void SyncFolder(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

absl::Status WriteInPlaceFile(const std::string& path, bool truncate, std::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0666);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "': ", Errno()));
  absl::Status s = WriteAll(fd, contents);
  const int closed = ::close(fd);
  if (s.ok() && closed != 0) s = absl::DataLossError(Errno());
  if (!s.ok()) return absl::DataLossError(absl::StrCat("write to '", path, "' failed: ", s.message()));
  return absl::OkStatus();
}

// The mode a newly created file gets (0666 less the umask), as open(O_CREAT) would give it.
mode_t NewFileMode() {
  static std::mutex mu;  // umask can only be read by setting it
  std::lock_guard<std::mutex> lock(mu);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void InstallInterruptCleanup() { InstallSignalCleanupOnce(); }

uint64_t MaxStreamInputBytes() { return std::min(kMaxStreamBytes, HostMemoryBytes() / 4); }

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const bool stdin_path = path == "-";
  const std::string name = stdin_path ? "<stdin>" : path;
  const int fd = stdin_path ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(name, ": cannot open file (", Errno(), ")"));
  FdCloser closer{stdin_path ? -1 : fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return absl::DataLossError(absl::StrCat(name, ": cannot read file (", Errno(), ")"));
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(name, ": is a directory, not a file"));
  std::string bytes;
  uint64_t limit = MaxStreamInputBytes();
  // A regular file's size is known: refuse one that cannot fit before reading anything. (Some,
  // such as those in /proc, report size 0 and are read like a stream.)
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (absl::Status s = CheckCanAllocate(size, absl::StrCat("reading ", name)); !s.ok()) return s;
    bytes.reserve(size);
    limit = std::max(limit, size);
  }
  if (absl::Status s = ReadToEnd(fd, limit, name, bytes); !s.ok()) return s;
  return bytes;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  std::error_code ec;
  std::string target = path;
  if (fs::is_symlink(path, ec)) target = fs::weakly_canonical(path, ec).string();
  if (ec || target.empty()) target = path;
  struct stat st;
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if ((exists && !S_ISREG(st.st_mode)) || UnderDevOrProc(path) || UnderDevOrProc(target)) {
    // Truncated like any output when it is a regular file (as `>` would), not when a device.
    return WriteInPlaceFile(path, exists && S_ISREG(st.st_mode), contents);
  }
  const fs::path dest(target);
  const fs::path dir = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
  std::string temp;
  std::optional<TempRegistration> registration;
  const int fd = CreateRegisteredTemp(dir, dest.filename().string(), &temp, &registration);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "': ", Errno()));
  absl::Status s = WriteAll(fd, contents);
  // The temporary is created 0600; give it the mode the replaced file had, or a new file's.
  if (s.ok() && ::fchmod(fd, exists ? (st.st_mode & 07777) : NewFileMode()) != 0) s = absl::DataLossError(Errno());
  // Every byte on the disk before the rename: the rename must never publish a file whose data a
  // crash could still lose (a zero-length or truncated file under the final name).
  if (s.ok() && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) s = absl::DataLossError(Errno());
  if (::close(fd) != 0 && s.ok()) s = absl::DataLossError(Errno());
  if (s.ok() && ::rename(temp.c_str(), target.c_str()) != 0) s = absl::DataLossError(Errno());
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return absl::DataLossError(absl::StrCat("write to '", path, "' failed: ", s.message(), " (the file is unchanged)"));
  }
  SyncFolder(dir);
  return absl::OkStatus();
}

}  // namespace hloc
