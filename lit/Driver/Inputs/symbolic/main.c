/* Calls one symbolic CPU library (rmsnorm_cpu) at three row counts and
 * checks each result against an RMSNorm computed here; then checks that a
 * size breaking a constraint (rmsnorm8_cpu: n a multiple of 8) returns
 * PALLASC_ERROR_INVALID_ARGUMENT with its message, and that a valid size of
 * the same library runs. */
#include "rmsnorm.h"
#include "rmsnorm8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 128 };

static float next(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / (float)(1u << 24) * 4.0f - 2.0f;
}

/* 1 if rmsnorm of x (n rows) with w equals y within 1e-5. */
static int check(const float *x, const float *w, const float *y, int64_t n) {
  for (int64_t r = 0; r < n; ++r) {
    double ms = 0;
    for (int c = 0; c < D; ++c)
      ms += (double)x[r * D + c] * x[r * D + c];
    ms = ms / D + 1e-6;
    for (int c = 0; c < D; ++c) {
      double ref = x[r * D + c] / sqrt(ms) * w[c];
      if (fabs(ref - y[r * D + c]) > 1e-5 * (1 + fabs(ref)))
        return 0;
    }
  }
  return 1;
}

static int run(int64_t n, pallasc_status (*f)(const float *, const float *,
                                              float *, int64_t),
               const char *name) {
  uint32_t seed = (uint32_t)n;
  float *x = malloc(sizeof(float) * (size_t)(n * D));
  float *y = malloc(sizeof(float) * (size_t)(n * D));
  float w[D];
  for (int64_t i = 0; i < n * D; ++i)
    x[i] = next(&seed);
  for (int c = 0; c < D; ++c)
    w[c] = next(&seed);
  pallasc_status s = f(x, w, y, n);
  int ok = s == PALLASC_OK && check(x, w, y, n);
  printf("%s n = %lld: %s\n", name, (long long)n,
         s != PALLASC_OK ? pallasc_last_error() : ok ? "ok" : "wrong");
  free(x);
  free(y);
  return ok;
}

int main(void) {
  int ok = run(1, rmsnorm_cpu, "rmsnorm") && run(7, rmsnorm_cpu, "rmsnorm") &&
           run(1000, rmsnorm_cpu, "rmsnorm") &&
           run(16, rmsnorm8_cpu, "rmsnorm8");
  static float x[100 * D], y[100 * D], w[D];
  pallasc_status s = rmsnorm8_cpu(x, w, y, 100);
  printf("n = 100: status %d (%s): %s\n", (int)s,
         s == PALLASC_ERROR_INVALID_ARGUMENT ? "PALLASC_ERROR_INVALID_ARGUMENT"
                                             : "?",
         pallasc_last_error());
  return ok && s == PALLASC_ERROR_INVALID_ARGUMENT ? 0 : 1;
}
