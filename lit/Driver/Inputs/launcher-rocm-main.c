/* A C11 program over generated ROCm launchers (lit/Driver/launcher-rocm.test):
 * links the cpu and rocm entry points without ROCm (the runtime dlopens
 * libamdhip64.so) and, on a machine without the HIP runtime, gets a status
 * and a message, not a crash. */
#include "add.h"
#include "matmul.h"

#include <stdio.h>

int main(void) {
  /* Device pointers are never dereferenced here without a runtime. */
  float *x = 0, *y = 0, *z = 0;
  pallasc_status s = add_rocm(x, y, z, NULL);
  if (s == PALLASC_ERROR_NO_DRIVER)
    printf("add: no runtime: %s\n", pallasc_last_error());
  else
    printf("add: a runtime\n");
  s = matmul_rocm(0, 0, 0, NULL);
  if (s == PALLASC_ERROR_NO_DRIVER)
    printf("matmul: no runtime: %s\n", pallasc_last_error());
  else
    printf("matmul: a runtime\n");
  /* The host entry point of the same library links and runs beside it. */
  s = add_cpu(x, y, z);
  printf("add_cpu: %d %s\n", (int)s, pallasc_last_error());
  return 0;
}
