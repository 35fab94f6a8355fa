//===- CompileStage.h - Named compile steps, internal errors ---*- C++ -*-===//
//
// A compilation is a sequence of named steps (the transforms, each target's
// GPU lowering, NVPTX/AMDGPU code generation, ptxas, ld.lld, ...). A
// CompileStage object marks the step running on this thread: an internal
// error inside it (an LLVM
// `report_fatal_error`, an out-of-memory in LLVM, a crash signal) is reported
// as
//
//   error: internal compiler error in <stage> for <target>: <message>
//
// with exit code 3 and no backtrace (one is printed with -v or with
// PALLASC_CRASH_DIAGNOSTICS=1 in the environment). Outputs are staged in
// memory and temporary files until the end, so such an exit leaves none.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SUPPORT_COMPILESTAGE_H
#define PALLASC_SRC_SUPPORT_COMPILESTAGE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pallasc {

/// Marks the compile step running on this thread while it is alive, for the
/// message of an internal error in it; steps nest (the innermost names the
/// error). Timing and -v's step lines are src/Driver/Timing.h's Step.
class CompileStage {
public:
  CompileStage(llvm::StringRef stage, llvm::StringRef target = "");
  ~CompileStage();
  CompileStage(const CompileStage &) = delete;
  CompileStage &operator=(const CompileStage &) = delete;

private:
  /// The enclosing step's names, restored when this one ends.
  char savedStage[96], savedTarget[48];
};

/// Installs the handlers that turn LLVM fatal errors, LLVM's out-of-memory
/// reports and crash signals into an internal-compiler-error line and exit
/// code 3 (also installs what llvm::InitLLVM would: the SIGPIPE exit and the
/// `new` out-of-memory handler). Call once, first thing in main, instead of
/// llvm::InitLLVM. Backtraces are on when PALLASC_CRASH_DIAGNOSTICS is set
/// to anything but "" or "0".
void installInternalErrorHandlers(const char *argv0);

/// Turns the backtrace after an internal error on or off (`-v` turns it on).
void setInternalErrorBacktraces(bool enabled);

/// The message of an internal error in the current step:
/// "internal compiler error in STAGE for TARGET: MESSAGE" ("in STAGE" alone
/// without a target, "internal compiler error: MESSAGE" outside any step).
std::string internalErrorMessage(llvm::StringRef message);

} // namespace pallasc

#endif // PALLASC_SRC_SUPPORT_COMPILESTAGE_H
