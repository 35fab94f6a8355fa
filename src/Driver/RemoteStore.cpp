//===- RemoteStore.cpp - The compile cache on an HTTP server ---*- C++ -*-===//

#include "src/Driver/RemoteStore.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Process.h"

#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>

namespace pallasc {

namespace {

void initCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
  void operator()(CURL *c) const { curl_easy_cleanup(c); }
};
using Easy = std::unique_ptr<CURL, EasyDeleter>;

/// What a GET collects, bounded.
struct Sink {
  std::string *body;
  uint64_t maxBytes;
  bool overflow = false;
};

size_t writeBody(char *data, size_t size, size_t count, void *user) {
  auto *sink = static_cast<Sink *>(user);
  size_t n = size * count;
  if (sink->body->size() + n > sink->maxBytes) {
    sink->overflow = true;
    return 0; // aborts the transfer
  }
  sink->body->append(data, n);
  return n;
}

size_t discardBody(char *, size_t size, size_t count, void *) {
  return size * count;
}

/// What a PUT sends.
struct Source {
  llvm::StringRef data;
  size_t offset = 0;
};

size_t readBody(char *buffer, size_t size, size_t count, void *user) {
  auto *src = static_cast<Source *>(user);
  size_t n = std::min(size * count, src->data.size() - src->offset);
  std::memcpy(buffer, src->data.data() + src->offset, n);
  src->offset += n;
  return n;
}

/// A handle with the settings every request shares.
Easy newRequest(const std::string &url, long timeoutMs, char *errorBuffer) {
  initCurlOnce();
  Easy c(curl_easy_init());
  if (!c)
    return c;
  curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L); // threads of pallasc build
  curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, timeoutMs);
  curl_easy_setopt(c.get(), CURLOPT_CONNECTTIMEOUT_MS,
                   std::min(timeoutMs, 2000L));
  curl_easy_setopt(c.get(), CURLOPT_ERRORBUFFER, errorBuffer);
  curl_easy_setopt(c.get(), CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c.get(), CURLOPT_USERAGENT, "pallasc");
  return c;
}

/// A request to `url`, or none (with `why`) when the store is down or curl
/// cannot start one (which puts the store down).
Easy startRequest(std::atomic<bool> &down, const std::string &url,
                  long timeoutMs, char *errorBuffer, std::string &why) {
  if (down) {
    why = "the server failed earlier";
    return nullptr;
  }
  Easy c = newRequest(url, timeoutMs, errorBuffer);
  if (!c) {
    why = "cannot start an HTTP request";
    down = true;
  }
  return c;
}

std::string curlProblem(CURLcode code, const char *errorBuffer) {
  std::string s = *errorBuffer ? errorBuffer : curl_easy_strerror(code);
  return s;
}

} // namespace

bool RemoteStore::isUrl(llvm::StringRef location) {
  return location.starts_with_insensitive("http://") ||
         location.starts_with_insensitive("https://");
}

RemoteStore::RemoteStore(std::string baseUrl, double timeoutSeconds,
                         uint64_t maxBytes)
    : base(std::move(baseUrl)),
      timeoutMs(std::max(1L, static_cast<long>(
                                 std::llround(timeoutSeconds * 1000.0)))),
      maxBytes(maxBytes) {
  while (!base.empty() && base.back() == '/')
    base.pop_back();
}

std::string RemoteStore::urlOf(llvm::StringRef key) const {
  return base + "/ac/" + key.str();
}

RemoteStore::Result RemoteStore::get(llvm::StringRef key, std::string &body,
                                     std::string &why) {
  char errorBuffer[CURL_ERROR_SIZE] = {0};
  std::string url = urlOf(key);
  Easy c = startRequest(down, url, timeoutMs, errorBuffer, why);
  if (!c)
    return Result::Failed;
  body.clear();
  Sink sink{&body, maxBytes};
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, writeBody);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &sink);
  CURLcode code = curl_easy_perform(c.get());
  long status = 0;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
  if (code == CURLE_OK && status == 404) {
    body.clear();
    return Result::Missing;
  }
  if (code == CURLE_OK && status == 200)
    return Result::Found;
  body.clear();
  if (sink.overflow)
    why = "the entry is larger than the cache's bound";
  else if (code != CURLE_OK)
    why = curlProblem(code, errorBuffer);
  else
    why = "HTTP status " + std::to_string(status) + " for GET " + url;
  down = true;
  return Result::Failed;
}

bool RemoteStore::put(llvm::StringRef key, llvm::StringRef body,
                      std::string &why) {
  char errorBuffer[CURL_ERROR_SIZE] = {0};
  std::string url = urlOf(key);
  Easy c = startRequest(down, url, timeoutMs, errorBuffer, why);
  if (!c)
    return false;
  Source src{body};
  curl_easy_setopt(c.get(), CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c.get(), CURLOPT_READFUNCTION, readBody);
  curl_easy_setopt(c.get(), CURLOPT_READDATA, &src);
  curl_easy_setopt(c.get(), CURLOPT_INFILESIZE_LARGE,
                   static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, discardBody);
  // No "Expect: 100-continue" round trip: the body follows the headers.
  struct curl_slist *headers = curl_slist_append(nullptr, "Expect:");
  curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, headers);
  CURLcode code = curl_easy_perform(c.get());
  curl_slist_free_all(headers);
  long status = 0;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
  if (code == CURLE_OK && status >= 200 && status < 300)
    return true;
  why = code != CURLE_OK ? curlProblem(code, errorBuffer)
                         : "HTTP status " + std::to_string(status) +
                               " for PUT " + url;
  down = true;
  return false;
}

bool remoteCacheTimeout(double &seconds, std::string &text) {
  seconds = kDefaultRemoteCacheTimeout;
  auto env = llvm::sys::Process::GetEnv("PALLASC_CACHE_TIMEOUT");
  if (!env || env->empty())
    return true;
  text = *env;
  double v = 0;
  if (llvm::StringRef(text).trim().getAsDouble(v) || !(v > 0) || v > 3600)
    return false;
  seconds = v;
  return true;
}

} // namespace pallasc
