//===- Cache.cpp - The content-addressed compile cache ---------*- C++ -*-===//

#include "src/Driver/Cache.h"

#include "src/Driver/Console.h"
#include "src/Driver/Diagnostics.h"
#include "src/Driver/Frontend.h"
#include "src/Driver/OutputFiles.h"
#include "src/Driver/RemoteStore.h"
#include "src/Driver/TargetRegistry.h"
#include "src/Runtime/HostCode.h"
#include "src/Version.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>
#include <fcntl.h>
#include <link.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace pallasc {

//===----------------------------------------------------------------------===//
// Settings
//===----------------------------------------------------------------------===//

bool parseByteSize(llvm::StringRef text, uint64_t &bytes) {
  text = text.trim();
  size_t digits = 0;
  while (digits < text.size() && llvm::isDigit(text[digits]))
    ++digits;
  if (digits == 0)
    return false;
  uint64_t value = 0;
  if (text.substr(0, digits).getAsInteger(10, value))
    return false;
  llvm::StringRef suffix = text.substr(digits).trim();
  uint64_t scale = 1;
  if (!suffix.empty()) {
    char unit = llvm::toUpper(suffix.front());
    llvm::StringRef rest = suffix.drop_front();
    if (unit == 'B' && rest.empty())
      scale = 1;
    else if (unit == 'K' || unit == 'M' || unit == 'G' || unit == 'T') {
      if (!rest.empty() && !rest.equals_insensitive("B") &&
          !rest.equals_insensitive("iB"))
        return false;
      scale = unit == 'K'   ? 1ull << 10
              : unit == 'M' ? 1ull << 20
              : unit == 'G' ? 1ull << 30
                            : 1ull << 40;
    } else {
      return false;
    }
  }
  if (__builtin_mul_overflow(value, scale, &bytes))
    return false;
  return true;
}

std::string formatByteSize(uint64_t bytes) {
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.1f ", v) << units[u];
  return s;
}

bool resolveCacheSettings(CacheSettings &settings) {
  if (settings.disabled) {
    settings.directory.clear();
  } else if (settings.directory.empty()) {
    if (auto env = llvm::sys::Process::GetEnv("PALLASC_CACHE_DIR"))
      settings.directory = *env;
  }
  std::string size = settings.maxSize;
  const char *from = "--cache-max-size";
  if (size.empty()) {
    if (auto env = llvm::sys::Process::GetEnv("PALLASC_CACHE_MAX_SIZE");
        env && !env->empty()) {
      size = *env;
      from = "PALLASC_CACHE_MAX_SIZE";
    }
  }
  settings.maxBytes = kDefaultCacheMaxBytes;
  if (!size.empty() && !parseByteSize(size, settings.maxBytes)) {
    logError(std::string("error: ") + from +
             ": expected a size in bytes, optionally with a K, M or G "
             "suffix (e.g. 500M), got '" +
             size + "'");
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The key
//===----------------------------------------------------------------------===//

namespace {

/// SHA-256 over named, length-prefixed parts: no two different part lists
/// hash the same bytes.
class KeyHasher {
public:
  void add(llvm::StringRef name, llvm::StringRef value) {
    hash.update(name);
    hash.update(llvm::StringRef("\0", 1));
    std::string length = std::to_string(value.size());
    hash.update(length);
    hash.update(llvm::StringRef("\0", 1));
    hash.update(value);
  }
  std::string finish() {
    std::array<uint8_t, 32> digest = hash.final();
    return llvm::toHex(digest, /*LowerCase=*/true);
  }

private:
  llvm::SHA256 hash;
};

/// This executable and the shared objects it loaded, in load order.
const std::vector<std::string> &loadedObjects() {
  static const std::vector<std::string> objects = [] {
    std::vector<std::string> list;
    llvm::SmallString<256> self;
    if (!fs::real_path("/proc/self/exe", self))
      list.push_back(std::string(self));
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
          auto *out = static_cast<std::vector<std::string> *>(data);
          // The executable itself has an empty name; the vDSO has no file.
          if (info->dlpi_name && *info->dlpi_name &&
              fs::exists(info->dlpi_name))
            out->push_back(info->dlpi_name);
          return 0;
        },
        &list);
    return list;
  }();
  return objects;
}

std::string envValue(const char *name) {
  if (auto v = llvm::sys::Process::GetEnv(name))
    return "=" + *v;
  return "<unset>";
}

} // namespace

Toolchain gatherToolchain(CompileCache &cache,
                          const std::vector<std::string> &targets) {
  Toolchain t;
  t.pallascVersion = PALLASC_VERSION_STRING;
  t.llvmVersion = LLVM_VERSION_STRING;
  for (const std::string &object : loadedObjects())
    t.selfFingerprints.push_back(cache.fingerprint(object));
  // The variables that choose the tools and libraries below.
  for (const char *var :
       {"CUDA_HOME", "PTXAS", "ROCM_PATH", "PALLASC_LD_LLD",
        "PALLASC_EXPLICIT_TOOLS"})
    t.parts.push_back({std::string("env ") + var, envValue(var)});
  // What each requested kind's outputs depend on (src/Driver/TargetRegistry).
  for (const TargetKind &kind : targetKinds())
    if (kind.addToolchain && hasTargetOf(kind, targets))
      kind.addToolchain(cache, t);
  return t;
}

// A new field of DriverOptions must be considered for the key below: either
// hashed (it changes an output) or named here as not (it does not). This
// assertion fails when the struct changes size, to make that choice
// explicit.
#if defined(__x86_64__) && defined(__GLIBCXX__) && !defined(_GLIBCXX_DEBUG)
static_assert(sizeof(DriverOptions) == 504,
              "DriverOptions changed: decide whether the new field belongs "
              "in compileCacheKey, then update this size");
#endif

/// What every key holds of the toolchain: the versions, the loaded code's
/// fingerprints and the back ends' parts.
static void addToolchain(KeyHasher &h, const Toolchain &toolchain) {
  h.add("pallasc version", toolchain.pallascVersion);
  h.add("llvm version", toolchain.llvmVersion);
  for (const std::string &f : toolchain.selfFingerprints)
    h.add("loaded object", f);
  for (const auto &[name, value] : toolchain.parts)
    h.add(name, value);
}

std::string compileCacheKey(const DriverOptions &options,
                            llvm::StringRef kernelText,
                            llvm::StringRef specText,
                            const Toolchain &toolchain,
                            llvm::StringRef outputFile) {
  KeyHasher h;
  h.add("output file", outputFile);
  h.add("kind", "pallasc.compile/v1");
  addToolchain(h, toolchain);
  // The manifest records the input file names (not their directories).
  h.add("kernel name", path::filename(options.kernelPath));
  h.add("kernel", kernelText);
  h.add("spec name", path::filename(options.specPath));
  h.add("spec", specText);
  for (const std::string &t : options.targets)
    h.add("target", t);
  for (const std::string &e : options.emit)
    h.add("emit", e);
  for (const spec::Transform &t : options.extraTransforms) {
    h.add("transform", transformToPassPipeline(t));
    h.add("transform flag", t.path);
  }
  h.add("O", std::to_string(options.optLevel));
  h.add("code object version", std::to_string(options.rocmCodeObjectVersion));
  h.add("name", options.name);
  h.add("strict fp", options.strictFloat ? "1" : "0");
  // Not in the key: outputDir, the directory of outputPath (the file name
  // is the caller's `outputFile`), the depfile and its options (written
  // afresh around the cached files), spillsAreErrors (a compile that
  // spills warns or fails, neither is stored; one that does not spill is
  // the same either way), verbosity, timing, the cache settings
  // themselves; printIRAfterAll and --debug-internal-error compiles are
  // not cached (cacheable()); symbolShapes, symbolValues and runTarget (set
  // by `pallasc run` only, whose JIT cache keys on the module: the symbolic
  // one, on the CPU and the emulators alike).
  return h.finish();
}

std::string jitCacheKey(const Toolchain &toolchain, llvm::StringRef purpose,
                        llvm::StringRef host, llvm::StringRef moduleText) {
  KeyHasher h;
  h.add("kind", "pallasc.jit/v1");
  addToolchain(h, toolchain);
  h.add("purpose", purpose);
  h.add("host", host);
  h.add("module", moduleText);
  return h.finish();
}

namespace {
constexpr llvm::StringLiteral kJitObjectName = "jit.o";

class JitObjectCacheEntry : public runtime::JitObjectCache {
public:
  JitObjectCacheEntry(std::unique_ptr<CompileCache> cache, std::string key)
      : cache(std::move(cache)), key(std::move(key)) {}

  std::optional<std::string> load() override {
    std::optional<CacheEntry> entry = cache->lookup(key);
    if (!entry)
      return std::nullopt;
    // The key says it was stored by store() below: anything else is a
    // pallasc bug, not damage.
    if (entry->files.size() != 1 || entry->files[0].name != kJitObjectName)
      return std::nullopt;
    return std::move(entry->files[0].contents);
  }
  void store(llvm::StringRef object) override {
    CompiledFile file{std::string(kJitObjectName), object.str()};
    cache->store(key, {"jit", {file}});
  }
  void warn(llvm::StringRef message) override {
    spdlog::warn("{}", message.str());
  }

private:
  std::unique_ptr<CompileCache> cache;
  std::string key;
};
} // namespace

std::unique_ptr<runtime::JitObjectCache>
openJitObjectCache(const DriverOptions &options, mlir::ModuleOp module,
                   llvm::StringRef purpose) {
  if (!cacheable(options))
    return nullptr;
  std::unique_ptr<CompileCache> cache = CompileCache::open(options.cache);
  if (!cache)
    return nullptr;
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    module->print(os, mlir::OpPrintingFlags()
                          .enableDebugInfo(/*enable=*/true,
                                           /*prettyForm=*/false)
                          .printGenericOpForm());
  }
  std::string key = jitCacheKey(gatherToolchain(*cache, {}), purpose,
                                runtime::jitHostIdentity(), text);
  return std::make_unique<JitObjectCacheEntry>(std::move(cache),
                                               std::move(key));
}

bool cacheable(const DriverOptions &options) {
  return !options.cache.directory.empty() && !options.printIRAfterAll &&
         options.debugInternalError.empty();
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

namespace {

constexpr llvm::StringLiteral kEntryMagic = "pallasc-cache-entry/v1\n";
/// At most this many files per entry, and this long a name.
constexpr uint32_t kMaxEntryFiles = 4096;
constexpr uint32_t kMaxNameBytes = 4096;

std::string hash128Hex(llvm::StringRef data) {
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(
      llvm::ArrayRef<uint8_t>(data.bytes_begin(), data.size()));
  std::string s;
  llvm::raw_string_ostream(s)
      << llvm::format_hex_no_prefix(h.high64, 16)
      << llvm::format_hex_no_prefix(h.low64, 16);
  return s;
}

void appendU32(std::string &out, uint32_t v) {
  char b[4];
  llvm::support::endian::write32le(b, v);
  out.append(b, 4);
}

void appendU64(std::string &out, uint64_t v) {
  char b[8];
  llvm::support::endian::write64le(b, v);
  out.append(b, 8);
}

} // namespace

std::string encodeCacheEntry(llvm::StringRef key, const CacheEntry &entry) {
  std::string payload;
  appendU32(payload, static_cast<uint32_t>(entry.name.size()));
  payload += entry.name;
  appendU32(payload, static_cast<uint32_t>(entry.files.size()));
  for (const CompiledFile &f : entry.files) {
    appendU32(payload, static_cast<uint32_t>(f.name.size()));
    appendU64(payload, f.contents.size());
    payload += f.name;
    payload += f.contents;
  }
  std::string out = kEntryMagic.str();
  out += key.str() + "\n";
  out += std::to_string(payload.size()) + "\n";
  out += hash128Hex(payload) + "\n";
  out += payload;
  return out;
}

bool decodeCacheEntry(llvm::StringRef bytes, llvm::StringRef key,
                      CacheEntry &entry, std::string &why) {
  std::vector<CompiledFile> &files = entry.files;
  files.clear();
  entry.name.clear();
  if (!bytes.consume_front(kEntryMagic)) {
    why = "not a pallasc cache entry of this version";
    return false;
  }
  auto line = [&](llvm::StringRef &out) {
    size_t nl = bytes.find('\n');
    if (nl == llvm::StringRef::npos)
      return false;
    out = bytes.take_front(nl);
    bytes = bytes.drop_front(nl + 1);
    return true;
  };
  llvm::StringRef storedKey, sizeText, hash;
  uint64_t size = 0;
  if (!line(storedKey) || !line(sizeText) || !line(hash) ||
      sizeText.getAsInteger(10, size)) {
    why = "truncated header";
    return false;
  }
  if (storedKey != key) {
    why = "it holds another key";
    return false;
  }
  if (bytes.size() != size) {
    why = "truncated: " + std::to_string(bytes.size()) + " of " +
          std::to_string(size) + " payload bytes";
    return false;
  }
  if (hash128Hex(bytes) != hash) {
    why = "the payload does not match its hash";
    return false;
  }
  // Reads a little-endian uint32_t or uint64_t off the front of `bytes`.
  auto take = [&](auto &v) {
    using T = std::remove_reference_t<decltype(v)>;
    if (bytes.size() < sizeof(T))
      return false;
    v = llvm::support::endian::read<T, llvm::endianness::little>(
        bytes.data());
    bytes = bytes.drop_front(sizeof(T));
    return true;
  };
  uint32_t nameBytes = 0;
  if (!take(nameBytes) || nameBytes > kMaxNameBytes ||
      bytes.size() < nameBytes) {
    why = "malformed name";
    return false;
  }
  entry.name = bytes.take_front(nameBytes).str();
  bytes = bytes.drop_front(nameBytes);
  uint32_t count = 0;
  if (!take(count) || count > kMaxEntryFiles) {
    why = "malformed file list";
    return false;
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t nameBytes = 0;
    uint64_t contentBytes = 0;
    if (!take(nameBytes) || !take(contentBytes) || nameBytes > kMaxNameBytes ||
        bytes.size() < nameBytes || bytes.size() - nameBytes < contentBytes) {
      why = "malformed file " + std::to_string(i);
      return false;
    }
    CompiledFile f;
    f.name = bytes.take_front(nameBytes).str();
    bytes = bytes.drop_front(nameBytes);
    f.contents = bytes.take_front(contentBytes).str();
    bytes = bytes.drop_front(contentBytes);
    // A name is a plain file name inside the output directory.
    if (f.name.empty() || f.name.find('/') != std::string::npos ||
        f.name == "." || f.name == "..") {
      why = "malformed file name";
      return false;
    }
    files.push_back(std::move(f));
  }
  if (!bytes.empty()) {
    why = "trailing bytes";
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The directory
//===----------------------------------------------------------------------===//

namespace {

constexpr const char *kCacheDirTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by pallasc.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n";

/// Temporaries older than this are left over from a killed process.
constexpr int64_t kStaleTempSeconds = 3600;

std::string join(llvm::StringRef a, llvm::StringRef b) {
  llvm::SmallString<256> p(a);
  path::append(p, b);
  return std::string(p);
}

/// The counters in DIR/stats, by name.
using Counters = std::map<std::string, uint64_t>;

Counters parseCounters(llvm::StringRef text) {
  Counters c;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', -1, false);
  for (llvm::StringRef l : lines) {
    auto [name, value] = l.split(' ');
    uint64_t v;
    if (!name.empty() && !value.trim().getAsInteger(10, v))
      c[name.str()] = v;
  }
  return c;
}

std::string printCounters(const Counters &c) {
  std::string s;
  for (const auto &[name, value] : c)
    s += name + " " + std::to_string(value) + "\n";
  return s;
}

/// DIR/stats, open and locked while alive.
class LockedStats {
public:
  LockedStats(const std::string &dir, bool exclusive) {
    fd = ::open(join(dir, "stats").c_str(), O_RDWR | O_CREAT | O_CLOEXEC,
                0666);
    if (fd < 0)
      return;
    while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
      if (errno != EINTR) {
        ::close(fd);
        fd = -1;
        return;
      }
    }
  }
  ~LockedStats() {
    if (fd >= 0)
      ::close(fd); // releases the lock
  }
  bool ok() const { return fd >= 0; }
  Counters read() {
    std::string text;
    char buf[4096];
    off_t at = 0;
    for (;;) {
      ssize_t n = ::pread(fd, buf, sizeof buf, at);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      text.append(buf, n);
      at += n;
      if (text.size() > (1 << 20))
        break; // not ours: ignore the rest
    }
    return parseCounters(text);
  }
  void write(const Counters &c) {
    std::string text = printCounters(c);
    if (::ftruncate(fd, 0) != 0)
      return;
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      done += n;
    }
  }

private:
  int fd = -1;
};

struct EntryFile {
  std::string path;
  uint64_t size;
  int64_t mtime;
};

/// Every entry under DIR/entries; removes temporaries of killed processes.
std::vector<EntryFile> scanEntries(const std::string &dir) {
  std::vector<EntryFile> entries;
  std::string root = join(dir, "entries");
  std::error_code ec;
  int64_t now = static_cast<int64_t>(time(nullptr));
  for (fs::directory_iterator shard(root, ec), end; shard != end && !ec;
       shard.increment(ec)) {
    std::error_code ec2;
    for (fs::directory_iterator it(shard->path(), ec2), end2;
         it != end2 && !ec2; it.increment(ec2)) {
      struct stat st;
      if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      if (path::filename(it->path()).starts_with(".")) {
        if (now - st.st_mtime > kStaleTempSeconds)
          fs::remove(it->path());
        continue;
      }
      entries.push_back({it->path(), static_cast<uint64_t>(st.st_size),
                         static_cast<int64_t>(st.st_mtim.tv_sec) *
                                 1000000000 +
                             st.st_mtim.tv_nsec});
    }
  }
  return entries;
}

/// Removes the least recently used entries until the total is at most
/// `target` bytes; returns the number removed and sets `remaining`.
uint64_t evict(const std::string &dir, uint64_t target, uint64_t &remaining) {
  std::vector<EntryFile> entries = scanEntries(dir);
  uint64_t total = 0;
  for (const EntryFile &e : entries)
    total += e.size;
  llvm::sort(entries, [](const EntryFile &a, const EntryFile &b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
  });
  uint64_t removed = 0;
  for (const EntryFile &e : entries) {
    if (total <= target)
      break;
    if (!fs::remove(e.path)) {
      total -= e.size;
      ++removed;
    }
  }
  remaining = total;
  return removed;
}

} // namespace

CompileCache::CompileCache(const CacheSettings &settings)
    : dir(settings.directory), maxBytes(settings.maxBytes) {}

std::unique_ptr<CompileCache> CompileCache::open(const CacheSettings &settings) {
  if (settings.directory.empty())
    return nullptr;
  if (RemoteStore::isUrl(settings.directory)) {
    double seconds = 0;
    std::string text;
    if (!remoteCacheTimeout(seconds, text))
      spdlog::warn("PALLASC_CACHE_TIMEOUT: warning: expected a number of "
                   "seconds in (0, 3600], got '{}'; using {} s",
                   text, kDefaultRemoteCacheTimeout);
    std::unique_ptr<CompileCache> cache(new CompileCache(settings));
    cache->remote = std::make_unique<RemoteStore>(settings.directory, seconds,
                                                  settings.maxBytes);
    return cache;
  }
  std::string entries = join(settings.directory, "entries");
  if (std::error_code ec = fs::create_directories(entries)) {
    spdlog::warn("{}: warning: cannot use the compile cache ({}); compiling "
                 "without it",
                 settings.directory, ec.message());
    return nullptr;
  }
  std::string tag = join(settings.directory, "CACHEDIR.TAG");
  if (!fs::exists(tag)) {
    console::LogCapture quiet; // a read-only cache still serves hits
    OutputFiles out(settings.directory);
    if (succeeded(out.stageAt(tag, kCacheDirTag)))
      (void)out.commit();
  }
  return std::unique_ptr<CompileCache>(new CompileCache(settings));
}

CompileCache::~CompileCache() {
  if (!remote)
    flushCounters(0);
}

std::string CompileCache::entryPath(llvm::StringRef key) const {
  llvm::SmallString<256> p(dir);
  path::append(p, "entries", key.take_front(2), key);
  return std::string(p);
}

std::string CompileCache::fingerprint(llvm::StringRef filePath) {
  struct stat st;
  std::string p = filePath.str();
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return "absent";
  std::string identity =
      std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
      std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
      "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
      std::to_string(st.st_ctim.tv_sec) + "." +
      std::to_string(st.st_ctim.tv_nsec);
  std::string memoPath = remote ? "" : join(dir, "fingerprints");
  std::lock_guard<std::mutex> lock(mutex);
  if (!memoLoaded && !memoPath.empty()) {
    memoLoaded = true;
    if (auto buf = llvm::MemoryBuffer::getFile(memoPath, /*IsText=*/false,
                                               /*RequiresNullTerminator=*/false)) {
      llvm::SmallVector<llvm::StringRef> lines;
      (*buf)->getBuffer().split(lines, '\n', -1, false);
      for (llvm::StringRef l : lines) {
        auto [id, fp] = l.split(' ');
        if (fp.size() == 32)
          memo[id.str()] = fp.str();
      }
    }
  }
  if (auto it = memo.find(identity); it != memo.end())
    return it->second;
  auto buf = llvm::MemoryBuffer::getFile(p, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return "unreadable";
  std::string fp = hash128Hex((*buf)->getBuffer());
  memo[identity] = fp;
  if (memoPath.empty())
    return fp;
  // One append of one short line: atomic among concurrent appenders.
  int fd = ::open(memoPath.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                  0666);
  if (fd >= 0) {
    std::string line = identity + " " + fp + "\n";
    (void)!::write(fd, line.data(), line.size());
    ::close(fd);
  }
  return fp;
}

std::optional<CacheEntry> CompileCache::lookupRemote(llvm::StringRef key) {
  std::string bytes, why;
  RemoteStore::Result r = remote->get(key, bytes, why);
  if (r == RemoteStore::Result::Failed && remote->claimFailureReport())
    spdlog::warn("{}: warning: the remote compile cache failed ({}); "
                 "compiling without it",
                 remote->url(), why);
  if (r != RemoteStore::Result::Found) {
    spdlog::debug("cache miss {}", key);
    return std::nullopt;
  }
  CacheEntry entry;
  if (!decodeCacheEntry(bytes, key, entry, why)) {
    spdlog::warn("{}: warning: corrupt compile cache entry ({}); compiling "
                 "again",
                 remote->urlOf(key), why);
    return std::nullopt;
  }
  spdlog::debug("cache hit {}", key);
  return entry;
}

std::optional<CacheEntry> CompileCache::lookup(llvm::StringRef key) {
  if (remote)
    return lookupRemote(key);
  std::string p = entryPath(key);
  auto buf = llvm::MemoryBuffer::getFile(p, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    ++misses;
    spdlog::debug("cache miss {}", key);
    return std::nullopt;
  }
  CacheEntry entry;
  std::string why;
  if (!decodeCacheEntry((*buf)->getBuffer(), key, entry, why)) {
    spdlog::warn("{}: warning: corrupt compile cache entry ({}); removed it, "
                 "compiling again",
                 p, why);
    fs::remove(p);
    ++corrupt;
    ++misses;
    return std::nullopt;
  }
  // Mark it used, for the least-recently-used eviction.
  (void)::utimensat(AT_FDCWD, p.c_str(), nullptr, 0);
  ++hits;
  spdlog::debug("cache hit {}", key);
  return entry;
}

void CompileCache::store(llvm::StringRef key, const CacheEntry &entry) {
  std::string bytes = encodeCacheEntry(key, entry);
  if (bytes.size() > maxBytes) {
    spdlog::debug("cache: not storing {} ({} is over the cache's bound)", key,
                  formatByteSize(bytes.size()));
    return;
  }
  if (remote) {
    std::string why;
    if (remote->put(key, bytes, why))
      spdlog::debug("cache store {} ({})", key, formatByteSize(bytes.size()));
    else if (remote->claimFailureReport())
      spdlog::warn("{}: warning: cannot store the compile in the remote "
                   "cache: {}",
                   remote->url(), why);
    return;
  }
  std::string p = entryPath(key);
  std::string shard = std::string(path::parent_path(p));
  uint64_t replaced = 0;
  if (fs::file_size(p, replaced))
    replaced = 0;
  std::string problem;
  {
    // OutputFiles reports its failures as errors; here they are not: the
    // compile succeeded, only the cache could not keep it.
    console::LogCapture capture;
    OutputFiles out(shard);
    if (failed(out.prepare()) || failed(out.stageAt(p, bytes)) ||
        failed(out.commit()))
      problem = capture.take();
  }
  if (!problem.empty()) {
    llvm::StringRef message = llvm::StringRef(problem).trim();
    message.consume_front(p + ": error: ");
    spdlog::warn("{}: warning: cannot store the compile in the cache: {}", p,
                 message.str());
    return;
  }
  ++stores;
  spdlog::debug("cache store {} ({})", key, formatByteSize(bytes.size()));
  flushCounters(static_cast<int64_t>(bytes.size()) -
                static_cast<int64_t>(replaced));
}

void CompileCache::flushCounters(int64_t addedBytes) {
  std::lock_guard<std::mutex> lock(mutex);
  uint64_t h = hits.exchange(0), m = misses.exchange(0),
           s = stores.exchange(0), c = corrupt.exchange(0);
  if (!h && !m && !s && !c && !addedBytes)
    return;
  LockedStats stats(dir, /*exclusive=*/true);
  if (!stats.ok())
    return;
  Counters counters = stats.read();
  counters["hits"] += h;
  counters["misses"] += m;
  counters["stores"] += s;
  counters["corrupt"] += c;
  int64_t bytes = static_cast<int64_t>(counters["bytes"]) + addedBytes;
  counters["bytes"] = bytes < 0 ? 0 : static_cast<uint64_t>(bytes);
  // Only a store evicts (to this process's bound): a hit, or a process with
  // a smaller bound that stored nothing, leaves the entries alone.
  if (addedBytes > 0 && counters["bytes"] > maxBytes) {
    uint64_t remaining = 0;
    counters["evicted"] += evict(dir, maxBytes / 10 * 9, remaining);
    counters["bytes"] = remaining;
  }
  stats.write(counters);
}

CacheStats CompileCache::stats(const CacheSettings &settings) {
  CacheStats s;
  s.maxBytes = settings.maxBytes;
  Counters counters;
  if (fs::exists(join(settings.directory, "stats"))) {
    LockedStats locked(settings.directory, /*exclusive=*/false);
    if (locked.ok())
      counters = locked.read();
  }
  s.hits = counters["hits"];
  s.misses = counters["misses"];
  s.stores = counters["stores"];
  s.corrupt = counters["corrupt"];
  s.evicted = counters["evicted"];
  for (const EntryFile &e : scanEntries(settings.directory)) {
    ++s.entries;
    s.bytes += e.size;
  }
  return s;
}

llvm::LogicalResult CompileCache::clear(const CacheSettings &settings) {
  const std::string &d = settings.directory;
  if (!fs::is_directory(d)) {
    logError(d + ": error: not a cache directory (it does not exist)");
    return llvm::failure();
  }
  LockedStats stats(d, /*exclusive=*/true);
  if (!stats.ok()) {
    logError(d + ": error: cannot lock the cache's counters: " +
             std::string(std::strerror(errno)));
    return llvm::failure();
  }
  std::string root = join(d, "entries");
  std::error_code ec;
  bool ok = true;
  for (fs::directory_iterator shard(root, ec), end; shard != end && !ec;
       shard.increment(ec)) {
    std::error_code ec2;
    for (fs::directory_iterator it(shard->path(), ec2), end2;
         it != end2 && !ec2; it.increment(ec2))
      if (fs::remove(it->path()))
        ok = false;
    fs::remove(shard->path());
  }
  fs::remove(join(d, "fingerprints"));
  stats.write(Counters());
  if (!ok) {
    logError(d + ": error: some cache entries could not be removed");
    return llvm::failure();
  }
  return llvm::success();
}

} // namespace pallasc
