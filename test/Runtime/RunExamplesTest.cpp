//===- RunExamplesTest.cpp - pallasc run on the examples vs C++ refs ------===//
//
// Each example kernel runs through `pallasc run` (in process: parse, lower,
// JIT, grid executor) at small sizes and is compared with a straightforward
// C++ reference written here. Ragged variants use arrays that blocks do not
// divide: edge blocks read padding and their writes past the edge are
// dropped.
//
//===----------------------------------------------------------------------===//

#include "test/Runtime/RunTestUtils.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace pallasc;
using namespace pallasc::runtime;
using namespace pallasc::test;

namespace {

std::string example(const std::string &name) {
  return std::string(PALLASC_EXAMPLES_DIR) + "/" + name + "/kernel.mlir";
}

/// A grid spec: arrays and blocks as JSON fragments.
std::string gridSpec(const std::string &kernel, const std::string &grid,
                 const std::string &inputs, const std::string &outputs,
                 const std::string &inSpecs, const std::string &outSpecs,
                 const std::string &extra = "") {
  return "{\"schema\": \"pallasc.gridspec/v1\", \"kernel\": \"" + kernel +
         "\", \"grid\": " + grid + ", \"inputs\": " + inputs +
         ", \"outputs\": " + outputs + ", \"in_specs\": " + inSpecs +
         ", \"out_specs\": " + outSpecs + extra + "}";
}

void checkAdd(int64_t rows, int64_t cols) {
  Workspace ws;
  HostArray x = randomArray(DType::F32, {rows, cols}, 1);
  HostArray y = randomArray(DType::F32, {rows, cols}, 2);
  std::string shape = "[" + std::to_string(rows) + ", " +
                      std::to_string(cols) + "]";
  std::string array = "{\"shape\": " + shape + ", \"dtype\": \"f32\"}";
  std::string block =
      "{\"block_shape\": [32, 256], \"index_map\": \"(i, j) -> (i, j)\"}";
  std::string grid = "[" + std::to_string((rows + 31) / 32) + ", " +
                     std::to_string((cols + 255) / 256) + "]";
  auto out = runKernel(ws, example("add"),
                       gridSpec("add_kernel", grid, "[" + array + ", " + array + "]",
                            "[" + array + "]", "[" + block + ", " + block + "]",
                            "[" + block + "]"),
                       {&x, &y});
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].shape == x.shape);
  const float *o = asF32(out[0]), *a = asF32(x), *b = asF32(y);
  for (int64_t i = 0; i < rows * cols; ++i)
    REQUIRE(o[i] == a[i] + b[i]);
}

} // namespace

TEST_CASE("run: add", "[run]") {
  checkAdd(64, 512);
  SECTION("ragged: edge blocks past the array are dropped") {
    checkAdd(50, 300);
  }
}

TEST_CASE("run: softmax with the masked 1000-of-1024 tail", "[run]") {
  Workspace ws;
  const int64_t rows = 12, cols = 1000;
  HostArray x = randomArray(DType::F32, {rows, cols}, 3, 4.0);
  std::string array = "{\"shape\": [12, 1000], \"dtype\": \"f32\"}";
  std::string block =
      "{\"block_shape\": [null, 1024], \"index_map\": \"(i) -> (i, 0)\"}";
  auto out = runKernel(ws, example("softmax"),
                       gridSpec("softmax_kernel", "[12]", "[" + array + "]",
                            "[" + array + "]", "[" + block + "]",
                            "[" + block + "]"),
                       {&x});
  REQUIRE(out.size() == 1);
  const float *o = asF32(out[0]), *in = asF32(x);
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      mx = std::max<double>(mx, in[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(in[r * cols + c] - mx);
    for (int64_t c = 0; c < cols; ++c) {
      double ref = std::exp(in[r * cols + c] - mx) / sum;
      REQUIRE(std::abs(o[r * cols + c] - ref) <= 1e-6 + 1e-5 * ref);
    }
  }
}

TEST_CASE("run: layernorm", "[run]") {
  for (int64_t rows : {32, 21}) { // 21: the last block holds 5 real rows
    Workspace ws;
    const int64_t cols = 1024;
    HostArray x = randomArray(DType::F32, {rows, cols}, 4, 3.0);
    HostArray w = randomArray(DType::F32, {cols}, 5);
    HostArray b = randomArray(DType::F32, {cols}, 6);
    std::string xa = "{\"shape\": [" + std::to_string(rows) +
                     ", 1024], \"dtype\": \"f32\"}";
    std::string va = "{\"shape\": [1024], \"dtype\": \"f32\"}";
    std::string xb =
        "{\"block_shape\": [8, 1024], \"index_map\": \"(i) -> (i, 0)\"}";
    std::string vb = "{\"block_shape\": [1024], \"index_map\": \"(i) -> (0)\"}";
    auto out = runKernel(
        ws, example("layernorm"),
        gridSpec("layernorm_kernel", "[" + std::to_string((rows + 7) / 8) + "]",
             "[" + xa + ", " + va + ", " + va + "]", "[" + xa + "]",
             "[" + xb + ", " + vb + ", " + vb + "]", "[" + xb + "]"),
        {&x, &w, &b});
    REQUIRE(out.size() == 1);
    const float *o = asF32(out[0]), *in = asF32(x), *wp = asF32(w),
                *bp = asF32(b);
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t c = 0; c < cols; ++c)
        mean += in[r * cols + c];
      mean /= cols;
      for (int64_t c = 0; c < cols; ++c)
        var += (in[r * cols + c] - mean) * (in[r * cols + c] - mean);
      var /= cols;
      for (int64_t c = 0; c < cols; ++c) {
        double ref =
            (in[r * cols + c] - mean) / std::sqrt(var + 1e-5) * wp[c] + bp[c];
        REQUIRE(std::abs(o[r * cols + c] - ref) <= 1e-4 + 1e-4 * std::abs(ref));
      }
    }
  }
}

TEST_CASE("run: matmul with the scratch accumulator across k", "[run]") {
  // {M, N}: 256x256 divides the 128x128 blocks; 200x250 leaves ragged edge
  // blocks (K stays a multiple of the block: padding there would be NaN, as
  // in interpret mode).
  for (auto [m, n] : {std::pair<int64_t, int64_t>{256, 256}, {200, 250}}) {
    Workspace ws;
    const int64_t k = 384;
    HostArray a = randomArray(DType::BF16, {m, k}, 7);
    HostArray b = randomArray(DType::BF16, {k, n}, 8);
    auto dim = [](int64_t v) { return std::to_string(v); };
    auto out = runKernel(
        ws, example("matmul"),
        gridSpec("matmul_kernel",
             "[" + dim((m + 127) / 128) + ", " + dim((n + 127) / 128) + ", 3]",
             "[{\"shape\": [" + dim(m) + ", 384], \"dtype\": \"bf16\"}, "
             "{\"shape\": [384, " + dim(n) + "], \"dtype\": \"bf16\"}]",
             "[{\"shape\": [" + dim(m) + ", " + dim(n) +
                 "], \"dtype\": \"f32\"}]",
             "[{\"block_shape\": [128, 128], \"index_map\": \"(m, n, k) -> (m, "
             "k)\"}, {\"block_shape\": [128, 128], \"index_map\": \"(m, n, k) "
             "-> (k, n)\"}]",
             "[{\"block_shape\": [128, 128], \"index_map\": \"(m, n, k) -> (m, "
             "n)\"}]",
             ", \"scratch_shapes\": [{\"shape\": [128, 128], \"dtype\": "
             "\"f32\", \"memory_space\": \"vmem\"}]"),
        {&a, &b});
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].shape == std::vector<int64_t>{m, n});
    const uint16_t *ap = asU16(a), *bp = asU16(b);
    const float *o = asF32(out[0]);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double ref = 0;
        for (int64_t l = 0; l < k; ++l)
          ref += double(bf16ToFloat(ap[i * k + l])) * bf16ToFloat(bp[l * n + j]);
        REQUIRE(std::abs(o[i * n + j] - ref) <= 1e-4 + 1e-5 * std::abs(ref));
      }
  }
}

TEST_CASE("run: flash attention vs a naive softmax(QK^T/8)V", "[run]") {
  // 200 query rows: the second 128-row block is ragged. Keys and values
  // have the 1024 rows the kernel walks.
  Workspace ws;
  const int64_t bh = 2, sq = 200, sk = 1024, d = 64;
  HostArray q = randomArray(DType::F16, {bh, sq, d}, 9);
  HostArray kk = randomArray(DType::F16, {bh, sk, d}, 10);
  HostArray v = randomArray(DType::F16, {bh, sk, d}, 11);
  std::string qa = "{\"shape\": [2, 200, 64], \"dtype\": \"f16\"}";
  std::string ka = "{\"shape\": [2, 1024, 64], \"dtype\": \"f16\"}";
  std::string qb = "{\"block_shape\": [null, 128, 64], \"index_map\": \"(b, "
                   "i) -> (b, i, 0)\"}";
  std::string kb = "{\"block_shape\": [null, 1024, 64], \"index_map\": \"(b, "
                   "i) -> (b, 0, 0)\"}";
  auto out = runKernel(ws, example("flash_attention"),
                       gridSpec("mha_forward_kernel", "[2, 2]",
                            "[" + qa + ", " + ka + ", " + ka + "]",
                            "[" + qa + "]", "[" + qb + ", " + kb + ", " + kb + "]",
                            "[" + qb + "]"),
                       {&q, &kk, &v});
  REQUIRE(out.size() == 1);
  const uint16_t *qp = asU16(q), *kp = asU16(kk), *vp = asU16(v),
                 *o = asU16(out[0]);
  std::vector<double> s(sk);
  for (int64_t b = 0; b < bh; ++b)
    for (int64_t i = 0; i < sq; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < sk; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c)
          dot += double(halfToFloat(qp[(b * sq + i) * d + c])) *
                 halfToFloat(kp[(b * sk + j) * d + c]);
        s[j] = dot / 8;
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < sk; ++j)
        sum += (s[j] = std::exp(s[j] - mx));
      for (int64_t c = 0; c < d; ++c) {
        double ref = 0;
        for (int64_t j = 0; j < sk; ++j)
          ref += s[j] * halfToFloat(vp[(b * sk + j) * d + c]);
        ref /= sum;
        // f16 output; p is rounded to f16 before the second dot.
        REQUIRE(std::abs(halfToFloat(o[(b * sq + i) * d + c]) - ref) <=
                2e-3 + 2e-3 * std::abs(ref));
      }
    }
}

TEST_CASE("run: scalar prefetch gather", "[run]") {
  Workspace ws;
  HostArray idx(DType::I32, {16});
  REQUIRE(idx.allocate());
  int32_t *ip = reinterpret_cast<int32_t *>(idx.data());
  for (int i = 0; i < 16; ++i)
    ip[i] = (i * 7 + 3) % 40;
  HostArray table = randomArray(DType::F32, {40, 512}, 12);
  std::string block =
      "{\"block_shape\": [null, 512], \"index_map\": \"@table_index_map\"}";
  std::string outBlock =
      "{\"block_shape\": [null, 512], \"index_map\": \"(i) -> (i, 0)\"}";
  auto out = runKernel(
      ws, example("scalar_prefetch"),
      gridSpec("gather_rows_kernel", "[16]",
           "[{\"shape\": [16], \"dtype\": \"i32\"}, {\"shape\": [40, 512], "
           "\"dtype\": \"f32\"}]",
           "[{\"shape\": [16, 512], \"dtype\": \"f32\"}]", "[" + block + "]",
           "[" + outBlock + "]", ", \"num_scalar_prefetch\": 1"),
      {&idx, &table});
  REQUIRE(out.size() == 1);
  const float *o = asF32(out[0]), *t = asF32(table);
  for (int i = 0; i < 16; ++i)
    for (int c = 0; c < 512; ++c)
      REQUIRE(o[i * 512 + c] == t[ip[i] * 512 + c]);
}
