// Runs the kernels pallasc_add_kernel() built (their generated --target cpu
// launchers) and compares them with references computed here: exactly for
// the add, within 4 ulp-ish relative error for the softmax (the kernel's
// exp and reductions round differently from this loop's).
#include "row_softmax.h"
#include "vector_add.h"

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  // vector_add: out = x + y over [1024, 2048].
  const size_t n = 1024 * 2048;
  std::vector<float> x(n), y(n), sum(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = std::sin(0.001f * static_cast<float>(i));
    y[i] = static_cast<float>(i % 97) - 48.0f;
  }
  if (vector_add_cpu(x.data(), y.data(), sum.data()) != PALLASC_OK) {
    std::fprintf(stderr, "vector_add: %s\n", pallasc_last_error());
    return 1;
  }
  size_t addWrong = 0;
  for (size_t i = 0; i < n; ++i)
    addWrong += sum[i] != x[i] + y[i];

  // row_softmax over [4096, 1000] rows, in double for the reference.
  const size_t rows = 4096, cols = 1000;
  std::vector<float> in(rows * cols), out(rows * cols);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = 4.0f * std::cos(0.37f * static_cast<float>(i % 1543));
  if (row_softmax_cpu(in.data(), out.data()) != PALLASC_OK) {
    std::fprintf(stderr, "row_softmax: %s\n", pallasc_last_error());
    return 1;
  }
  double maxRel = 0;
  for (size_t r = 0; r < rows; ++r) {
    const float *row = &in[r * cols];
    double m = row[0], s = 0;
    for (size_t c = 0; c < cols; ++c)
      m = std::fmax(m, row[c]);
    for (size_t c = 0; c < cols; ++c)
      s += std::exp(row[c] - m);
    for (size_t c = 0; c < cols; ++c) {
      double want = std::exp(row[c] - m) / s;
      maxRel = std::fmax(maxRel, std::fabs(out[r * cols + c] - want) / want);
    }
  }

  // The error path: a status and a message.
  int status = vector_add_cpu(x.data(), nullptr, sum.data());
  std::printf("vector_add: %zu of %zu differ\n", addWrong, n);
  std::printf("row_softmax: max relative error %.2e\n", maxRel);
  std::printf("null input: status %d: %s\n", status, pallasc_last_error());
  bool ok = addWrong == 0 && maxRel < 1e-5 &&
            status == PALLASC_ERROR_INVALID_ARGUMENT;
  std::printf("%s\n", ok ? "consumer: ok" : "consumer: FAILED");
  return ok ? 0 : 1;
}
