//===- Npy.cpp - Host arrays and the .npy file format ----------*- C++ -*-===//

#include "src/Runtime/Npy.h"

#include "src/Support/BoundedRead.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

namespace pallasc::runtime {

//===----------------------------------------------------------------------===//
// DType and HostArray
//===----------------------------------------------------------------------===//

const char *dtypeName(DType d) { return launch::elementTypeName(d); }
size_t dtypeSize(DType d) { return launch::elementSize(d); }
bool isFloat(DType d) { return launch::isFloatElement(d); }
bool isSigned(DType d) { return launch::isSignedElement(d); }

std::optional<DType> parseDType(const std::string &name) {
  DType d;
  if (launch::parseElementType(name, d))
    return d;
  return std::nullopt;
}

std::optional<int64_t> checkedNumElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  }
  return n;
}

HostArray::HostArray(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {}

int64_t HostArray::numElements() const {
  return checkedNumElements(shape).value_or(0);
}

void HostArray::Free::operator()(uint8_t *p) const {
  if (owned)
    std::free(p);
}

HostArray HostArray::view(DType dtype, std::vector<int64_t> shape,
                          uint8_t *data) {
  HostArray a(dtype, std::move(shape));
  a.storage = std::unique_ptr<uint8_t, Free>(data, Free{false});
  return a;
}

bool HostArray::allocate() {
  std::optional<int64_t> n = checkedNumElements(shape);
  uint64_t bytes = 0;
  if (!n || __builtin_mul_overflow(static_cast<uint64_t>(*n),
                                   static_cast<uint64_t>(dtypeSize(dtype)),
                                   &bytes) ||
      bytes > (UINT64_MAX >> 2))
    return false;
  uint64_t rounded = std::max<uint64_t>(64, (bytes + 63) & ~uint64_t(63));
  void *p = std::aligned_alloc(64, rounded);
  if (!p)
    return false;
  std::memset(p, 0, rounded);
  storage =
      std::unique_ptr<uint8_t, Free>(static_cast<uint8_t *>(p), Free{true});
  return true;
}

std::string HostArray::describe() const {
  return launch::formatShape(shape) + " " + dtypeName(dtype);
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {

/// A tiny reader for the Python dict literal numpy writes:
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : s(text) {}

  bool parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape,
             std::string &error) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipSpace();
    if (!eat('{'))
      return fail(error, "expected '{' at the start of the header");
    while (true) {
      skipSpace();
      if (eat('}'))
        break;
      std::string key;
      if (!parseString(key))
        return fail(error, "expected a quoted key");
      skipSpace();
      if (!eat(':'))
        return fail(error, "expected ':' after '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (!parseString(descr)) {
          if (pos < s.size() && s[pos] == '[')
            return fail(error, "structured dtypes (a list 'descr') are not "
                               "supported");
          return fail(error, "'descr' must be a string");
        }
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (s.compare(pos, 4, "True") == 0) {
          fortran = true;
          pos += 4;
        } else if (s.compare(pos, 5, "False") == 0) {
          fortran = false;
          pos += 5;
        } else {
          return fail(error, "'fortran_order' must be True or False");
        }
        haveFortran = true;
      } else if (key == "shape") {
        // A repeated key: the last one counts, as in the Python dict numpy
        // builds from the header.
        shape.clear();
        if (!parseShape(shape, error))
          return false;
        haveShape = true;
      } else {
        return fail(error, "unexpected key '" + key + "'");
      }
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat('}'))
        break;
      return fail(error, "expected ',' or '}'");
    }
    skipSpace();
    if (pos != s.size())
      return fail(error, "unexpected text after the header dictionary");
    if (!haveDescr || !haveFortran || !haveShape)
      return fail(error, std::string("the header lacks '") +
                             (!haveDescr     ? "descr"
                              : !haveFortran ? "fortran_order"
                                             : "shape") +
                             "'");
    return true;
  }

private:
  bool fail(std::string &error, const std::string &message) {
    error = "bad .npy header: " + message + " (at offset " +
            std::to_string(pos) + " of the header)";
    return false;
  }
  void skipSpace() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\n' ||
                              s[pos] == '\t' || s[pos] == '\r'))
      ++pos;
  }
  bool eat(char c) {
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    if (pos >= s.size() || (s[pos] != '\'' && s[pos] != '"'))
      return false;
    char quote = s[pos];
    size_t end = s.find(quote, pos + 1);
    if (end == std::string::npos)
      return false;
    out = s.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    return true;
  }
  bool parseShape(std::vector<int64_t> &shape, std::string &error) {
    if (!eat('('))
      return fail(error, "'shape' must be a tuple");
    while (true) {
      skipSpace();
      if (eat(')'))
        return true;
      size_t start = pos;
      int64_t v = 0;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, s[pos] - '0', &v))
          return fail(error, "a shape dimension overflows 64 bits");
        ++pos;
      }
      // Python 2 era files may write 3L.
      if (pos < s.size() && s[pos] == 'L' && pos > start)
        ++pos;
      if (pos == start)
        return fail(error, "'shape' must hold non-negative integers");
      if (shape.size() == kMaxNpyRank)
        return fail(error, "'shape' has more than " +
                               std::to_string(kMaxNpyRank) +
                               " dimensions (NumPy's maximum)");
      shape.push_back(v);
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat(')'))
        return true;
      return fail(error, "expected ',' or ')' in 'shape'");
    }
  }

  const std::string &s;
  size_t pos = 0;
};

std::optional<DType> descrToDType(const std::string &descr, std::string &error) {
  if (descr == "bfloat16")
    return DType::BF16;
  // np.save writes ml_dtypes.float8_e5m2 arrays as "<f1" (the other fp8
  // types as "<V1", read as f8e4m3fn: see npyDTypeFits).
  if (descr == "<f1" || descr == "|f1")
    return DType::F8E5M2;
  if (descr.size() < 2) {
    error = "unsupported dtype '" + descr + "'";
    return std::nullopt;
  }
  char order = descr[0];
  std::string kind = descr.substr(1);
  if (order == '>') {
    error = "big-endian data ('" + descr +
            "') is not supported; save little-endian data (e.g. "
            "a.astype(a.dtype.newbyteorder('<')))";
    return std::nullopt;
  }
  if (order != '<' && order != '|' && order != '=') {
    error = "unsupported dtype '" + descr + "'";
    return std::nullopt;
  }
  // The table's dtypes, with any byte order mark that is not big-endian
  // (one-byte types are written with '|' but may come with '<' or '=').
  for (const launch::ElementTypeInfo &e : launch::allElementTypes())
    if (kind == e.npyDescr + 1)
      return e.type;
  std::string supported;
  for (const launch::ElementTypeInfo &e : launch::allElementTypes())
    supported += std::string(supported.empty() ? "" : ", ") + e.name +
                 " as '" + e.npyDescr + "'";
  error = "unsupported dtype '" + descr + "' (supported: " + supported + ")";
  return std::nullopt;
}

uint64_t readLE(std::string_view bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

/// Fortran (column-major) to C order.
void transposeFromFortran(const uint8_t *src, HostArray &out) {
  size_t elem = dtypeSize(out.dtype);
  int64_t n = out.numElements();
  size_t rank = out.shape.size();
  std::vector<int64_t> idx(rank, 0);
  // Column-major strides, in elements.
  std::vector<int64_t> fstride(rank, 1);
  for (size_t d = 1; d < rank; ++d)
    fstride[d] = fstride[d - 1] * out.shape[d - 1];
  uint8_t *dst = out.data();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d)
      off += idx[d] * fstride[d];
    std::memcpy(dst + i * elem, src + off * elem, elem);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out.shape[d])
        break;
      idx[d] = 0;
    }
  }
}

} // namespace

namespace {

/// What a .npy header says.
struct NpyHeader {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  bool fortran = false;
  uint64_t dataBytes = 0;
};

/// The 8 bytes of magic and version: how many bytes the header length
/// takes (2 or 4), or an error.
bool parseNpyMagic(std::string_view first, size_t &lenBytes,
                   std::string &error) {
  static const char kMagic[] = "\x93NUMPY";
  if (first.size() < 8 || first.compare(0, 6, kMagic, 6) != 0) {
    error = "not a .npy file (the magic string \\x93NUMPY is missing)";
    return false;
  }
  int major = static_cast<uint8_t>(first[6]);
  int minor = static_cast<uint8_t>(first[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    error = "unsupported .npy format version " + std::to_string(major) + "." +
            std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)";
    return false;
  }
  lenBytes = major == 1 ? 2 : 4;
  return true;
}

/// The header dictionary: dtype, shape (at most kMaxNpyRank dims), order
/// and the data size (at most `maxBytes`).
bool parseNpyDict(const std::string &header, uint64_t maxBytes, NpyHeader &h,
                  std::string &error) {
  if (header.find('\0') != std::string::npos) {
    error = "bad .npy header: it contains a NUL byte";
    return false;
  }
  std::string descr;
  HeaderParser parser(header);
  if (!parser.parse(descr, h.fortran, h.shape, error))
    return false;
  std::optional<DType> dtype = descrToDType(descr, error);
  if (!dtype)
    return false;
  h.dtype = *dtype;
  std::optional<int64_t> n = checkedNumElements(h.shape);
  if (!n || __builtin_mul_overflow(static_cast<uint64_t>(*n),
                                   static_cast<uint64_t>(dtypeSize(h.dtype)),
                                   &h.dataBytes)) {
    error = "the shape's element count overflows";
    return false;
  }
  if (h.dataBytes > maxBytes) {
    error = "the array holds " + std::to_string(h.dataBytes) +
            " bytes, over the limit of " + std::to_string(maxBytes) +
            " bytes";
    return false;
  }
  return true;
}

/// Moves the data (`src`, in the file's order) into `out`, allocated, and
/// checks bools.
bool finishArray(const NpyHeader &h, const uint8_t *src, HostArray &out,
                 bool inPlace, std::string &error) {
  if (!inPlace) {
    out = HostArray(h.dtype, h.shape);
    if (!out.allocate()) {
      error = "cannot allocate " + std::to_string(h.dataBytes) + " bytes";
      return false;
    }
    if (h.fortran && h.shape.size() > 1)
      transposeFromFortran(src, out);
    else if (h.dataBytes)
      std::memcpy(out.data(), src, h.dataBytes);
  }
  if (h.dtype == DType::Bool)
    for (int64_t i = 0, n = out.numElements(); i < n; ++i)
      if (out.data()[i] > 1) {
        error = "bool element " + std::to_string(i) + " is " +
                std::to_string(out.data()[i]) + ", not 0 or 1";
        return false;
      }
  return true;
}

std::string truncatedData(const NpyHeader &h, uint64_t available) {
  return "truncated data: the header says " +
         HostArray(h.dtype, h.shape).describe() + " (" +
         std::to_string(h.dataBytes) + " bytes) but only " +
         std::to_string(available) + " bytes follow it";
}

std::string trailingData(const NpyHeader &h, std::optional<uint64_t> extra) {
  return (extra ? std::to_string(*extra) : std::string("some")) +
         " unexpected bytes after the data of " +
         HostArray(h.dtype, h.shape).describe();
}

} // namespace

bool decodeNpy(std::string_view bytes, const std::string &name,
               HostArray &out, std::string &error, uint64_t maxBytes) {
  auto fail = [&](const std::string &message) {
    error = name + ": error: " + message;
    return false;
  };
  std::string message;
  size_t lenBytes = 0;
  if (!parseNpyMagic(bytes, lenBytes, message))
    return fail(message);
  if (bytes.size() < 8 + lenBytes)
    return fail("truncated .npy header");
  uint64_t headerLen = readLE(bytes, 8, static_cast<int>(lenBytes));
  size_t dataStart = 8 + lenBytes + headerLen;
  if (headerLen > bytes.size() || dataStart > bytes.size())
    return fail("truncated .npy header: it claims " +
                std::to_string(headerLen) + " bytes but the file has " +
                std::to_string(bytes.size()) + " bytes");
  NpyHeader h;
  if (!parseNpyDict(std::string(bytes.substr(8 + lenBytes, headerLen)),
                    maxBytes, h, message))
    return fail(message);
  uint64_t available = bytes.size() - dataStart;
  if (available < h.dataBytes)
    return fail(truncatedData(h, available));
  if (available > h.dataBytes)
    return fail(trailingData(h, available - h.dataBytes));
  if (!finishArray(h,
                   reinterpret_cast<const uint8_t *>(bytes.data()) + dataStart,
                   out, /*inPlace=*/false, message))
    return fail(message);
  return true;
}

std::string encodeNpy(const HostArray &array) {
  std::string header = "{'descr': '";
  header += launch::elementTypeInfo(array.dtype).npyDescr;
  header += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i)
    header += std::to_string(array.shape[i]) + ", ";
  if (array.shape.size() > 1)
    header.resize(header.size() - 2);
  else if (array.shape.size() == 1)
    header.resize(header.size() - 1); // "(4,)"
  header += "), }";
  // Pad with spaces and a newline so the data starts on a 64-byte boundary.
  bool v1 = header.size() + 1 + 10 < 65536;
  size_t prefix = v1 ? 10 : 12;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(v1 ? 1 : 3);
  out += '\0';
  uint64_t len = header.size();
  for (size_t i = 0; i < (v1 ? 2u : 4u); ++i)
    out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char *>(array.data()), array.byteSize());
  return out;
}

bool npyDTypeFits(DType have, DType want) {
  if (have == want)
    return true;
  if (have == DType::F8E4M3FN)
    return launch::isFloat8Element(want) || launch::isPackedElement(want);
  bool integers = !isFloat(have) && !isFloat(want) && have != DType::Bool &&
                  want != DType::Bool;
  return integers && launch::elementBits(have) == launch::elementBits(want);
}

void retagNpy(HostArray &array, DType want) {
  if (array.dtype == DType::F8E4M3FN &&
      (launch::isFloat8Element(want) || launch::isPackedElement(want)))
    array.dtype = want;
}

bool readNpy(const std::string &path, HostArray &out, std::string &error,
             uint64_t maxBytes, const NpyHeaderCheck &check) {
  auto fail = [&](const std::string &message) {
    error = path + ": error: " + message;
    return false;
  };
  // Read as a stream, each part bounded before it is read: an endless or
  // huge input (a pipe, /dev/zero, a header claiming gigabytes) costs at
  // most the header cap or the array's size, checked against the call first.
  pallasc::InputStream in;
  std::string message;
  if (!in.open(path, message))
    return fail("cannot read the file: " + message);
  std::string prefix(12, '\0');
  size_t got = 0;
  if (!in.read(prefix.data(), 8, got, message))
    return fail("cannot read the file: " + message);
  size_t lenBytes = 0;
  if (!parseNpyMagic(std::string_view(prefix.data(), got), lenBytes, message))
    return fail(message);
  size_t more = 0;
  if (!in.read(prefix.data() + 8, lenBytes, more, message))
    return fail("cannot read the file: " + message);
  if (more < lenBytes)
    return fail("truncated .npy header");
  uint64_t headerLen = readLE(prefix, 8, static_cast<int>(lenBytes));
  std::optional<uint64_t> size = in.regularSize();
  uint64_t dataStart = 8 + lenBytes + headerLen;
  if (size && dataStart > *size)
    return fail("truncated .npy header: it claims " +
                std::to_string(headerLen) + " bytes but the file has " +
                std::to_string(*size) + " bytes");
  if (headerLen > kMaxNpyHeaderBytes)
    return fail("the .npy header is " + std::to_string(headerLen) +
                " bytes, over the limit of " +
                std::to_string(kMaxNpyHeaderBytes) + " bytes");
  std::string header(headerLen, '\0');
  if (!in.read(header.data(), headerLen, got, message))
    return fail("cannot read the file: " + message);
  if (got < headerLen)
    return fail("truncated .npy header: it claims " +
                std::to_string(headerLen) + " bytes but only " +
                std::to_string(got) + " follow");
  NpyHeader h;
  if (!parseNpyDict(header, maxBytes, h, message))
    return fail(message);
  // The caller's expectations (shape, dtype) before any data is read.
  if (check && !check(h.dtype, h.shape, error))
    return false;
  if (size) {
    uint64_t available = *size - dataStart;
    if (available < h.dataBytes)
      return fail(truncatedData(h, available));
    if (available > h.dataBytes)
      return fail(trailingData(h, available - h.dataBytes));
  }
  // C order is read in place; Fortran order through a buffer.
  bool transpose = h.fortran && h.shape.size() > 1;
  out = HostArray(h.dtype, h.shape);
  std::vector<uint8_t> buffer;
  uint8_t *dst = nullptr;
  if (transpose) {
    buffer.resize(h.dataBytes);
    dst = buffer.data();
  } else {
    if (!out.allocate())
      return fail("cannot allocate " + std::to_string(h.dataBytes) + " bytes");
    dst = out.data();
  }
  if (!in.read(dst, h.dataBytes, got, message))
    return fail("cannot read the file: " + message);
  if (got < h.dataBytes)
    return fail(truncatedData(h, got));
  if (!in.atEnd(message))
    return fail(message.empty() ? trailingData(h, std::nullopt)
                                : "cannot read the file: " + message);
  if (!finishArray(h, dst, out, /*inPlace=*/!transpose, message))
    return fail(message);
  return true;
}

bool writeNpy(const std::string &path, const HostArray &array,
              std::string &error) {
  if (llvm::sys::fs::is_directory(path)) {
    error = path + ": error: cannot write the output: it is a directory";
    return false;
  }
  llvm::SmallString<256> model(llvm::sys::path::parent_path(path));
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(path).str() +
                                     ".tmp-%%%%%%%%");
  int fd = -1;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp)) {
    error = path + ": error: cannot create a temporary output file: " +
            ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << encodeNpy(array);
    os.close();
    if (os.has_error()) {
      error = path + ": error: cannot write the output: " +
              os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temp);
      return false;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    error = path + ": error: cannot move the output into place: " +
            ec.message();
    llvm::sys::fs::remove(temp);
    return false;
  }
  return true;
}

} // namespace pallasc::runtime
