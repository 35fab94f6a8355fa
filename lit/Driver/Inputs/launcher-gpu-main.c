/* A C11 program over generated GPU launchers, built with -DGPU_CUDA
 * (lit/Driver/launcher-cuda.test) or -DGPU_ROCM (launcher-rocm.test): links
 * the cpu and GPU entry points without the vendor's toolkit (the runtime
 * dlopens libcuda.so.1 or libamdhip64.so) and, on a machine without the
 * driver or runtime, gets a status and a message, not a crash. */
#include "add.h"
#include "matmul.h"

#include <stdio.h>

#if defined(GPU_CUDA)
#define ADD_GPU add_cuda
#define MATMUL_GPU matmul_cuda
#define RUNTIME "driver"
#elif defined(GPU_ROCM)
#define ADD_GPU add_rocm
#define MATMUL_GPU matmul_rocm
#define RUNTIME "runtime"
#else
#error "build with -DGPU_CUDA or -DGPU_ROCM"
#endif

/* Whether a GPU entry point found the driver (or runtime), and its message
 * when it did not. */
static void report(const char *name, pallasc_status s) {
  if (s == PALLASC_ERROR_NO_DRIVER)
    printf("%s: no " RUNTIME ": %s\n", name, pallasc_last_error());
  else
    printf("%s: a " RUNTIME "\n", name);
}

int main(void) {
  /* Device pointers are never dereferenced here without a driver. */
  float *x = 0, *y = 0, *z = 0;
  pallasc_status s;
  report("add", ADD_GPU(x, y, z, NULL));
  report("matmul", MATMUL_GPU(0, 0, 0, NULL));
  /* The host entry point of the same library links and runs beside it. */
  s = add_cpu(x, y, z);
  printf("add_cpu: %d %s\n", (int)s, pallasc_last_error());
  return 0;
}
