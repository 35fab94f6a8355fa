// Runs the kernels pallasc_add_kernel() built (their generated --target cpu
// launchers) and compares them with references computed here: exactly for
// the add and the batched gather, within 4 ulp-ish relative error for the
// softmax (the kernel's exp and reductions round differently from this
// loop's).
#include "batched_gather.h"
#include "row_softmax.h"
#include "vector_add.h"

#include <cstdint>
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

  // batched_gather: vmap (in_axes 0, 0, axis size 4) of a row gather,
  // out[b, i, :] = table[b, idx[b, i], :] for 16 indices into a [256, 512]
  // table per batch element; the launcher loops over b.
  const size_t batch = 4, picks = 16, tableRows = 256, width = 512;
  std::vector<int32_t> idx(batch * picks);
  std::vector<float> table(batch * tableRows * width),
      gathered(batch * picks * width, -1.0f);
  for (size_t b = 0; b < batch; ++b)
    for (size_t i = 0; i < picks; ++i)
      idx[b * picks + i] = static_cast<int32_t>((b * 61 + i * 37 + 5) % tableRows);
  for (size_t k = 0; k < table.size(); ++k)
    table[k] = static_cast<float>(k % 9973) * 0.25f - 1000.0f;
  if (batched_gather_cpu(idx.data(), table.data(), gathered.data()) !=
      PALLASC_OK) {
    std::fprintf(stderr, "batched_gather: %s\n", pallasc_last_error());
    return 1;
  }
  size_t gatherWrong = 0;
  for (size_t b = 0; b < batch; ++b)
    for (size_t i = 0; i < picks; ++i) {
      const float *want =
          &table[(b * tableRows + static_cast<size_t>(idx[b * picks + i])) *
                 width];
      const float *got = &gathered[(b * picks + i) * width];
      for (size_t c = 0; c < width; ++c)
        gatherWrong += got[c] != want[c];
    }

  // The error path: a status and a message.
  int status = vector_add_cpu(x.data(), nullptr, sum.data());
  std::printf("vector_add: %zu of %zu differ\n", addWrong, n);
  std::printf("row_softmax: max relative error %.2e\n", maxRel);
  std::printf("batched_gather: %zu of %zu differ\n", gatherWrong,
              gathered.size());
  std::printf("null input: status %d: %s\n", status, pallasc_last_error());
  bool ok = addWrong == 0 && maxRel < 1e-5 && gatherWrong == 0 &&
            status == PALLASC_ERROR_INVALID_ARGUMENT;
  std::printf("%s\n", ok ? "consumer: ok" : "consumer: FAILED");
  return ok ? 0 : 1;
}
