//===- BoundedRead.h - Reading inputs with their size cap enforced -*- C++ -*-===//
//
// Inputs may be regular files, pipes (`yes | pallasc - ...`, `<(...)`),
// FIFOs or devices (/dev/zero). Every read here stops at the caller's cap
// while reading, so an endless input costs the cap, not the machine's
// memory; a FIFO that no process opens for writing is an error after a
// bounded wait (PALLASC_FIFO_TIMEOUT seconds, default 10) instead of a hang.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SUPPORT_BOUNDEDREAD_H
#define PALLASC_SRC_SUPPORT_BOUNDEDREAD_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace pallasc {

/// An input opened for reading: a file path, or "-" for stdin.
class InputStream {
public:
  InputStream() = default;
  ~InputStream();
  InputStream(const InputStream &) = delete;
  InputStream &operator=(const InputStream &) = delete;

  /// Opens `path`. A directory is an error; a FIFO is waited on until a
  /// writer opens it (at most fifoTimeoutSeconds()). Returns false with
  /// `error` set to the reason ("No such file or directory", "it is a
  /// directory", ...).
  bool open(const std::string &path, std::string &error);
  /// The size of a regular file (known before reading); nullopt for pipes,
  /// FIFOs and devices.
  std::optional<uint64_t> regularSize() const { return size; }
  /// Reads up to `n` bytes into `dst`; `got` < `n` only at the end of the
  /// input. Returns false with `error` set on a read error.
  bool read(void *dst, size_t n, size_t &got, std::string &error);
  /// Whether any byte is left (reads at most one).
  bool atEnd(std::string &error);

private:
  int fd = -1;
  bool ownsFd = false;
  std::optional<uint64_t> size;
  std::optional<unsigned char> pushedBack;
};

/// How long opening a FIFO waits for a writer: $PALLASC_FIFO_TIMEOUT
/// seconds (an integer), default 10.
unsigned fifoTimeoutSeconds();

/// What readBoundedInput found.
enum class ReadResult { Ok, CannotRead, TooLarge };

/// Reads all of `path` ("-": stdin) into `out`, never more than `cap` + 1
/// bytes. TooLarge: the input holds more than `cap` bytes (`size` is its
/// size when it is a regular file); CannotRead: `error` says why.
ReadResult readBoundedInput(const std::string &path, uint64_t cap,
                            std::string &out, std::optional<uint64_t> &size,
                            std::string &error);

} // namespace pallasc

#endif // PALLASC_SRC_SUPPORT_BOUNDEDREAD_H
