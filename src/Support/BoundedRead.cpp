//===- BoundedRead.cpp - Reading inputs with their size cap enforced -*- C++ -*-===//

#include "src/Support/BoundedRead.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pallasc {

unsigned fifoTimeoutSeconds() {
  if (const char *v = std::getenv("PALLASC_FIFO_TIMEOUT")) {
    char *end = nullptr;
    unsigned long n = std::strtoul(v, &end, 10);
    if (end != v && *end == 0 && n <= 3600)
      return static_cast<unsigned>(n);
  }
  return 10;
}

InputStream::~InputStream() {
  if (ownsFd && fd >= 0)
    ::close(fd);
}

bool InputStream::open(const std::string &path, std::string &error) {
  if (path == "-") {
    fd = STDIN_FILENO;
    ownsFd = false;
  } else {
    // O_NONBLOCK: opening a FIFO must not block until a writer comes.
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      error = std::strerror(errno);
      return false;
    }
    ownsFd = true;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    error = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "it is a directory";
    return false;
  }
  if (S_ISREG(st.st_mode))
    size = static_cast<uint64_t>(st.st_size);
  if (S_ISFIFO(st.st_mode)) {
    // A FIFO without a writer reads as empty and polls as nothing: wait a
    // bounded time for the first byte or the writer's close.
    struct pollfd p = {fd, POLLIN, 0};
    int timeout = static_cast<int>(fifoTimeoutSeconds()) * 1000;
    int n;
    do
      n = poll(&p, 1, timeout);
    while (n < 0 && errno == EINTR);
    if (n == 0) {
      error = "it is a FIFO that no process opened for writing within " +
              std::to_string(fifoTimeoutSeconds()) +
              " s (the wait is set by PALLASC_FIFO_TIMEOUT)";
      return false;
    }
  }
  // From here on, blocking reads (a pipe's writer may be slow).
  if (ownsFd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
      fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  return true;
}

bool InputStream::read(void *dst, size_t n, size_t &got, std::string &error) {
  auto *out = static_cast<unsigned char *>(dst);
  got = 0;
  if (n > 0 && pushedBack) {
    out[got++] = *pushedBack;
    pushedBack.reset();
  }
  while (got < n) {
    ssize_t r = ::read(fd, out + got, n - got);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
      if (errno == EAGAIN) {
        // stdin may be non-blocking: wait for data.
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, -1);
      }
      continue;
    }
    if (r < 0) {
      error = std::strerror(errno);
      return false;
    }
    if (r == 0)
      break;
    got += static_cast<size_t>(r);
  }
  return true;
}

bool InputStream::atEnd(std::string &error) {
  if (pushedBack)
    return false;
  unsigned char c;
  size_t got = 0;
  if (!read(&c, 1, got, error))
    return false;
  if (got == 0)
    return true;
  pushedBack = c;
  return false;
}

ReadResult readBoundedInput(const std::string &path, uint64_t cap,
                            std::string &out, std::optional<uint64_t> &size,
                            std::string &error) {
  InputStream in;
  if (!in.open(path, error))
    return ReadResult::CannotRead;
  size = in.regularSize();
  if (size && *size > cap)
    return ReadResult::TooLarge;
  out.clear();
  // A regular file is read at its size (plus one byte, in case it grew);
  // anything else in chunks, up to the cap plus one byte.
  constexpr size_t kChunk = 1 << 20;
  while (true) {
    size_t want = size ? static_cast<size_t>(*size) + 1 - out.size() : kChunk;
    if (want == 0)
      want = kChunk;
    uint64_t room = cap + 1 - out.size();
    if (want > room)
      want = static_cast<size_t>(room);
    size_t old = out.size(), got = 0;
    out.resize(old + want);
    if (!in.read(out.data() + old, want, got, error)) {
      out.clear();
      return ReadResult::CannotRead;
    }
    out.resize(old + got);
    if (out.size() > cap) {
      out.clear();
      out.shrink_to_fit();
      return ReadResult::TooLarge;
    }
    if (got < want)
      return ReadResult::Ok;
  }
}

} // namespace pallasc
