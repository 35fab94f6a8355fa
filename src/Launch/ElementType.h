//===- ElementType.h - Element types of host arrays -------------*- C++ -*-===//
//
// The one table of the element types of host arrays (the grid spec's
// dtypes): each type's canonical spelling, NumPy name, size, kind and .npy
// dtype. The grid spec's reader (src/Spec: spellings, aliases, sizes, the
// unknown-dtype message) and its import into MLIR types (SpecToIR), the
// host grid walk (HostGrid.h), the generated launchers and the .npy reader
// and writer (src/Runtime/Npy.h) all read it, so a new element type is an
// enumerator here, one entry of the table in ElementType.cpp and its MLIR
// type in SpecToIR's dtypeToType.
//
// Plain C++17, no LLVM or MLIR (part of the launch library).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_ELEMENTTYPE_H
#define PALLASC_SRC_LAUNCH_ELEMENTTYPE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pallasc::launch {

/// Element types of host arrays (the grid spec's dtypes), in the order of
/// the table.
enum class ElementType : uint8_t {
  Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64,
  F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, I4, U4, I2, U2
};

/// What an element type is.
struct ElementTypeInfo {
  enum class Kind : uint8_t { Bool, Signed, Unsigned, Float };
  ElementType type;
  /// Canonical spelling, as in grid specs: "bool", "i8", ..., "bf16".
  const char *name;
  /// NumPy's name of the type ("int8", "float32"; "bfloat16" as ml_dtypes
  /// names it; "bool_" for bool, whose NumPy name is the canonical one):
  /// grid specs accept it as an alias (what pallasc-export writes is the
  /// canonical spelling).
  const char *numpyName;
  /// Bytes per element of a host array (int4/uint4/int2/uint2 take one
  /// byte each, as NumPy holds ml_dtypes' arrays; the kernel's storage
  /// packs them: elementBits).
  size_t size;
  Kind kind;
  /// The NumPy dtype `.npy` files are written with ("<f4"). bf16 and the
  /// fp8 types have none: `ml_dtypes` arrays are saved as void dtypes of
  /// their size ("<V2", "<V1"; np.save writes float8_e5m2 as "<f1").
  const char *npyDescr;
};

/// The bit layout of an 8-bit float type (ml_dtypes' and MLIR's fp8
/// types): a sign bit, then `8 - 1 - mantissaBits` exponent bits with
/// `bias`, then the mantissa; zero exponent bits are subnormals.
struct Float8Format {
  /// Where the NaNs are: IEEE's all-ones exponent (with infinities: e5m2),
  /// only the all-ones magnitude 0x7f (no infinities: e4m3fn), or only the
  /// negative-zero code 0x80 (no infinities, no -0: the fnuz types).
  enum class NaNs : uint8_t { Ieee, AllOnes, NegativeZero };
  unsigned mantissaBits;
  int bias;
  NaNs nans;
};

/// The layout of an fp8 element type; false for other types.
bool float8Format(ElementType type, Float8Format &format);
bool isFloat8Element(ElementType type);

/// The table's entries (begin/end for range-for).
struct ElementTypeTable {
  const ElementTypeInfo *first;
  size_t count;
  const ElementTypeInfo *begin() const { return first; }
  const ElementTypeInfo *end() const { return first + count; }
  size_t size() const { return count; }
};

/// Every element type, in enumerator order.
ElementTypeTable allElementTypes();
const ElementTypeInfo &elementTypeInfo(ElementType type);

/// Parses a canonical dtype spelling ("f32", "bf16", "bool", ...).
bool parseElementType(std::string_view name, ElementType &type);
/// Parses a canonical spelling or a NumPy name ("float32", "bool_").
bool parseElementTypeOrAlias(std::string_view name, ElementType &type);
const char *elementTypeName(ElementType type);
size_t elementSize(ElementType type);
/// Bits per element in the kernel's storage: 4 for int4/uint4, 2 for
/// int2/uint2 (packed, 2 or 4 elements per byte, the first element in the
/// low bits as XLA and ml_dtypes pack them), else 8 times elementSize.
unsigned elementBits(ElementType type);
/// int4, uint4, int2, uint2: packed in the kernel's storage.
bool isPackedElement(ElementType type);
/// Bytes that `count` elements of `type` take in the kernel's storage:
/// count x elementSize, or for int4/uint4/int2/uint2 count x bits / 8
/// rounded up (the last byte padded with zero bits); false on overflow.
bool storageBytes(ElementType type, uint64_t count, uint64_t &bytes);
/// Packs `count` elements held one per byte as ml_dtypes holds them (the
/// value in the low bits) into XLA's packed layout at `packed`
/// (storageBytes(type, count) bytes): element i in bits [i*b, i*b + b) of
/// the little-endian bit string, b = elementBits(type). Bits above an
/// element's width in its byte are dropped; the padding bits are zero.
void packElements(const uint8_t *unpacked, uint64_t count, ElementType type,
                  uint8_t *packed);
/// The inverse: one element per byte, zero-extended as ml_dtypes stores
/// int4/uint4/int2/uint2 (an int4 -1 is the byte 0x0f).
void unpackElements(const uint8_t *packed, uint64_t count, ElementType type,
                    uint8_t *unpacked);
/// Copies `count` packed elements from element `from` of `src` to element
/// `to` of `dst` (element offsets in units of `bits`-wide elements, 2 or 4
/// bits); the other bits of `dst` are kept.
void copyPackedElements(const uint8_t *src, uint64_t from, uint8_t *dst,
                        uint64_t to, uint64_t count, unsigned bits);
bool isFloatElement(ElementType type);
bool isSignedElement(ElementType type);

/// An array shape as messages write it: "[8, 128]" (`separator` between the
/// dimensions).
std::string formatShape(const std::vector<int64_t> &shape,
                        const char *separator = ", ");

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_ELEMENTTYPE_H
