// Runs the CPU entry points of the kernels pallasc_kernel() built and
// compares them with references computed here. The inputs are chosen so that
// every result is exact in f32 whatever the order of the additions (small
// multiples of powers of two), so the comparison is exact.
#include "matmul.h"
#include "vector_add.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

/// The bf16 bits of `f` (exact: every value used here is a bf16).
uint16_t bf16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

int checkAdd() {
  const size_t n = 1024 * 2048;
  std::vector<float> x(n), y(n), sum(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1021) * 0.25f;
    y[i] = static_cast<float>(i % 97) - 48.0f;
  }
  if (vector_add_cpu(x.data(), y.data(), sum.data()) != PALLASC_OK) {
    std::fprintf(stderr, "vector_add_cpu: %s\n", pallasc_last_error());
    return 1;
  }
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += sum[i] != x[i] + y[i];
  std::printf("vector_add: %zu of %zu elements differ\n", wrong, n);
  return wrong != 0;
}

int checkMatmul() {
  const size_t m = 1024, k = 512, n = 1024;
  std::vector<float> a(m * k), b(k * n);
  std::vector<uint16_t> aBits(m * k), bBits(k * n);
  for (size_t i = 0; i < m * k; ++i) {
    a[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
    aBits[i] = bf16Bits(a[i]);
  }
  for (size_t i = 0; i < k * n; ++i) {
    b[i] = static_cast<float>(static_cast<int>((i * 5) % 11) - 5) * 0.125f;
    bBits[i] = bf16Bits(b[i]);
  }
  std::vector<float> c(m * n, -1.0f);
  if (matmul_cpu(aBits.data(), bBits.data(), c.data()) != PALLASC_OK) {
    std::fprintf(stderr, "matmul_cpu: %s\n", pallasc_last_error());
    return 1;
  }
  // The reference, row by row: want[i, :] = sum_p a[i, p] * b[p, :].
  size_t wrong = 0;
  std::vector<float> want(n);
  for (size_t i = 0; i < m; ++i) {
    std::fill(want.begin(), want.end(), 0.0f);
    for (size_t p = 0; p < k; ++p) {
      float av = a[i * k + p];
      const float *brow = &b[p * n];
      for (size_t j = 0; j < n; ++j)
        want[j] += av * brow[j];
    }
    for (size_t j = 0; j < n; ++j)
      wrong += c[i * n + j] != want[j];
  }
  std::printf("matmul: %zu of %zu elements differ\n", wrong, m * n);
  return wrong != 0;
}

} // namespace

int main() {
  int failed = checkAdd();
  failed |= checkMatmul();
  return failed;
}
