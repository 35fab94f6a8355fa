//===- IndexMapSyntax.cpp - Syntax check of an index map --------*- C++ -*-===//
//
// The light syntactic check of an `index_map` written as an affine map,
// "(i, j) -> (i, j floordiv 2)": the parser counts its grid indices and
// results; the importer (src/Spec/SpecToIR.cpp) parses it with MLIR.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpecImpl.h"

namespace pallasc::spec::detail {

namespace {

/// Splits the text between parentheses at top-level commas; an empty (or
/// all-blank) text has no pieces.
std::vector<std::string> splitTopLevel(const std::string &s) {
  std::vector<std::string> pieces;
  auto trim = [](const std::string &t) {
    size_t b = t.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
      return std::string();
    size_t e = t.find_last_not_of(" \t\r\n");
    return t.substr(b, e - b + 1);
  };
  if (trim(s).empty())
    return pieces;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(')
      ++depth;
    else if (s[i] == ')')
      --depth;
    else if (s[i] == ',' && depth == 0) {
      pieces.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  pieces.push_back(trim(s.substr(start)));
  return pieces;
}

/// Index of the ')' matching the '(' at `open`, or npos.
size_t matchingParen(const std::string &s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(')
      ++depth;
    else if (s[i] == ')' && --depth == 0)
      return i;
  }
  return std::string::npos;
}

} // namespace

std::optional<std::string> checkAffineMap(const std::string &s, size_t &numDims,
                                          size_t &numResults) {
  auto skipBlank = [&](size_t i) {
    while (i < s.size() &&
           (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
      ++i;
    return i;
  };
  size_t i = skipBlank(0);
  if (i >= s.size() || s[i] != '(')
    return std::string("expected '@name' or an affine map "
                       "'(i, j, ...) -> (expr, ...)'");
  if (s.find("->") == std::string::npos)
    return std::string("expected '->' in the affine map");
  size_t close = matchingParen(s, i);
  if (close == std::string::npos)
    return std::string("unbalanced parentheses in the dimension list");
  std::vector<std::string> dims = splitTopLevel(s.substr(i + 1, close - i - 1));
  for (const std::string &d : dims)
    if (!isIdentifier(d))
      return "expected an identifier for each grid index, got '" + sanitize(d) +
             "'";
  i = skipBlank(close + 1);
  if (s.compare(i, 2, "->") != 0)
    return std::string("expected '->' after the dimension list");
  i = skipBlank(i + 2);
  if (i >= s.size() || s[i] != '(')
    return std::string("expected a parenthesized result list after '->'");
  close = matchingParen(s, i);
  if (close == std::string::npos)
    return std::string("unbalanced parentheses in the result list");
  if (skipBlank(close + 1) != s.size())
    return std::string("unexpected text after the result list");
  std::vector<std::string> results =
      splitTopLevel(s.substr(i + 1, close - i - 1));
  for (const std::string &r : results)
    if (r.empty())
      return std::string("empty expression in the result list");
  numDims = dims.size();
  numResults = results.size();
  return std::nullopt;
}
} // namespace pallasc::spec::detail
