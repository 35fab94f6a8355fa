//===- SpecText.cpp - Text helpers of the spec messages ---------*- C++ -*-===//
//
// The text of the grid spec's messages (GridSpecImpl.h): user text made safe
// to print, JSON paths, "did you mean" suggestions, descriptions of values;
// and GridSpec.h's isIdentifier and lineColumn.
//
//===----------------------------------------------------------------------===//

#include "src/Launch/ElementType.h"
#include "src/Spec/GridSpecImpl.h"

#include <algorithm>
#include <climits>

namespace pallasc::spec {

namespace detail {

std::string sanitize(const std::string &s, size_t maxLen) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= maxLen) {
      out += "...";
      break;
    }
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string quote(const std::string &s) { return "'" + sanitize(s) + "'"; }

std::string joinPath(const std::string &path, const std::string &key) {
  std::string k = sanitize(key);
  return path.empty() ? k : path + "." + k;
}

std::string indexPath(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool isAsciiAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool isAsciiDigit(char c) { return c >= '0' && c <= '9'; }

size_t editDistance(const std::string &a, const std::string &b) {
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest(const std::string &word,
                    const std::vector<std::string> &candidates) {
  if (word.empty() || word.size() > 64)
    return {};
  size_t limit = std::max<size_t>(1, std::min<size_t>(2, word.size() / 4));
  std::string best;
  size_t bestDist = limit + 1;
  for (const std::string &c : candidates) {
    size_t d = editDistance(word, c);
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

std::string listOf(const std::vector<std::string> &words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i)
      out += i + 1 == words.size() ? " or " : ", ";
    out += "'" + words[i] + "'";
  }
  return out;
}

std::string countOf(size_t n, const char *singular, const char *plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

std::string formatShape(const std::vector<int64_t> &shape) {
  return launch::formatShape(shape, ",");
}

std::string describe(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return v.get<bool>() ? "boolean true" : "boolean false";
  case json::value_t::string:
    return "string \"" + sanitize(v.get_ref<const std::string &>(), 40) + "\"";
  case json::value_t::number_integer:
    return "integer " + std::to_string(v.get<int64_t>());
  case json::value_t::number_unsigned:
    return "integer " + std::to_string(v.get<uint64_t>());
  case json::value_t::number_float:
    return "number " + v.dump();
  case json::value_t::array:
    return "array";
  case json::value_t::object:
    return "object";
  default:
    return "an unsupported value";
  }
}

} // namespace detail

using detail::isAsciiAlpha;
using detail::isAsciiDigit;

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(isAsciiAlpha(s[0]) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(isAsciiAlpha(c) || isAsciiDigit(c) || c == '_' || c == '$' ||
          c == '.'))
      return false;
  return true;
}

void lineColumn(const std::string &text, size_t offset, int &line,
                int &column) {
  offset = std::min(offset, text.size());
  size_t l = 1, lineStart = 0;
  for (size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++l;
      lineStart = i + 1;
    }
  line = static_cast<int>(std::min<size_t>(l, INT_MAX));
  column = static_cast<int>(std::min<size_t>(offset - lineStart + 1, INT_MAX));
}

} // namespace pallasc::spec
