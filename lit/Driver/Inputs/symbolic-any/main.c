/* Calls one symbolic CPU library whose input is in memory space `any`
 * (rows_cpu: out = 2 * x + n, read 8 rows at a time past the edge) at three
 * row counts and checks each result. */
#include "rows.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { D = 128 };

static int run(int64_t n) {
  float *x = malloc(sizeof(float) * (size_t)(n * D));
  float *y = malloc(sizeof(float) * (size_t)(n * D));
  for (int64_t i = 0; i < n * D; ++i)
    x[i] = (float)(i % 97) * 0.5f - 3.0f;
  pallasc_status s = rows_cpu(x, y, n);
  int ok = s == PALLASC_OK;
  for (int64_t i = 0; ok && i < n * D; ++i)
    ok = y[i] == 2.0f * x[i] + (float)n;
  printf("rows n = %lld: %s\n", (long long)n,
         s != PALLASC_OK ? pallasc_last_error() : ok ? "ok" : "wrong");
  free(x);
  free(y);
  return ok;
}

int main(void) { return run(1) && run(7) && run(1000) ? 0 : 1; }
