//===- Cache.h - The content-addressed compile cache -----------*- C++ -*-===//
//
// `--cache-dir DIR` (or PALLASC_CACHE_DIR): whole compile results stored
// under a key that hashes everything that can change their bytes (see
// compileCacheKey). A hit writes the same files a miss would, through the
// same atomic commit (OutputFiles), so the two are byte-identical.
//
// The directory is shared by concurrent processes (and the threads of a
// batch build) without a lock on the hot path:
//   DIR/CACHEDIR.TAG       marks the directory as a cache (backup tools skip it)
//   DIR/entries/ab/ab...   one file per entry: header (magic, key, payload
//                          size and xxh3-128) + payload (the named files);
//                          written to a temporary file and renamed into place
//   DIR/stats              counters, updated under flock(2)
//   DIR/fingerprints       memo of toolchain file contents by file identity
// A lookup reads one entry and checks it whole: a corrupt or truncated
// entry is removed and the compile runs again. A hit marks the entry used
// (its mtime); when a store takes the cache past its size bound, the least
// recently used entries are evicted down to 90% of it. docs/cache.md has the
// user's view.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_CACHE_H
#define PALLASC_SRC_DRIVER_CACHE_H

#include "src/Driver/Driver.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace pallasc {

namespace runtime {
class JitObjectCache;
} // namespace runtime

struct CompiledFile;
class RemoteStore;

/// What an entry holds: a compilation's files and its name (the spec's, or
/// --name: the depfile is named after it).
struct CacheEntry {
  std::string name;
  std::vector<CompiledFile> files;
};

/// 1 GiB, unless --cache-max-size / PALLASC_CACHE_MAX_SIZE say otherwise.
constexpr uint64_t kDefaultCacheMaxBytes = 1ull << 30;

/// Parses a size: a number of bytes, optionally with a K, M or G suffix
/// (powers of 1024; "KiB"/"MiB"/"GiB" too). False for anything else.
bool parseByteSize(llvm::StringRef text, uint64_t &bytes);

/// "3.4 MiB", "812 B".
std::string formatByteSize(uint64_t bytes);

/// The cache directory and size bound of a command: the command line's
/// (--cache-dir, --no-cache, --cache-max-size) over the environment's
/// (PALLASC_CACHE_DIR, PALLASC_CACHE_MAX_SIZE). Returns false after
/// printing an error for a malformed size; `settings.directory` is empty
/// when there is no cache.
bool resolveCacheSettings(CacheSettings &settings);

/// What the key of a compile is made of besides the compile's own inputs
/// and options: the versions and contents of every program, library and
/// data file that can change the bytes, and the environment variables that
/// choose them. gatherToolchain() finds them; tests build their own.
struct Toolchain {
  std::string pallascVersion, llvmVersion;
  /// Content fingerprints of this executable and every shared library it
  /// loaded (libMLIR, libLLVM, ...), in load order.
  std::vector<std::string> selfFingerprints;
  /// Named parts: "env CUDA_HOME", "ptxas" (path), "ptxas content", ...
  std::vector<std::pair<std::string, std::string>> parts;
};

class CompileCache;

/// The toolchain a compile for `targets` uses (ptxas and libdevice for
/// cuda, ld.lld and the device libraries for rocm, the host triple for cpu),
/// with contents fingerprinted through `cache`'s memo.
Toolchain gatherToolchain(CompileCache &cache,
                          const std::vector<std::string> &targets);

/// The key of a compile: "compile", the toolchain, the kernel and spec
/// bytes and file names (the manifest records the names), and every option
/// that changes an output (targets in order, --emit, transforms, -O, code
/// object version, --name, and `outputFile`: the file `-o FILE` names, see
/// resolveOutputPath). Not the output directory or the depfile (a hit
/// writes them afresh), nor -v/-q/--timing. 64 hex digits.
std::string compileCacheKey(const DriverOptions &options,
                            llvm::StringRef kernelText,
                            llvm::StringRef specText,
                            const Toolchain &toolchain,
                            llvm::StringRef outputFile = "");

/// True when `options` may use the cache (there is one, and the compile
/// prints nothing but its result: not --print-ir-after-all).
bool cacheable(const DriverOptions &options);

/// Counters of one cache directory.
struct CacheStats {
  uint64_t entries = 0, bytes = 0; ///< from a scan of the entries
  uint64_t maxBytes = 0;
  uint64_t hits = 0, misses = 0, stores = 0, corrupt = 0, evicted = 0;
};

/// A cache directory, shared by the threads of this process and by other
/// processes.
class CompileCache {
public:
  /// Opens the cache in `settings.directory`, creating it if needed. When it
  /// cannot be used, warns (the compile then runs without it) and returns
  /// nullptr.
  static std::unique_ptr<CompileCache> open(const CacheSettings &settings);
  /// Adds this process's counters to DIR/stats.
  ~CompileCache();
  CompileCache(const CompileCache &) = delete;
  CompileCache &operator=(const CompileCache &) = delete;

  const std::string &directory() const { return dir; }
  /// Whether the entries are on an HTTP server (--cache-dir http://...).
  bool isRemote() const { return remote != nullptr; }

  /// A fingerprint of the contents of the file at `path` (xxh3-128 of its
  /// bytes, memoized by device, inode, size, mtime and ctime), or "absent".
  std::string fingerprint(llvm::StringRef path);

  /// The files stored under `key`, or nullopt (a miss). An entry that does
  /// not check out (truncated, corrupt, another key) is removed, with a
  /// warning, and is a miss.
  std::optional<CacheEntry> lookup(llvm::StringRef key);
  /// Stores `files` under `key`, atomically; then evicts least recently
  /// used entries while the cache is over its bound. A failure is a warning:
  /// the compile itself has succeeded.
  void store(llvm::StringRef key, const CacheEntry &entry);

  /// The counters of `directory` (entries and bytes from a scan).
  static CacheStats stats(const CacheSettings &settings);
  /// Removes every entry and zeroes the counters.
  static llvm::LogicalResult clear(const CacheSettings &settings);

private:
  explicit CompileCache(const CacheSettings &settings);
  std::string entryPath(llvm::StringRef key) const;
  std::optional<CacheEntry> lookupRemote(llvm::StringRef key);
  /// Adds the counters so far (and `addedBytes`) to DIR/stats under its
  /// lock, evicting when over the bound.
  void flushCounters(int64_t addedBytes);

  std::string dir; ///< the directory, or the server's URL
  uint64_t maxBytes;
  /// The server holding the entries, when there is one: then nothing is
  /// kept locally (no counters, the fingerprint memo in memory only).
  std::unique_ptr<RemoteStore> remote;
  std::atomic<uint64_t> hits{0}, misses{0}, stores{0}, corrupt{0};
  std::mutex mutex; ///< guards the fingerprint memo and flushes
  bool memoLoaded = false;
  std::map<std::string, std::string> memo; ///< identity -> fingerprint
};

/// The key of a JIT compilation's object code (pallasc run): "jit", the
/// toolchain's versions and self fingerprints (this executable and its
/// libraries hold the lowering and LLVM), the host (runtime::
/// jitHostIdentity: triple, CPU, features, LLVM version), `purpose` (which
/// lowering and optimization levels produce the object from the module),
/// and `moduleText`, the module before that lowering (generic form, with
/// locations). 64 hex digits.
std::string jitCacheKey(const Toolchain &toolchain, llvm::StringRef purpose,
                        llvm::StringRef host, llvm::StringRef moduleText);

/// pallasc run's JIT object cache for `module` (before its lowering), in
/// the compile cache of `options` (the same directory, entries, bound and
/// counters: an entry holds one file, "jit.o"). Null when the run has no
/// cache or is not cacheable (cacheable()). `purpose`: see jitCacheKey.
std::unique_ptr<runtime::JitObjectCache>
openJitObjectCache(const DriverOptions &options, mlir::ModuleOp module,
                   llvm::StringRef purpose);

/// The serialized form of an entry's payload, and back (false on anything
/// malformed). Exposed for the unit tests.
std::string encodeCacheEntry(llvm::StringRef key, const CacheEntry &entry);
bool decodeCacheEntry(llvm::StringRef bytes, llvm::StringRef key,
                      CacheEntry &entry, std::string &why);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_CACHE_H
