//===- Temporaries.cpp - Per-invocation scratch directories ----*- C++ -*-===//

#include "src/Support/Temporaries.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/Signals.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

namespace pallasc {

namespace {

//===----------------------------------------------------------------------===//
// Removal, safe in a signal handler
//===----------------------------------------------------------------------===//

/// Removes the files of `dir` (scratch directories hold no subdirectories)
/// and `dir` itself, with async-signal-safe calls only (open, getdents64,
/// unlinkat, rmdir).
void removeTree(const char *dir) {
#if defined(__linux__)
  struct Dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
  };
  for (int pass = 0; pass < 2; ++pass) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      return;
    alignas(8) char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
      for (long at = 0; at < n;) {
        auto *d = reinterpret_cast<Dirent64 *>(buf + at);
        at += d->reclen;
        const char *name = d->name;
        if (name[0] == '.' &&
            (name[1] == 0 || (name[1] == '.' && name[2] == 0)))
          continue;
        unlinkat(fd, name, 0);
      }
    }
    close(fd);
    if (rmdir(dir) == 0 || errno != ENOTEMPTY)
      return;
  }
#else
  // Outside Linux: the files of the directory, best effort.
  if (DIR *d = opendir(dir)) {
    while (struct dirent *e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) {
        std::string p = std::string(dir) + "/" + e->d_name;
        unlink(p.c_str());
      }
    closedir(d);
  }
  rmdir(dir);
#endif
}

//===----------------------------------------------------------------------===//
// The registry the signal handler walks
//===----------------------------------------------------------------------===//

constexpr int kSlots = 256;
std::atomic<const char *> registry[kSlots];

/// Registers `dir` (the string must outlive the registration); -1 if full.
int registerDir(const char *dir) {
  for (int i = 0; i < kSlots; ++i) {
    const char *expected = nullptr;
    if (registry[i].compare_exchange_strong(expected, dir))
      return i;
  }
  return -1;
}

void removeRegistered() {
  for (std::atomic<const char *> &slot : registry)
    if (const char *dir = slot.exchange(nullptr))
      removeTree(dir);
}

struct sigaction previousActions[NSIG];
const int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP};

/// Which interrupt signals the process was started with ignored (nohup; a
/// background job of a non-interactive shell ignores SIGINT), read before
/// main: llvm::InitLLVM installs its handlers over SIG_IGN.
bool startedIgnored[NSIG];
[[maybe_unused]] const bool recordedDispositions = [] {
  for (int sig : kInterruptSignals) {
    struct sigaction action;
    startedIgnored[sig] = sigaction(sig, nullptr, &action) == 0 &&
                          !(action.sa_flags & SA_SIGINFO) &&
                          action.sa_handler == SIG_IGN;
  }
  return true;
}();

void onInterrupt(int sig, siginfo_t *, void *) {
  removeRegistered();
  // Then whatever handled the signal before (LLVM's handler removes its
  // own files and re-raises with the default action): the process dies of
  // the signal, as its parent (make, ninja, a shell) expects.
  sigaction(sig, &previousActions[sig], nullptr);
  raise(sig);
}

void onCrash(void *) { removeRegistered(); }

/// Holds the interrupt signals back while alive, so that a directory is
/// never on disk unregistered: one that arrives meanwhile is handled when
/// this ends, after the registration (or the removal) is complete.
class InterruptsHeld {
public:
  InterruptsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (int sig : kInterruptSignals)
      sigaddset(&held, sig);
    pthread_sigmask(SIG_BLOCK, &held, &previous);
  }
  ~InterruptsHeld() { pthread_sigmask(SIG_SETMASK, &previous, nullptr); }
  InterruptsHeld(const InterruptsHeld &) = delete;
  InterruptsHeld &operator=(const InterruptsHeld &) = delete;

private:
  sigset_t previous;
};

} // namespace

//===----------------------------------------------------------------------===//
// ScratchDir
//===----------------------------------------------------------------------===//

std::unique_ptr<ScratchDir> ScratchDir::create(llvm::StringRef parent,
                                               llvm::StringRef prefix,
                                               std::error_code &ec) {
  removeOrphanScratchDirs(parent, prefix);
  llvm::SmallString<256> model(parent.empty() ? "." : parent);
  llvm::sys::path::append(model, prefix + "XXXXXX");
  std::string name(model.str());
  InterruptsHeld held;
  if (!mkdtemp(name.data())) {
    ec = std::error_code(errno, std::generic_category());
    return nullptr;
  }
  std::string lock = name + "/.lock";
  int fd = open(lock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ec = std::error_code(errno, std::generic_category());
    if (fd >= 0)
      close(fd);
    removeTree(name.c_str());
    return nullptr;
  }
  // The registry keeps a copy of the path for the signal handler, owned by
  // the registration: freed by whoever takes it out of its slot (the
  // destructor; a handler that took it first ends the process).
  char *copy = strdup(name.c_str());
  int slot = copy ? registerDir(copy) : -1;
  if (slot < 0)
    std::free(copy);
  ec = {};
  return std::unique_ptr<ScratchDir>(new ScratchDir(name, fd, slot));
}

ScratchDir::~ScratchDir() {
  InterruptsHeld held;
  if (slot >= 0)
    std::free(const_cast<char *>(registry[slot].exchange(nullptr)));
  removeTree(dir.c_str());
  close(lockFd);
}

std::string ScratchDir::pathFor(llvm::StringRef name) const {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return std::string(p.str());
}

/// Creates and opens `<base>-XXXXXX<suffix>` (XXXXXX random).
static std::error_code createUnique(const std::string &base,
                                    llvm::StringRef suffix, int &fd,
                                    llvm::SmallVectorImpl<char> &path) {
  return llvm::sys::fs::createUniqueFile(base + "-%%%%%%" + suffix, fd, path);
}

std::error_code ScratchDir::createFile(llvm::StringRef stem,
                                       llvm::StringRef suffix,
                                       llvm::SmallVectorImpl<char> &path) {
  int fd = -1;
  if (std::error_code ec = createUnique(pathFor(stem), suffix, fd, path))
    return ec;
  close(fd);
  return {};
}

std::error_code ScratchDir::writeFile(llvm::StringRef stem,
                                      llvm::StringRef suffix,
                                      llvm::StringRef contents,
                                      llvm::SmallVectorImpl<char> &path) {
  int fd = -1;
  if (std::error_code ec = createUnique(pathFor(stem), suffix, fd, path))
    return ec;
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << contents;
  os.close();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    return ec;
  }
  return {};
}

RunningTool ScratchDir::startTool(llvm::StringRef program,
                                  llvm::ArrayRef<llvm::StringRef> args,
                                  llvm::StringRef log) {
  std::vector<std::string> env;
  for (char **e = environ; e && *e; ++e)
    if (!llvm::StringRef(*e).starts_with("TMPDIR="))
      env.push_back(*e);
  env.push_back("TMPDIR=" + dir);
  llvm::SmallVector<llvm::StringRef> envRefs(env.begin(), env.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  RunningTool tool;
  bool failedToRun = false;
  tool.info = llvm::sys::ExecuteNoWait(program, args, envRefs, redirects,
                                       /*MemoryLimit=*/0, &tool.startError,
                                       &failedToRun);
  tool.running = !failedToRun && tool.info.Pid != 0;
  if (!tool.running && tool.startError.empty())
    tool.startError = "cannot run " + program.str();
  return tool;
}

int ScratchDir::runTool(llvm::StringRef program,
                        llvm::ArrayRef<llvm::StringRef> args,
                        llvm::StringRef log, unsigned seconds,
                        std::string &error) {
  return startTool(program, args, log).wait(seconds, error);
}

RunningTool::RunningTool(RunningTool &&other) noexcept
    : info(other.info), running(other.running),
      startError(std::move(other.startError)) {
  other.running = false;
}

RunningTool &RunningTool::operator=(RunningTool &&other) noexcept {
  if (this != &other) {
    reap();
    info = other.info;
    running = other.running;
    startError = std::move(other.startError);
    other.running = false;
  }
  return *this;
}

RunningTool::~RunningTool() { reap(); }

void RunningTool::reap() {
  if (!running)
    return;
  running = false;
  ::kill(info.Pid, SIGKILL);
  llvm::sys::Wait(info, /*SecondsToWait=*/std::nullopt);
}

int RunningTool::wait(unsigned seconds, std::string &error) {
  if (!running) {
    error = startError;
    return -1;
  }
  running = false;
  if (seconds) {
    // Poll for the end without reaping it (WNOWAIT: llvm::sys::Wait below
    // collects it and decodes its status), so a time-out is told apart from
    // a crash. Not sys::Wait's own limit: that one is an alarm() shared by
    // the whole process (and cancelled by every other timed wait).
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    auto pause = std::chrono::microseconds(500);
    for (;;) {
      siginfo_t status;
      status.si_pid = 0;
      int r = waitid(P_PID, static_cast<id_t>(info.Pid), &status,
                     WEXITED | WNOHANG | WNOWAIT);
      if ((r == 0 && status.si_pid != 0) || (r != 0 && errno != EINTR))
        break; // ended (or not waitable: sys::Wait reports that)
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(info.Pid, SIGKILL);
        llvm::sys::Wait(info, /*SecondsToWait=*/std::nullopt);
        error = "timed out after " + std::to_string(seconds) + " s";
        return kTimedOut;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
  }
  llvm::sys::ProcessInfo done =
      llvm::sys::Wait(info, /*SecondsToWait=*/std::nullopt, &error);
  return done.ReturnCode;
}

unsigned removeOrphanScratchDirs(llvm::StringRef parent,
                                 llvm::StringRef prefix) {
  std::string dirPath = parent.empty() ? "." : parent.str();
  DIR *d = opendir(dirPath.c_str());
  if (!d)
    return 0;
  unsigned removed = 0;
  time_t now = time(nullptr);
  while (struct dirent *e = readdir(d)) {
    if (!llvm::StringRef(e->d_name).starts_with(prefix))
      continue;
    std::string path = dirPath + "/" + e->d_name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid() || now - st.st_mtime < kOrphanAgeSeconds)
      continue;
    std::string lock = path + "/.lock";
    int fd = open(lock.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
      continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      removeTree(path.c_str());
      ++removed;
    }
    close(fd);
  }
  closedir(d);
  return removed;
}

//===----------------------------------------------------------------------===//
// The tool temporary directory and the signal handlers
//===----------------------------------------------------------------------===//

namespace {
std::mutex toolTempMutex;
std::unique_ptr<ScratchDir> toolTemp;
} // namespace

static std::string systemTempDir() {
  llvm::SmallString<256> parent;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, parent);
  return std::string(parent.str());
}

void removeOrphanToolTempDirs() {
  removeOrphanScratchDirs(systemTempDir(), kToolTempPrefix);
}

ScratchDir *toolTempDir(std::string &error) {
  std::lock_guard<std::mutex> guard(toolTempMutex);
  if (toolTemp)
    return toolTemp.get();
  std::string parent = systemTempDir();
  std::error_code ec;
  toolTemp = ScratchDir::create(parent, kToolTempPrefix, ec);
  if (!toolTemp)
    error = "cannot create a temporary directory in " + parent + ": " +
            ec.message();
  return toolTemp.get();
}

void removeToolTempDir() {
  std::lock_guard<std::mutex> guard(toolTempMutex);
  toolTemp.reset();
}

void installScratchCleanupOnSignals() {
  for (int sig : kInterruptSignals) {
    if (startedIgnored[sig]) {
      // An ignored signal stays ignored, by LLVM's handler too.
      signal(sig, SIG_IGN);
      continue;
    }
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_sigaction = onInterrupt;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(sig, nullptr, &previousActions[sig]) != 0)
      continue;
    sigaction(sig, &action, nullptr);
  }
  llvm::sys::AddSignalHandler(onCrash, nullptr);
}

} // namespace pallasc
