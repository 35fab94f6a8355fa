// Runs generated --target cpu launchers (launcher-cpu.test) against
// references computed here, and their error paths.
#include "add.h"
#include "gather_dyn.h"
#include "gather_rows.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::printf("FAIL line %d: %s\n", __LINE__, #cond);                      \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main() {
  // add: out = x + y over [1024, 2048].
  const size_t n = 1024 * 2048;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (size_t i = 0; i < n; ++i) {
    x[i] = 0.5f * static_cast<float>(i % 1000);
    y[i] = 1.0f - static_cast<float>(i % 77);
  }
  CHECK(add_cpu(x.data(), y.data(), out.data()) == PALLASC_OK);
  CHECK(std::strcmp(pallasc_last_error(), "") == 0);
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += out[i] != x[i] + y[i];
  CHECK(wrong == 0);
  std::printf("add: %zu of %zu elements differ\n", wrong, n);

  // A null operand: a status and a message, no crash.
  CHECK(add_cpu(x.data(), nullptr, out.data()) ==
        PALLASC_ERROR_INVALID_ARGUMENT);
  std::printf("null: %s\n", pallasc_last_error());

  // gather_rows: out[i, :] = table[idx[i], :] (scalar prefetch, @func map).
  std::vector<int32_t> idx(16);
  std::vector<float> table(256 * 512), rows(16 * 512);
  for (int i = 0; i < 16; ++i)
    idx[i] = (i * 37 + 5) % 256;
  for (size_t i = 0; i < table.size(); ++i)
    table[i] = static_cast<float>(i) * 0.25f;
  CHECK(gather_rows_cpu(idx.data(), table.data(), rows.data()) == PALLASC_OK);
  wrong = 0;
  for (int i = 0; i < 16; ++i)
    for (int c = 0; c < 512; ++c)
      wrong += rows[i * 512 + c] != table[idx[i] * 512 + c];
  CHECK(wrong == 0);
  std::printf("gather_rows: %zu wrong\n", wrong);

  // gather_dyn: the same with a dynamic grid bound; rows past the bound are
  // never written (interpret mode's NaN).
  std::vector<float> dyn(16 * 512, 0.0f);
  CHECK(gather_dyn_cpu(idx.data(), table.data(), dyn.data(), 8) == PALLASC_OK);
  wrong = 0;
  for (int i = 0; i < 16; ++i)
    for (int c = 0; c < 512; ++c)
      wrong += i < 8 ? dyn[i * 512 + c] != table[idx[i] * 512 + c]
                     : !std::isnan(dyn[i * 512 + c]);
  CHECK(wrong == 0);
  std::printf("gather_dyn: %zu wrong\n", wrong);
  CHECK(gather_dyn_cpu(idx.data(), table.data(), dyn.data(), -3) ==
        PALLASC_ERROR_INVALID_ARGUMENT);
  std::printf("bound: %s\n", pallasc_last_error());

  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
