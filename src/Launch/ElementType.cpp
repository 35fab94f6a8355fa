//===- ElementType.cpp - Element types of host arrays -----------*- C++ -*-===//

#include "src/Launch/ElementType.h"

#include <cstring>

namespace pallasc::launch {

namespace {
using Kind = ElementTypeInfo::Kind;
/// One entry per ElementType, in enumerator order.
constexpr ElementTypeInfo kElementTypes[] = {
    {ElementType::Bool, "bool", "bool_", 1, Kind::Bool, "|b1"},
    {ElementType::I8, "i8", "int8", 1, Kind::Signed, "|i1"},
    {ElementType::I16, "i16", "int16", 2, Kind::Signed, "<i2"},
    {ElementType::I32, "i32", "int32", 4, Kind::Signed, "<i4"},
    {ElementType::I64, "i64", "int64", 8, Kind::Signed, "<i8"},
    {ElementType::U8, "u8", "uint8", 1, Kind::Unsigned, "|u1"},
    {ElementType::U16, "u16", "uint16", 2, Kind::Unsigned, "<u2"},
    {ElementType::U32, "u32", "uint32", 4, Kind::Unsigned, "<u4"},
    {ElementType::U64, "u64", "uint64", 8, Kind::Unsigned, "<u8"},
    {ElementType::F16, "f16", "float16", 2, Kind::Float, "<f2"},
    {ElementType::BF16, "bf16", "bfloat16", 2, Kind::Float, "<V2"},
    {ElementType::F32, "f32", "float32", 4, Kind::Float, "<f4"},
    {ElementType::F64, "f64", "float64", 8, Kind::Float, "<f8"},
    {ElementType::F8E4M3FN, "f8e4m3fn", "float8_e4m3fn", 1, Kind::Float,
     "|V1"},
    {ElementType::F8E5M2, "f8e5m2", "float8_e5m2", 1, Kind::Float, "|V1"},
    {ElementType::F8E4M3FNUZ, "f8e4m3fnuz", "float8_e4m3fnuz", 1, Kind::Float,
     "|V1"},
    {ElementType::F8E5M2FNUZ, "f8e5m2fnuz", "float8_e5m2fnuz", 1, Kind::Float,
     "|V1"},
    // ml_dtypes' sub-byte integers: np.save writes them as "<V1", one
    // element per byte.
    {ElementType::I4, "i4", "int4", 1, Kind::Signed, "|V1"},
    {ElementType::U4, "u4", "uint4", 1, Kind::Unsigned, "|V1"},
    {ElementType::I2, "i2", "int2", 1, Kind::Signed, "|V1"},
    {ElementType::U2, "u2", "uint2", 1, Kind::Unsigned, "|V1"},
};
constexpr size_t kNumElementTypes =
    sizeof(kElementTypes) / sizeof(kElementTypes[0]);

constexpr bool inEnumeratorOrder() {
  for (size_t i = 0; i < kNumElementTypes; ++i)
    if (static_cast<size_t>(kElementTypes[i].type) != i)
      return false;
  return true;
}
static_assert(inEnumeratorOrder(),
              "kElementTypes must list every ElementType in enumerator order");
static_assert(static_cast<size_t>(ElementType::U2) + 1 == kNumElementTypes,
              "every ElementType needs an entry in kElementTypes");
} // namespace

ElementTypeTable allElementTypes() {
  return {kElementTypes, kNumElementTypes};
}

const ElementTypeInfo &elementTypeInfo(ElementType type) {
  return kElementTypes[static_cast<size_t>(type)];
}

bool parseElementType(std::string_view name, ElementType &type) {
  for (const ElementTypeInfo &e : kElementTypes)
    if (name == e.name) {
      type = e.type;
      return true;
    }
  return false;
}

bool parseElementTypeOrAlias(std::string_view name, ElementType &type) {
  if (parseElementType(name, type))
    return true;
  for (const ElementTypeInfo &e : kElementTypes)
    if (name == e.numpyName) {
      type = e.type;
      return true;
    }
  return false;
}

std::string formatShape(const std::vector<int64_t> &shape,
                        const char *separator) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? separator : "") + std::to_string(shape[i]);
  return s + "]";
}

const char *elementTypeName(ElementType type) {
  return elementTypeInfo(type).name;
}
size_t elementSize(ElementType type) { return elementTypeInfo(type).size; }
unsigned elementBits(ElementType type) {
  switch (type) {
  case ElementType::I4:
  case ElementType::U4:
    return 4;
  case ElementType::I2:
  case ElementType::U2:
    return 2;
  default:
    return static_cast<unsigned>(elementSize(type) * 8);
  }
}
bool isPackedElement(ElementType type) { return elementBits(type) < 8; }

bool storageBytes(ElementType type, uint64_t count, uint64_t &bytes) {
  if (!isPackedElement(type))
    return !__builtin_mul_overflow(count, elementSize(type), &bytes);
  uint64_t bits;
  if (__builtin_mul_overflow(count, uint64_t(elementBits(type)), &bits))
    return false;
  bytes = bits / 8 + (bits % 8 != 0);
  return true;
}

void packElements(const uint8_t *unpacked, uint64_t count, ElementType type,
                  uint8_t *packed) {
  unsigned bits = elementBits(type), perByte = 8 / bits;
  uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  for (uint64_t i = 0; i < count; i += perByte) {
    uint8_t byte = 0;
    for (unsigned k = 0; k < perByte && i + k < count; ++k)
      byte |= static_cast<uint8_t>((unpacked[i + k] & mask) << (k * bits));
    packed[i / perByte] = byte;
  }
}

void unpackElements(const uint8_t *packed, uint64_t count, ElementType type,
                    uint8_t *unpacked) {
  unsigned bits = elementBits(type), perByte = 8 / bits;
  uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  for (uint64_t i = 0; i < count; ++i)
    unpacked[i] = (packed[i / perByte] >> (i % perByte * bits)) & mask;
}

void copyPackedElements(const uint8_t *src, uint64_t from, uint8_t *dst,
                        uint64_t to, uint64_t count, unsigned bits) {
  unsigned perByte = 8 / bits;
  uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  // Whole bytes when both runs start on a byte boundary.
  if (from % perByte == 0 && to % perByte == 0) {
    uint64_t whole = count / perByte;
    std::memcpy(dst + to / perByte, src + from / perByte, whole);
    from += whole * perByte;
    to += whole * perByte;
    count -= whole * perByte;
  }
  for (uint64_t i = 0; i < count; ++i, ++from, ++to) {
    uint8_t v = (src[from / perByte] >> (from % perByte * bits)) & mask;
    unsigned shift = to % perByte * bits;
    uint8_t &d = dst[to / perByte];
    d = static_cast<uint8_t>((d & ~(mask << shift)) | (v << shift));
  }
}
bool isFloatElement(ElementType type) {
  return elementTypeInfo(type).kind == Kind::Float;
}
bool isSignedElement(ElementType type) {
  return elementTypeInfo(type).kind == Kind::Signed;
}

bool isFloat8Element(ElementType type) {
  Float8Format format;
  return float8Format(type, format);
}

bool float8Format(ElementType type, Float8Format &format) {
  using NaNs = Float8Format::NaNs;
  switch (type) {
  case ElementType::F8E4M3FN:
    format = {3, 7, NaNs::AllOnes};
    return true;
  case ElementType::F8E5M2:
    format = {2, 15, NaNs::Ieee};
    return true;
  case ElementType::F8E4M3FNUZ:
    format = {3, 8, NaNs::NegativeZero};
    return true;
  case ElementType::F8E5M2FNUZ:
    format = {2, 16, NaNs::NegativeZero};
    return true;
  default:
    return false;
  }
}

} // namespace pallasc::launch
