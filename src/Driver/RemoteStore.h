//===- RemoteStore.h - The compile cache on an HTTP server -----*- C++ -*-===//
//
// `--cache-dir http://HOST:PORT/PREFIX`: the compile cache's entries kept on
// a server speaking Bazel's HTTP cache protocol (whole blobs by GET and PUT
// under PREFIX/ac/KEY; e.g. nginx with WebDAV, bazel-remote), so CI
// machines share compiles. The entries are the local cache's (see Cache.h)
// and are checked whole on read. Requests are bounded in time and size; the
// first failure of the server marks the store down for the rest of the
// process (the compiles then run without it). libcurl does the HTTP.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_REMOTESTORE_H
#define PALLASC_SRC_DRIVER_REMOTESTORE_H

#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace pallasc {

/// Default bound of one request, in seconds (PALLASC_CACHE_TIMEOUT).
constexpr double kDefaultRemoteCacheTimeout = 10;

class RemoteStore {
public:
  /// Whether a --cache-dir names a server rather than a directory.
  static bool isUrl(llvm::StringRef location);

  /// `base`: the URL without a trailing slash. `timeoutSeconds` bounds each
  /// request (connecting included); `maxBytes` bounds what a GET accepts.
  RemoteStore(std::string base, double timeoutSeconds, uint64_t maxBytes);

  enum class Result { Found, Missing, Failed };
  /// GET BASE/ac/KEY. Found: `body` holds the blob. Missing: the server has
  /// none (404). Failed: `why` says what went wrong, and the store is down.
  Result get(llvm::StringRef key, std::string &body, std::string &why);
  /// PUT BASE/ac/KEY. False (with `why`) on failure; the store is then down.
  bool put(llvm::StringRef key, llvm::StringRef body, std::string &why);

  /// After a failure, every request fails at once.
  bool isDown() const { return down.load(); }
  /// True exactly once, for the first failure's caller: the one that warns.
  bool claimFailureReport() { return down.load() && !reported.exchange(true); }
  const std::string &url() const { return base; }
  std::string urlOf(llvm::StringRef key) const;

private:
  std::string base;
  long timeoutMs;
  uint64_t maxBytes;
  std::atomic<bool> down{false}, reported{false};
};

/// The time bound of remote cache requests: PALLASC_CACHE_TIMEOUT (seconds,
/// > 0) or the default. False for a malformed value (`text` holds it).
bool remoteCacheTimeout(double &seconds, std::string &text);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_REMOTESTORE_H
