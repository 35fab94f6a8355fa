/* A C11 program over one symbolic CUDA + HIP library (rmsnorm8: n a multiple
 * of 8; lit/Driver/launcher-gpu-symbolic.test): every call checks n against
 * the constraints before anything else (the same messages as the CPU entry
 * point), then loads the driver; on a machine without one a valid n gets a
 * status and a message, not a crash. */
#include "rmsnorm8.h"

#include <stdio.h>

static void report(const char *what, pallasc_status s) {
  printf("%s: status %d: %s\n", what, (int)s,
         s == PALLASC_OK ? "" : pallasc_last_error());
}

int main(void) {
  /* Null device pointers: the values are checked first, and without a
   * driver nothing is launched. */
  report("cuda n = 100", rmsnorm8_cuda(0, 0, 0, 100, NULL));
  report("rocm n = 100", rmsnorm8_rocm(0, 0, 0, 100, NULL));
  report("cuda n = 0", rmsnorm8_cuda(0, 0, 0, 0, NULL));
  report("cuda n = 2^32", rmsnorm8_cuda(0, 0, 0, (int64_t)1 << 32, NULL));
  pallasc_status s = rmsnorm8_cuda(0, 0, 0, 16, NULL);
  printf("cuda n = 16: %s\n", s == PALLASC_ERROR_NO_DRIVER
                                  ? "no driver"
                                  : "a driver");
  s = rmsnorm8_rocm(0, 0, 0, 16, NULL);
  printf("rocm n = 16: %s\n", s == PALLASC_ERROR_NO_DRIVER
                                  ? "no runtime"
                                  : "a runtime");
  return 0;
}
