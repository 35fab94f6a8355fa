//===- Console.cpp - pallasc's stderr, shared by threads -------*- C++ -*-===//

#include "src/Driver/Console.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/ioctl.h>
#include <unistd.h>

namespace pallasc::console {

namespace {

std::mutex &consoleMutex() {
  static std::mutex m;
  return m;
}

/// The status line now on screen ("" when none), under consoleMutex().
std::string &shownStatus() {
  static std::string s;
  return s;
}

thread_local LogCapture *innermost = nullptr;

void writeAll(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return; // the stream is gone: nothing left to tell
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void writeAll(llvm::StringRef s) {
  writeAll(STDERR_FILENO, s.data(), s.size());
}

/// The status line lives on stdout (as ninja's does): messages go to
/// stderr, which may be the same terminal or a file.
void writeStatus(llvm::StringRef s) {
  writeAll(STDOUT_FILENO, s.data(), s.size());
}

} // namespace

bool isSmartTerminal() {
  static const bool smart = [] {
    if (!isatty(STDOUT_FILENO))
      return false;
    const char *term = std::getenv("TERM");
    return term && *term && std::strcmp(term, "dumb") != 0;
  }();
  return smart;
}

unsigned terminalWidth() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return 0;
}

void write(llvm::StringRef text) {
  if (text.empty())
    return;
  std::lock_guard<std::mutex> lock(consoleMutex());
  const std::string &status = shownStatus();
  // One write per message: the status line erased, the message, the status
  // line drawn again.
  if (!status.empty())
    writeStatus("\r\x1b[K");
  std::string out = text.str();
  if (!text.ends_with("\n"))
    out += '\n';
  writeAll(out);
  if (!status.empty())
    writeStatus(status);
}

void printLine(llvm::StringRef line) {
  std::lock_guard<std::mutex> lock(consoleMutex());
  std::string out = line.str();
  if (!line.ends_with("\n"))
    out += '\n';
  writeStatus(out);
}

void setStatus(const std::string &line) {
  if (!isSmartTerminal())
    return;
  std::lock_guard<std::mutex> lock(consoleMutex());
  std::string &status = shownStatus();
  status = line;
  // Elide to the terminal width so that the line never wraps (a wrapped
  // line could not be erased with one "erase line").
  unsigned width = terminalWidth();
  if (width > 4 && status.size() >= width)
    status = status.substr(0, width - 4) + "...";
  writeStatus("\r\x1b[K" + status);
}

void finishStatus() {
  std::lock_guard<std::mutex> lock(consoleMutex());
  std::string &status = shownStatus();
  if (status.empty())
    return;
  writeStatus("\n");
  status.clear();
}

LogCapture::LogCapture() : outer(innermost) { innermost = this; }

LogCapture::~LogCapture() { innermost = outer; }

std::string LogCapture::take() {
  std::string out;
  out.swap(text);
  return out;
}

bool capturing() { return innermost != nullptr; }

void appendToCapture(llvm::StringRef line) {
  if (!innermost)
    return;
  innermost->text += line.str();
  if (!line.ends_with("\n"))
    innermost->text += '\n';
}

} // namespace pallasc::console
