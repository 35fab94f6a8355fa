//===- Npy.h - Host arrays and the .npy file format ------------*- C++ -*-===//
//
// `pallasc run` reads its inputs and writes its outputs as NumPy .npy files
// (format versions 1.0, 2.0 and 3.0, little-endian). bf16 has no NumPy
// dtype: `ml_dtypes.bfloat16` arrays are saved by np.save as the 2-byte void
// dtype `<V2`, which is what is read (also `|V2` and `bfloat16`) and written.
//
// Free of MLIR and of exceptions; every failure is a message naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_NPY_H
#define PALLASC_SRC_RUNTIME_NPY_H

#include "src/Launch/ElementType.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pallasc::runtime {

/// Element types of host arrays: the launch library's (its table,
/// src/Launch/ElementType.h, also gives each type's .npy dtype).
using DType = launch::ElementType;

/// Canonical spelling, as in grid specs: "bool", "i8", ..., "bf16", "f64".
const char *dtypeName(DType dtype);
/// Parses a canonical spelling.
std::optional<DType> parseDType(const std::string &name);
/// Bytes per element.
size_t dtypeSize(DType dtype);
bool isFloat(DType dtype);
bool isSigned(DType dtype);

/// A dense row-major array in 64-byte aligned host memory.
class HostArray {
public:
  HostArray() = default;
  HostArray(DType dtype, std::vector<int64_t> shape);
  HostArray(HostArray &&) = default;
  HostArray &operator=(HostArray &&) = default;

  /// Allocates zeroed storage; false if the size overflows or the
  /// allocation fails.
  bool allocate();

  /// A non-owning array over `data` (dense, row-major, at least byteSize()
  /// bytes), which must outlive it: how the runtime hands buffers owned by
  /// compiled code to the grid executor.
  static HostArray view(DType dtype, std::vector<int64_t> shape,
                        uint8_t *data);

  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  int64_t numElements() const;
  size_t byteSize() const { return numElements() * dtypeSize(dtype); }
  uint8_t *data() { return storage.get(); }
  const uint8_t *data() const { return storage.get(); }
  /// "[4096, 1000] f32"
  std::string describe() const;

private:
  struct Free {
    bool owned; // false: a view (see view())
    void operator()(uint8_t *p) const;
  };
  std::unique_ptr<uint8_t, Free> storage;
};

/// Number of elements of `shape`, or nullopt on overflow or a negative dim.
std::optional<int64_t> checkedNumElements(const std::vector<int64_t> &shape);

/// Decodes a whole .npy file held in memory. `name` is used in messages,
/// which have the form "NAME: error: ...". `maxBytes` bounds the data size.
bool decodeNpy(std::string_view bytes, const std::string &name,
               HostArray &out, std::string &error,
               uint64_t maxBytes = UINT64_MAX);

/// Encodes an array as a .npy file (version 1.0, C order; 3.0 when the
/// header does not fit 1.0's 64 KiB).
std::string encodeNpy(const HostArray &array);

/// Longest .npy header read (NumPy itself refuses headers over 10000 bytes
/// by default; rank is at most kMaxNpyRank).
constexpr uint64_t kMaxNpyHeaderBytes = 65536;
/// Highest rank of a .npy array (NumPy's NPY_MAXDIMS).
constexpr size_t kMaxNpyRank = 64;

/// Whether a .npy file read as `have` holds an array of `want`: the same
/// type, the same integer width with the other signedness (the IR's
/// integers are signless), or a 1-byte void file (`|V1`, what np.save
/// writes for ml_dtypes' fp8 arrays but float8_e5m2, and for its int4,
/// uint4, int2 and uint2 arrays, one element per byte; read as f8e4m3fn)
/// for any fp8 or sub-byte integer type. A fitting array takes `want` as its
/// dtype (retagNpy).
bool npyDTypeFits(DType have, DType want);
/// Gives an array read from a .npy file the call's dtype `want` where the
/// file cannot say it (fp8, int4/uint4/int2/uint2 read from a 1-byte void
/// file).
void retagNpy(HostArray &array, DType want);

/// Called with a .npy file's dtype and shape before its data is read;
/// returns false with `error` set to reject the file.
using NpyHeaderCheck = std::function<bool(
    DType dtype, const std::vector<int64_t> &shape, std::string &error)>;

/// Reads a .npy file (or "-", stdin), as a stream: the header is bounded by
/// kMaxNpyHeaderBytes, the data by `maxBytes`, and `check` sees the header
/// before any data is read (a wrong shape costs nothing).
bool readNpy(const std::string &path, HostArray &out, std::string &error,
             uint64_t maxBytes = UINT64_MAX,
             const NpyHeaderCheck &check = nullptr);

/// Writes a .npy file atomically (a temporary file renamed into place).
bool writeNpy(const std::string &path, const HostArray &array,
              std::string &error);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_NPY_H
