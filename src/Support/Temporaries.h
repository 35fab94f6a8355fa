//===- Temporaries.h - Per-invocation scratch directories ------*- C++ -*-===//
//
// Every temporary file pallasc makes lives in a scratch directory of its
// own invocation: the tool temporaries (ptxas and ld.lld inputs and logs)
// in one `$TMPDIR/pallasc-tmp-XXXXXX/`, the staged outputs in one
// `.pallasc-stage-XXXXXX/` beside their final paths (src/Driver/
// OutputFiles.h). A scratch directory
//
// - is removed with everything in it when its owner is done with it, and by
//   the signal handler (SIGINT, SIGTERM, SIGHUP, and crashes) before the
//   process dies of the signal;
// - holds a `.lock` file its owner keeps locked (flock) while it lives, so
//   that after a SIGKILL or a power loss the next invocation that makes a
//   scratch directory in the same place recognizes the orphan (its lock is
//   free) and removes it.
//
// Anything that writes files atomically (the outputs, a cache) stages them
// in a ScratchDir in the destination directory and renames them into place.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SUPPORT_TEMPORARIES_H
#define PALLASC_SRC_SUPPORT_TEMPORARIES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Program.h"

#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace pallasc {

/// Name prefixes of the scratch directories.
constexpr const char *kToolTempPrefix = "pallasc-tmp-";
constexpr const char *kStagingPrefix = ".pallasc-stage-";

/// A tool started by ScratchDir::startTool. wait() collects it; one that is
/// destroyed unwaited (the compile failed elsewhere) is killed and reaped,
/// so no child outlives the work it was for.
class RunningTool {
public:
  RunningTool() = default;
  RunningTool(RunningTool &&other) noexcept;
  RunningTool &operator=(RunningTool &&other) noexcept;
  RunningTool(const RunningTool &) = delete;
  RunningTool &operator=(const RunningTool &) = delete;
  ~RunningTool();

  /// What wait() returns when the tool ran past its time limit (it was
  /// killed; `error` says "timed out after N s").
  static constexpr int kTimedOut = -3;

  /// Waits for the tool, for at most `seconds` from now (0: no limit), then
  /// kills it. Returns its exit code; -1 with `error` set when it could not
  /// be started; -2 when it crashed (`error` says how); kTimedOut when it
  /// ran past the limit. Once.
  int wait(unsigned seconds, std::string &error);

private:
  friend class ScratchDir;
  /// Kills and reaps a tool still running.
  void reap();
  llvm::sys::ProcessInfo info;
  bool running = false;     ///< started, not yet waited for
  std::string startError;   ///< why it could not be started
};

/// A scratch directory that is private to this process.
class ScratchDir {
public:
  /// Creates `<parent>/<prefix>XXXXXX` (mode 0700) with its locked `.lock`,
  /// registered for removal on signals, after removing the orphans of dead
  /// invocations in `parent` (removeOrphanScratchDirs). Fails with the
  /// system error.
  static std::unique_ptr<ScratchDir> create(llvm::StringRef parent,
                                            llvm::StringRef prefix,
                                            std::error_code &ec);
  /// Removes the directory and everything in it.
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  const std::string &path() const { return dir; }
  /// `path()/name`.
  std::string pathFor(llvm::StringRef name) const;
  /// Creates a new, empty file `path()/<stem>-XXXXXX<suffix>`.
  std::error_code createFile(llvm::StringRef stem, llvm::StringRef suffix,
                             llvm::SmallVectorImpl<char> &path);
  /// Creates a new file `path()/<stem>-XXXXXX<suffix>` holding `contents`
  /// (every write checked: a full disk is an error, not a crash).
  std::error_code writeFile(llvm::StringRef stem, llvm::StringRef suffix,
                            llvm::StringRef contents,
                            llvm::SmallVectorImpl<char> &path);
  /// Runs `program` with `args` (args[0] included), stdout and stderr to
  /// `log`, TMPDIR set to this directory (so the tool's own temporaries land
  /// here too), for at most `seconds`. Returns what RunningTool::wait
  /// returns: its exit code, or -1 with `error` set if it could not run, -2
  /// if it crashed, RunningTool::kTimedOut if it ran past `seconds`.
  int runTool(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
              llvm::StringRef log, unsigned seconds, std::string &error);
  /// As runTool, without waiting: the tool runs while the caller goes on,
  /// and RunningTool::wait collects it. The directory must outlive it.
  class RunningTool startTool(llvm::StringRef program,
                              llvm::ArrayRef<llvm::StringRef> args,
                              llvm::StringRef log);

private:
  ScratchDir(std::string dir, int lockFd, int slot)
      : dir(std::move(dir)), lockFd(lockFd), slot(slot) {}
  std::string dir;
  int lockFd;
  int slot; ///< in the signal handler's registry, or -1
};

/// A scratch directory younger than this is never taken for an orphan: its
/// owner may not have locked it yet.
constexpr long kOrphanAgeSeconds = 5;

/// Removes the scratch directories `<parent>/<prefix>*` whose owner is gone
/// (their `.lock` can be locked) and that are older than kOrphanAgeSeconds. Only directories of this user
/// are touched. Returns how many were removed.
unsigned removeOrphanScratchDirs(llvm::StringRef parent,
                                 llvm::StringRef prefix);

/// This invocation's directory for tool temporaries, in the system
/// temporary directory ($TMPDIR, else /tmp): made on first use, removed at
/// exit (see removeToolTempDir) and on signals. Null with `error` set if it
/// cannot be made.
ScratchDir *toolTempDir(std::string &error);

/// Removes the orphan tool temporary directories in the system temporary
/// directory (pallasc calls this at start).
void removeOrphanToolTempDirs();

/// Removes the tool temporary directory now (the driver calls this before
/// it returns; static destructors would run too late for tests that check
/// TMPDIR from the same process).
void removeToolTempDir();

/// Installs the handlers that remove every live scratch directory on
/// SIGINT, SIGTERM and SIGHUP (then the process dies of the signal, as
/// before) and on crashes. Call once from main, after llvm::InitLLVM.
void installScratchCleanupOnSignals();

} // namespace pallasc

#endif // PALLASC_SRC_SUPPORT_TEMPORARIES_H
