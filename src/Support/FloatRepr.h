//===- FloatRepr.h - Python's repr of a float -------------------*- C++ -*-===//
//
// How Python's repr writes a float: the shortest decimal that reads back as
// the same value of T (so a float keeps float digits: 0.1f is "0.1"),
// positional when its decimal exponent is in [-4, 16) ("100.0", "0.0001",
// "1.5"), scientific with a two-digit exponent otherwise ("1e+16", "1e-05",
// "1.5e+20"); "nan", "inf", "-0.0". Used wherever pallasc prints values
// (kernel debug prints, --expect mismatches).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SUPPORT_FLOATREPR_H
#define PALLASC_SUPPORT_FLOATREPR_H

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace pallasc {

template <typename T> std::string pythonFloatRepr(T v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  // The shortest round-trip digits of T, as d.ddde±x.
  char buf[64];
  auto written =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, written.ptr);
  std::string out = sci[0] == '-' ? "-" : "";
  size_t e = sci.find('e');
  std::string digits;
  for (size_t i = out.size(); i < e; ++i)
    if (sci[i] != '.')
      digits += sci[i];
  int exp = std::atoi(sci.c_str() + e + 1);
  if (exp < -4 || exp >= 16) {
    out += digits[0];
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    char expText[8];
    std::snprintf(expText, sizeof(expText), "e%c%02d", exp < 0 ? '-' : '+',
                  std::abs(exp));
    return out + expText;
  }
  if (exp < 0)
    return out + "0." + std::string(-exp - 1, '0') + digits;
  size_t intDigits = static_cast<size_t>(exp) + 1;
  if (digits.size() <= intDigits)
    return out + digits + std::string(intDigits - digits.size(), '0') + ".0";
  return out + digits.substr(0, intDigits) + "." + digits.substr(intDigits);
}

} // namespace pallasc

#endif // PALLASC_SUPPORT_FLOATREPR_H
