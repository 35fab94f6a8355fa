//===- Console.h - pallasc's stderr, shared by threads ---------*- C++ -*-===//
//
// Everything pallasc prints to stderr (diagnostics through the spdlog
// logger, -v steps, --timing reports, a batch build's progress) goes through
// here, one whole message at a time under one lock, so that the messages of
// parallel compile jobs never interleave within a line. When stdout is a
// terminal, a batch build keeps a status line there (`[3/24] matmul
// cuda:sm_90a`, as ninja does) below the messages: it is erased before each
// message and drawn again after it.
//
// A job of a batch build captures what its thread logs (LogCapture) and
// prints it as one block when the job ends, as ninja does with the output
// of a command.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_CONSOLE_H
#define PALLASC_SRC_DRIVER_CONSOLE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pallasc::console {

/// Writes `text` (whole lines) to stderr, below the messages so far and above
/// the status line.
void write(llvm::StringRef text);

/// True when stdout is a terminal that understands "erase line" (TERM is
/// set and not "dumb"): a status line can be redrawn in place.
bool isSmartTerminal();

/// Writes `line` (and a newline) to stdout, in order with the messages.
void printLine(llvm::StringRef line);

/// The width of the terminal on stdout, or 0 when unknown.
unsigned terminalWidth();

/// Shows `line` as the status line (on a smart terminal; elsewhere this does
/// nothing), replacing the previous one.
void setStatus(const std::string &line);

/// Leaves the status line as it is, ends it with a newline and stops
/// redrawing it.
void finishStatus();

/// While alive, what the logger receives on this thread (errors, warnings,
/// notes; not -v step lines, which are printed as they happen) is collected
/// here instead of being printed.
class LogCapture {
public:
  LogCapture();
  ~LogCapture();
  LogCapture(const LogCapture &) = delete;
  LogCapture &operator=(const LogCapture &) = delete;
  /// The lines captured so far (each ending with '\n'), and clears them.
  std::string take();

private:
  std::string text;
  LogCapture *outer;
  friend void appendToCapture(llvm::StringRef line);
  friend bool capturing();
};

/// True while a LogCapture is alive on this thread.
bool capturing();

/// Appends a line to this thread's innermost LogCapture.
void appendToCapture(llvm::StringRef line);

} // namespace pallasc::console

#endif // PALLASC_SRC_DRIVER_CONSOLE_H
