//===- CompileStage.cpp - Named compile steps, internal errors -*- C++ -*-===//

#include "src/Support/CompileStage.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

namespace pallasc {

namespace {

/// The innermost step of this thread. Fixed buffers: the crash-signal
/// handler reads them and must not allocate.
thread_local char currentStage[96];
thread_local char currentTarget[48];

std::atomic<bool> backtraces{false};

/// Exit code of an internal error (kExitInternalError in the driver).
constexpr int kInternalErrorExit = 3;

constexpr char kBacktraceNote[] =
    "note: run with -v, or with PALLASC_CRASH_DIAGNOSTICS=1 in the "
    "environment, for a backtrace\n";

template <size_t N> void copyName(char (&dst)[N], llvm::StringRef src) {
  size_t n = std::min(src.size(), N - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = 0;
}

/// Appends `s` to the fixed buffer (async-signal-safe).
void append(char *buf, size_t cap, size_t &len, const char *s) {
  while (*s && len + 1 < cap)
    buf[len++] = *s++;
  buf[len] = 0;
}

/// "error: internal compiler error in STAGE for TARGET: " into `buf`.
size_t formatPrefix(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  append(buf, cap, len, "error: internal compiler error");
  if (currentStage[0]) {
    append(buf, cap, len, " in ");
    append(buf, cap, len, currentStage);
    if (currentTarget[0]) {
      append(buf, cap, len, " for ");
      append(buf, cap, len, currentTarget);
    }
  }
  append(buf, cap, len, ": ");
  return len;
}

void writeAll(const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(2, data, size);
    if (n <= 0)
      return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

[[noreturn]] void reportAndExit(const char *reason) {
  std::fflush(stdout);
  // Backend messages can hold a whole DAG dump after their first line
  // ("Cannot select: ..."): that part only with the diagnostics on.
  llvm::StringRef full(reason ? reason : "");
  auto [first, rest] = full.split('\n');
  std::string text = "error: " + internalErrorMessage(first) + "\n";
  if (backtraces.load() && !rest.trim().empty())
    text += rest.rtrim().str() + "\n";
  writeAll(text.data(), text.size());
  if (backtraces.load())
    llvm::sys::PrintStackTrace(llvm::errs());
  else
    writeAll(kBacktraceNote, sizeof(kBacktraceNote) - 1);
  // Removes the files registered with RemoveFileOnSignal, as LLVM's own
  // fatal-error path does.
  llvm::sys::RunInterruptHandlers();
  _exit(kInternalErrorExit);
}

void onFatalError(void *, const char *reason, bool) { reportAndExit(reason); }

void onBadAlloc(void *, const char *reason, bool) {
  // Nothing may allocate here.
  char buf[256];
  size_t len = formatPrefix(buf, sizeof(buf));
  append(buf, sizeof(buf), len, "out of memory (");
  append(buf, sizeof(buf), len, reason ? reason : "allocation failed");
  append(buf, sizeof(buf), len, ")\n");
  writeAll(buf, len);
  _exit(kInternalErrorExit);
}

/// Runs inside LLVM's handler of SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
/// SIGTRAP (on the alternate signal stack): async-signal-safe only, except
/// for the backtrace LLVM prints the same way.
void onCrashSignal(void *) {
  char buf[256];
  size_t len = formatPrefix(buf, sizeof(buf));
  append(buf, sizeof(buf), len, "the compiler crashed (fatal signal)\n");
  writeAll(buf, len);
  if (backtraces.load())
    llvm::sys::PrintStackTrace(llvm::errs());
  else
    writeAll(kBacktraceNote, sizeof(kBacktraceNote) - 1);
  _exit(kInternalErrorExit);
}

} // namespace

CompileStage::CompileStage(llvm::StringRef stage, llvm::StringRef target) {
  std::memcpy(savedStage, currentStage, sizeof(savedStage));
  std::memcpy(savedTarget, currentTarget, sizeof(savedTarget));
  copyName(currentStage, stage);
  copyName(currentTarget, target);
}

CompileStage::~CompileStage() {
  std::memcpy(currentStage, savedStage, sizeof(savedStage));
  std::memcpy(currentTarget, savedTarget, sizeof(savedTarget));
}

std::string internalErrorMessage(llvm::StringRef message) {
  char buf[256];
  size_t len = formatPrefix(buf, sizeof(buf));
  // Without the leading "error: ".
  std::string text(buf + 7, len - 7);
  return text + llvm::StringRef(message).rtrim(" \n.").str();
}

void installInternalErrorHandlers(const char *argv0) {
  (void)argv0;
  // What llvm::InitLLVM does, without its stack printer: a closed pipe on
  // stdout/stderr ends the process quietly; `new` failures report through
  // the bad-alloc handler below.
  llvm::sys::SetOneShotPipeSignalFunction(
      llvm::sys::DefaultOneShotPipeSignalHandler);
  llvm::install_out_of_memory_new_handler();
  llvm::install_fatal_error_handler(onFatalError, nullptr);
  llvm::install_bad_alloc_error_handler(onBadAlloc, nullptr);
  llvm::sys::AddSignalHandler(onCrashSignal, nullptr);
  if (auto env = llvm::sys::Process::GetEnv("PALLASC_CRASH_DIAGNOSTICS"))
    backtraces = !env->empty() && *env != "0";
}

void setInternalErrorBacktraces(bool enabled) {
  if (enabled)
    backtraces = true;
}

} // namespace pallasc
