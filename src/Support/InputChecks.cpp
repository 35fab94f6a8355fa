//===- InputChecks.cpp - Checks made on raw input before parsing -*- C++ -*-===//

#include "src/Support/InputChecks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

#include <cstdio>

namespace pallasc {

namespace {

bool isWordChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

/// Counts the operators of the expression being scanned, one token at a
/// time (outside strings and comments). A token that cannot be part of an
/// affine expression ends the expression.
class ExpressionScanner {
public:
  /// Looks at the token starting at `text[i]`; returns false once the
  /// current expression holds more than kMaxAffineOperators operators.
  bool scan(llvm::StringRef text, size_t i) {
    char c = text[i];
    char prev = i ? text[i - 1] : ' ';
    if (inNumber) {
      // 1.5e-3, 0x7f, 8x128xf32
      if (isWordChar(c) || ((c == '+' || c == '-') && (prev == 'e' || prev == 'E')))
        return true;
      inNumber = false;
    }
    if (isWordChar(c)) {
      // Inside a word, or a name such as %mod or @floordiv.
      if (isWordChar(prev) || isSigil(prev))
        return true;
      if (llvm::isDigit(c)) {
        inNumber = true;
        return true;
      }
      size_t end = i;
      while (end < text.size() && isWordChar(text[end]))
        ++end;
      llvm::StringRef word = text.slice(i, end);
      if (word == "floordiv" || word == "ceildiv" || word == "mod")
        return count();
      return true;
    }
    switch (c) {
    case '+':
    case '*':
      return count();
    case '-':
      if (i + 1 < text.size() && text[i + 1] == '>') {
        operators = 0; // "->"
        return true;
      }
      return count();
    case ',':
    case ';':
    case ':':
    case '=':
    case '[':
    case ']':
    case '{':
    case '}':
    case '<':
    case '>':
      operators = 0;
      return true;
    default:
      return true;
    }
  }

private:
  static bool isSigil(char c) {
    return c == '%' || c == '@' || c == '#' || c == '!' || c == '^';
  }
  bool count() { return ++operators <= kMaxAffineOperators; }

  unsigned operators = 0;
  bool inNumber = false;
};

std::string tooManyOperators() {
  return "an expression with more than " +
         std::to_string(kMaxAffineOperators) +
         " operators (+ - * floordiv ceildiv mod), the limit";
}

} // namespace

bool checkInputText(llvm::StringRef text, std::string &message) {
  size_t line = 1, col = 1;
  unsigned depth = 0;
  bool inString = false, inComment = false;
  ExpressionScanner expression;
  auto fail = [&](const std::string &what) {
    message = std::to_string(line) + ":" + std::to_string(col) + ": " + what;
    return false;
  };
  for (size_t i = 0; i < text.size();) {
    unsigned char c = text[i];
    unsigned len = 1;
    if (c >= 0x80) {
      len = llvm::getUTF8SequenceSize(text.bytes_begin() + i,
                                      text.bytes_end());
      if (len == 0 || i + len > text.size() ||
          !llvm::isLegalUTF8Sequence(text.bytes_begin() + i,
                                     text.bytes_begin() + i + len)) {
        char hex[8];
        snprintf(hex, sizeof(hex), "0x%02x", c);
        return fail(std::string("is not UTF-8 text (byte ") + hex + ")");
      }
    } else if (c == 0) {
      return fail("is not text (NUL byte)");
    } else if (inComment) {
      if (c == '\n')
        inComment = false;
    } else if (inString) {
      if (c == '\\')
        len = i + 1 < text.size() ? 2 : 1;
      else if (c == '"' || c == '\n')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      inComment = true;
    } else {
      if (!expression.scan(text, i))
        return fail("has " + tooManyOperators());
      if (c == '{' || c == '[' || c == '(' || c == '<') {
        if (++depth > kMaxKernelNesting)
          return fail("is nested deeper than " +
                      std::to_string(kMaxKernelNesting) + " levels");
      } else if ((c == '}' || c == ']' || c == ')' || c == '>') &&
                 depth > 0) {
        --depth;
      }
    }
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += len;
  }
  return true;
}

bool checkIndexMapText(llvm::StringRef text, std::string &message) {
  unsigned depth = 0;
  ExpressionScanner expression;
  for (size_t i = 0; i < text.size(); ++i) {
    auto at = [&] { return " at character " + std::to_string(i + 1); };
    if (!expression.scan(text, i)) {
      message = "it has " + tooManyOperators() + "," + at();
      return false;
    }
    if (text[i] == '(' && ++depth > kMaxIndexMapNesting) {
      message = "it nests parentheses deeper than " +
                std::to_string(kMaxIndexMapNesting) + " levels," + at();
      return false;
    }
    if (text[i] == ')' && depth > 0)
      --depth;
  }
  return true;
}

} // namespace pallasc
