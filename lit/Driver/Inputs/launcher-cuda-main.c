/* A C11 program over two generated CUDA launchers (lit/Driver/launcher-cuda.test):
 * links without the CUDA toolkit (the runtime dlopens libcuda.so.1) and, on a
 * machine without a GPU driver, gets a status and a message, not a crash. */
#include "add.h"
#include "matmul.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  /* Device pointers are never dereferenced here without a driver. */
  float *x = 0, *y = 0, *z = 0;
  pallasc_status s = add_cuda(x, y, z, NULL);
  if (s == PALLASC_ERROR_NO_DRIVER)
    printf("add: no driver: %s\n", pallasc_last_error());
  else
    printf("add: a driver\n");
  s = matmul_cuda(0, 0, 0, NULL);
  if (s == PALLASC_ERROR_NO_DRIVER)
    printf("matmul: no driver: %s\n", pallasc_last_error());
  else
    printf("matmul: a driver\n");
  return 0;
}
