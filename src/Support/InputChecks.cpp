//===- InputChecks.cpp - Checks made on raw input before parsing -*- C++ -*-===//

#include "src/Support/InputChecks.h"

#include "llvm/Support/ConvertUTF.h"

#include <cstdio>

namespace pallasc {

bool checkInputText(llvm::StringRef text, std::string &message) {
  size_t line = 1, col = 1;
  unsigned depth = 0;
  bool inString = false, inComment = false;
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
        return fail(std::string("not UTF-8 text (byte ") + hex + ")");
      }
    } else if (c == 0) {
      return fail("not text (NUL byte)");
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
    } else if (c == '{' || c == '[' || c == '(' || c == '<') {
      if (++depth > kMaxKernelNesting)
        return fail("nested deeper than " +
                    std::to_string(kMaxKernelNesting) + " levels");
    } else if ((c == '}' || c == ']' || c == ')' || c == '>') && depth > 0) {
      --depth;
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

} // namespace pallasc
