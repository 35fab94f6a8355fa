//===- NpyTest.cpp - .npy reading and writing -----------------------------===//

#include "src/Runtime/Npy.h"

#include "src/Runtime/Float16.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <iterator>
#include <fstream>

using namespace pallasc::runtime;

namespace {

HostArray makeArray(DType dtype, std::vector<int64_t> shape) {
  HostArray a(dtype, std::move(shape));
  REQUIRE(a.allocate());
  // Distinct bytes, valid for every dtype (bools get 0/1).
  for (size_t i = 0; i < a.byteSize(); ++i)
    a.data()[i] = dtype == DType::Bool ? i % 2 : static_cast<uint8_t>(i * 37 + 5);
  return a;
}

/// A .npy file with the given header dictionary and data bytes.
std::string npyWith(const std::string &dict, const std::string &data,
                    int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string decodeError(const std::string &bytes) {
  HostArray a;
  std::string error;
  CHECK_FALSE(decodeNpy(bytes, "bad.npy", a, error));
  return error;
}

} // namespace

TEST_CASE("npy dtypes are the launch library's element type table",
          "[npy]") {
  using pallasc::launch::ElementTypeInfo;
  // What NumPy (and ml_dtypes, for bf16) call each type, pinned here so that
  // a table edit that changes a file format shows up.
  const std::pair<const char *, const char *> numpy[] = {
      {"bool", "|b1"}, {"i8", "|i1"},  {"i16", "<i2"}, {"i32", "<i4"},
      {"i64", "<i8"},  {"u8", "|u1"},  {"u16", "<u2"}, {"u32", "<u4"},
      {"u64", "<u8"},  {"f16", "<f2"}, {"bf16", "<V2"}, {"f32", "<f4"},
      {"f64", "<f8"},  {"f8e4m3fn", "|V1"}, {"f8e5m2", "|V1"},
      {"f8e4m3fnuz", "|V1"}, {"f8e5m2fnuz", "|V1"}, {"i4", "|V1"},
      {"u4", "|V1"}, {"i2", "|V1"}, {"u2", "|V1"}};
  REQUIRE(pallasc::launch::allElementTypes().size() == std::size(numpy));
  size_t i = 0;
  for (const ElementTypeInfo &e : pallasc::launch::allElementTypes()) {
    INFO(e.name);
    CHECK(std::string(e.name) == numpy[i].first);
    CHECK(std::string(e.npyDescr) == numpy[i].second);
    ++i;
    // Npy's names are the table's.
    CHECK(std::string(dtypeName(e.type)) == e.name);
    CHECK(parseDType(e.name) == e.type);
    CHECK(dtypeSize(e.type) == e.size);
    CHECK(isFloat(e.type) == (e.kind == ElementTypeInfo::Kind::Float));
    CHECK(isSigned(e.type) == (e.kind == ElementTypeInfo::Kind::Signed));
    // Written with the table's dtype, and read back from it with any byte
    // order mark but big-endian.
    HostArray a = makeArray(e.type, {2});
    CHECK(encodeNpy(a).find(std::string("'descr': '") + e.npyDescr + "'") !=
          std::string::npos);
    for (char order : {'<', '|', '='}) {
      std::string descr = order + std::string(e.npyDescr + 1);
      HostArray b;
      std::string error;
      INFO(descr);
      REQUIRE(decodeNpy(npyWith("{'descr': '" + descr +
                                    "', 'fortran_order': False, 'shape': "
                                    "(2,), }",
                                std::string(reinterpret_cast<char *>(a.data()),
                                            a.byteSize())),
                        "x.npy", b, error));
      // A 1-byte void file cannot say which fp8 type it holds: it reads as
      // f8e4m3fn and fits every fp8 operand, which then retags it.
      CHECK(npyDTypeFits(b.dtype, e.type));
      retagNpy(b, e.type);
      CHECK(b.dtype == e.type);
    }
  }
  CHECK_FALSE(npyDTypeFits(DType::F8E5M2, DType::F8E4M3FN));
  CHECK_FALSE(npyDTypeFits(DType::F8E4M3FN, DType::U8));
  // ml_dtypes' int4/uint4/int2/uint2 files: one element per byte, "<V1".
  CHECK(npyDTypeFits(DType::F8E4M3FN, DType::I4));
  CHECK(npyDTypeFits(DType::F8E4M3FN, DType::U2));
  CHECK_FALSE(npyDTypeFits(DType::I8, DType::I4));
  CHECK_FALSE(npyDTypeFits(DType::I4, DType::I2));
  CHECK(npyDTypeFits(DType::U8, DType::I8));
  CHECK_FALSE(npyDTypeFits(DType::F16, DType::I16));
  CHECK_FALSE(parseDType("c64"));
  CHECK_THAT(decodeError(npyWith(
                 "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                 std::string(8, '\0'))),
             Catch::Contains("supported: bool as '|b1', i8 as '|i1'") &&
                 Catch::Contains("bf16 as '<V2', f32 as '<f4', f64 as '<f8', "
                                 "f8e4m3fn as '|V1'"));
}

TEST_CASE("npy round trip for every dtype", "[npy]") {
  for (const pallasc::launch::ElementTypeInfo &e :
       pallasc::launch::allElementTypes()) {
    DType d = e.type;
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {7}, {3, 5}, {2, 0, 4}, {2, 3, 4}}) {
      HostArray a = makeArray(d, shape);
      std::string bytes = encodeNpy(a);
      // The data starts on a 64-byte boundary, as numpy writes it.
      uint16_t headerLen = static_cast<uint8_t>(bytes[8]) |
                           (static_cast<uint8_t>(bytes[9]) << 8);
      CHECK((10 + headerLen) % 64 == 0);
      HostArray b;
      std::string error;
      INFO(dtypeName(d) << " " << a.describe());
      REQUIRE(decodeNpy(bytes, "x.npy", b, error));
      retagNpy(b, d);
      CHECK(b.dtype == d);
      CHECK(b.shape == a.shape);
      CHECK(std::memcmp(a.data(), b.data(), a.byteSize()) == 0);
    }
  }
}

TEST_CASE("npy headers as numpy and ml_dtypes write them", "[npy]") {
  // np.save(f, np.ones((2, 3), np.float32))
  float ones[6] = {1, 1, 1, 1, 1, 1};
  std::string data(reinterpret_cast<char *>(ones), sizeof(ones));
  HostArray a;
  std::string error;
  REQUIRE(decodeNpy(
      npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
              data),
      "x.npy", a, error));
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(a.dtype == DType::F32);
  // ml_dtypes.bfloat16: np.save writes the 2-byte void dtype.
  for (const char *descr : {"<V2", "|V2", "bfloat16"}) {
    uint16_t v[2] = {floatToBF16(1.5f), floatToBF16(-2.0f)};
    REQUIRE(decodeNpy(npyWith(std::string("{'descr': '") + descr +
                                  "', 'fortran_order': False, 'shape': (2,), }",
                              std::string(reinterpret_cast<char *>(v), 4)),
                      "x.npy", a, error));
    CHECK(a.dtype == DType::BF16);
    CHECK(bf16ToFloat(reinterpret_cast<uint16_t *>(a.data())[1]) == -2.0f);
  }
  // ml_dtypes.float8_e5m2: np.save writes '<f1'.
  uint8_t e5m2[2] = {0x3c, 0x7c}; // 1.0, inf
  REQUIRE(decodeNpy(npyWith("{'descr': '<f1', 'fortran_order': False, "
                            "'shape': (2,), }",
                            std::string(reinterpret_cast<char *>(e5m2), 2)),
                    "x.npy", a, error));
  CHECK(a.dtype == DType::F8E5M2);
  // The bf16 we write reads back as '<V2' (what np.load then returns as V2).
  HostArray bf = makeArray(DType::BF16, {3});
  CHECK(encodeNpy(bf).find("'descr': '<V2'") != std::string::npos);
  // Version 2.0 headers, '=' byte order, a 0-d array, double quotes.
  double pi = 3.25;
  REQUIRE(decodeNpy(npyWith("{\"descr\": \"=f8\", \"fortran_order\": False, "
                            "\"shape\": ()}",
                            std::string(reinterpret_cast<char *>(&pi), 8), 2),
                    "x.npy", a, error));
  CHECK(a.shape.empty());
  CHECK(*reinterpret_cast<double *>(a.data()) == 3.25);
}

TEST_CASE("npy Fortran order is read as C order", "[npy]") {
  // Column-major [[0, 1, 2], [3, 4, 5]] is stored 0 3 1 4 2 5.
  int32_t v[6] = {0, 3, 1, 4, 2, 5};
  HostArray a;
  std::string error;
  REQUIRE(decodeNpy(
      npyWith("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
              std::string(reinterpret_cast<char *>(v), sizeof(v))),
      "x.npy", a, error));
  const int32_t *p = reinterpret_cast<const int32_t *>(a.data());
  for (int i = 0; i < 6; ++i)
    CHECK(p[i] == i);
}

TEST_CASE("npy errors name the file and the problem", "[npy]") {
  std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  std::string eight(8, '\0');
  // A header of `descr` and `shape` (fortran_order False) over 8 zero bytes.
  auto header = [&](const std::string &descr, const std::string &shape) {
    return npyWith("{'descr': " + descr +
                       ", 'fortran_order': False, "
                       "'shape': " +
                       shape + ", }",
                   eight);
  };
  const std::pair<std::string, const char *> cases[] = {
      {"hello", "bad.npy: error: not a .npy file"},
      {std::string("\x93NUMPY\x04\x00\x10\x00{}", 12),
       "unsupported .npy format version 4.0"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{", 11), "truncated .npy header"},
      {npyWith("['descr']", eight), "bad .npy header: expected '{'"},
      {npyWith("{'descr': '<f4', 'shape': (2,), }", eight),
       "lacks 'fortran_order'"},
      {npyWith("{'descr': '<f4', 'fortran_order': False, "
               "'shape': (2,), 'extra': 1}",
               eight),
       "unexpected key 'extra'"},
      {npyWith("{'descr': '<f4', 'fortran_order': Maybe, "
               "'shape': (2,), }",
               eight),
       "'fortran_order' must be True or False"},
      {header("'<f4'", "(2, -1)"), "'shape' must hold non-negative integers"},
      {header("'<f4'", "(99999999999999999999,)"), "overflows"},
      {header("'<f4'", "(4294967296, 4294967296)"), "element count overflows"},
      {header("'<c8'", "(2,)"), "unsupported dtype '<c8'"},
      {header("'>f4'", "(2,)"), "big-endian"},
      {npyWith("{'descr': [('a', '<f4')], "
               "'fortran_order': False, 'shape': (2,), }",
               eight),
       "structured dtypes"},
      {npyWith(f4, std::string(7, '\0')),
       "truncated data: the header says [2] f32 (8 bytes) but only 7 bytes "
       "follow it"},
      {npyWith(f4, std::string(9, '\0')), "1 unexpected bytes after the data"},
      {npyWith("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
               std::string("\x01\x07", 2)),
       "bool element 1 is 7"},
  };
  for (const auto &[bytes, message] : cases) {
    INFO(message);
    CHECK_THAT(decodeError(bytes), Catch::Contains(message));
  }
  HostArray a;
  std::string error;
  CHECK_FALSE(decodeNpy(npyWith(f4, eight), "big.npy", a, error, 4));
  CHECK_THAT(error, Catch::Contains("over the limit of 4 bytes"));
}

TEST_CASE("npy files are written atomically and read back", "[npy]") {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("pallasc-npy", dir));
  std::string path = (dir + "/a.npy").str();
  HostArray a = makeArray(DType::I16, {4, 3});
  std::string error;
  REQUIRE(writeNpy(path, a, error));
  HostArray b;
  REQUIRE(readNpy(path, b, error));
  CHECK(b.shape == a.shape);
  CHECK(std::memcmp(a.data(), b.data(), a.byteSize()) == 0);
  // Only the file itself is left (no temporaries).
  std::error_code ec;
  int entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    ++entries;
  CHECK(entries == 1);
  CHECK_FALSE(readNpy((dir + "/missing.npy").str(), b, error));
  CHECK_THAT(error, Catch::Contains("missing.npy: error: cannot read the file"));
  CHECK_FALSE(writeNpy(dir.str().str(), a, error));
  CHECK_THAT(error, Catch::Contains("it is a directory"));
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("f16 and bf16 conversions round to nearest even", "[npy]") {
  CHECK(floatToHalf(1.0f) == 0x3c00);
  CHECK(floatToHalf(65504.0f) == 0x7bff);
  CHECK(floatToHalf(1e6f) == 0x7c00);
  CHECK(floatToHalf(5.960464477539063e-08f) == 0x0001);
  CHECK(halfToFloat(0x0001) == 5.960464477539063e-08f);
  CHECK(halfToFloat(0xc000) == -2.0f);
  CHECK(floatToBF16(1.0f) == 0x3f80);
  CHECK(floatToBF16(1.00390625f) == 0x3f80); // tie, even stays
  CHECK(floatToBF16(1.01171875f) == 0x3f82); // tie, odd rounds up
  for (float f : {0.1f, -3.7f, 1234.5f, 1e-3f})
    CHECK(std::abs(halfToFloat(floatToHalf(f)) - f) <= std::abs(f) * 1e-3f);
}

TEST_CASE("fp8 codes decode to ml_dtypes' values", "[npy]") {
  using pallasc::launch::Float8Format;
  Float8Format e4m3fn, e5m2, e4m3fnuz, e5m2fnuz;
  REQUIRE(pallasc::launch::float8Format(DType::F8E4M3FN, e4m3fn));
  REQUIRE(pallasc::launch::float8Format(DType::F8E5M2, e5m2));
  REQUIRE(pallasc::launch::float8Format(DType::F8E4M3FNUZ, e4m3fnuz));
  REQUIRE(pallasc::launch::float8Format(DType::F8E5M2FNUZ, e5m2fnuz));
  CHECK_FALSE(pallasc::launch::float8Format(DType::BF16, e4m3fn));
  // Values as ml_dtypes gives them (np.arange(256, dtype=np.uint8).view(t)).
  CHECK(float8ToFloat(e4m3fn, 0x38) == 1.0f);
  CHECK(float8ToFloat(e4m3fn, 0x7e) == 448.0f);
  CHECK(float8ToFloat(e4m3fn, 0x01) == 0.001953125f); // 2^-9
  CHECK(std::isnan(float8ToFloat(e4m3fn, 0x7f)));
  CHECK(std::isnan(float8ToFloat(e4m3fn, 0xff)));
  CHECK(std::signbit(float8ToFloat(e4m3fn, 0x80)));
  CHECK(float8ToFloat(e5m2, 0x3c) == 1.0f);
  CHECK(float8ToFloat(e5m2, 0x7b) == 57344.0f);
  CHECK(float8ToFloat(e5m2, 0x7c) == INFINITY);
  CHECK(float8ToFloat(e5m2, 0xfc) == -INFINITY);
  CHECK(std::isnan(float8ToFloat(e5m2, 0x7d)));
  CHECK(float8ToFloat(e5m2, 0x01) == 1.52587890625e-05f); // 2^-16
  CHECK(float8ToFloat(e4m3fnuz, 0x40) == 1.0f);
  CHECK(float8ToFloat(e4m3fnuz, 0x7f) == 240.0f);
  CHECK(std::isnan(float8ToFloat(e4m3fnuz, 0x80)));
  CHECK(float8ToFloat(e5m2fnuz, 0x40) == 1.0f);
  CHECK(float8ToFloat(e5m2fnuz, 0x7f) == 57344.0f);
  CHECK(float8ToFloat(e5m2fnuz, 0xff) == -57344.0f);
  CHECK(std::isnan(float8ToFloat(e5m2fnuz, 0x80)));
  // Every finite code is its own nearest code (but -0, which the fnuz
  // formats lack: their 0x80 is NaN).
  for (const Float8Format *f : {&e4m3fn, &e5m2, &e4m3fnuz, &e5m2fnuz})
    for (unsigned code = 0; code < 256; ++code) {
      float v = float8ToFloat(*f, static_cast<uint8_t>(code));
      if (std::isfinite(v))
        CHECK(nearestFloat8(*f, v) == code);
    }
  // Ties go to the even code: 1.0625 is halfway between e4m3fn's 1.0 and
  // 1.125, 1.1875 between 1.125 and 1.25.
  CHECK(nearestFloat8(e4m3fn, 1.0625f) == 0x38);
  CHECK(nearestFloat8(e4m3fn, 1.1875f) == 0x3a);
}

TEST_CASE("a HostArray view reads foreign memory and never frees it",
          "[npy]") {
  alignas(64) float buffer[6] = {1, 2, 3, 4, 5, 6};
  {
    HostArray view = HostArray::view(DType::F32, {2, 3},
                                     reinterpret_cast<uint8_t *>(buffer));
    REQUIRE(view.data() == reinterpret_cast<uint8_t *>(buffer));
    REQUIRE(view.byteSize() == sizeof(buffer));
    reinterpret_cast<float *>(view.data())[5] = 60;
    // Moving the view keeps it a view; the moved-to array owns nothing.
    HostArray moved = std::move(view);
    REQUIRE(moved.data() == reinterpret_cast<uint8_t *>(buffer));
    // Allocating replaces the view with owned storage (freed normally).
    REQUIRE(moved.allocate());
    REQUIRE(moved.data() != reinterpret_cast<uint8_t *>(buffer));
  }
  // The buffer is intact: written through the view, never freed (a free of
  // stack memory would abort, and ASan would report it).
  REQUIRE(buffer[5] == 60);
  REQUIRE(buffer[0] == 1);
}

TEST_CASE("npy headers are read as numpy reads them", "[npy]") {
  HostArray a;
  std::string error;
  // A repeated key: the last one counts (a Python dict literal), nothing is
  // concatenated.
  REQUIRE(decodeNpy(npyWith("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (2,), 'shape': (3,), }",
                            std::string(12, '\0')),
                    "x.npy", a, error));
  CHECK(a.shape == std::vector<int64_t>{3});
  // At most NumPy's 64 dimensions.
  std::string dims;
  for (int i = 0; i < 65; ++i)
    dims += "1, ";
  CHECK_FALSE(decodeNpy(npyWith("{'descr': '<f4', 'fortran_order': True, "
                                "'shape': (" + dims + "), }",
                                std::string(4, '\0')),
                        "rank.npy", a, error));
  CHECK_THAT(error, Catch::Contains("'shape' has more than 64 dimensions"));
}

TEST_CASE("readNpy checks the header before it reads the data", "[npy]") {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("pallasc-npy", dir));
  std::string path = (dir + "/f.npy").str();
  // A Fortran-order header for a big array, no data: the caller's check
  // rejects the shape before anything is read or transposed.
  {
    std::ofstream f(path, std::ios::binary);
    f << npyWith("{'descr': '<f4', 'fortran_order': True, "
                 "'shape': (1000, 1000, 1000), }",
                 "");
  }
  HostArray a;
  std::string error;
  bool checked = false;
  auto check = [&](DType dtype, const std::vector<int64_t> &shape,
                   std::string &message) {
    checked = true;
    CHECK(dtype == DType::F32);
    CHECK(shape == std::vector<int64_t>{1000, 1000, 1000});
    message = "wrong shape";
    return false;
  };
  CHECK_FALSE(readNpy(path, a, error, UINT64_MAX, check));
  CHECK(checked);
  CHECK(error == "wrong shape");
  // Without the check, the missing data is the error, found from the size.
  CHECK_FALSE(readNpy(path, a, error));
  CHECK_THAT(error, Catch::Contains("truncated data"));
  // A header claiming more than kMaxNpyHeaderBytes.
  {
    std::ofstream f(path, std::ios::binary);
    f << std::string("\x93NUMPY\x02\x00\x00\x00\x10\x00", 12);
    f << std::string(128, ' ');
  }
  CHECK_FALSE(readNpy(path, a, error));
  CHECK_THAT(error, Catch::Contains("truncated .npy header"));
  llvm::sys::fs::remove_directories(dir);
}
