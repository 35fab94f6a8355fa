// Reference measurements for bench/gpu/run_all.sh, on the same GPU in the
// same run: cuBLAS bf16 GEMM with f32 output (what the matmul example
// computes) and a device-to-device copy (the bandwidth bound).
//
//   reference gemm M N K    -> "cublas: <ms> ms <TFLOP/s> TFLOP/s"
//   reference copy BYTES    -> "copy: <ms> ms <GB/s> GB/s" (read + write)
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(x)                                                             \
  do {                                                                       \
    cudaError_t e = (x);                                                     \
    if (e != cudaSuccess) {                                                  \
      std::fprintf(stderr, "reference: %s: %s\n", #x,                        \
                   cudaGetErrorString(e));                                   \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)
#define CHECK_BLAS(x)                                                        \
  do {                                                                       \
    cublasStatus_t s = (x);                                                  \
    if (s != CUBLAS_STATUS_SUCCESS) {                                        \
      std::fprintf(stderr, "reference: %s failed (%d)\n", #x, int(s));       \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

static float timeIt(int reps, void (*fn)(void *), void *arg) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  fn(arg); // warm up
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i)
    fn(arg);
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms / reps;
}

struct Gemm {
  cublasHandle_t handle;
  int m, n, k;
  void *a, *b, *c;
};

static void runGemm(void *p) {
  Gemm &g = *static_cast<Gemm *>(p);
  float alpha = 1, beta = 0;
  // Row-major C[m, n] = A[m, k] B[k, n] is column-major C^T = B^T A^T.
  CHECK_BLAS(cublasGemmEx(g.handle, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k,
                          &alpha, g.b, CUDA_R_16BF, g.n, g.a, CUDA_R_16BF, g.k,
                          &beta, g.c, CUDA_R_32F, g.n, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
}

struct Copy {
  void *dst, *src;
  size_t bytes;
};

static void runCopy(void *p) {
  Copy &c = *static_cast<Copy *>(p);
  CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice));
}

int main(int argc, char **argv) {
  int reps = 50;
  if (argc == 5 && !std::strcmp(argv[1], "gemm")) {
    Gemm g;
    g.m = std::atoi(argv[2]);
    g.n = std::atoi(argv[3]);
    g.k = std::atoi(argv[4]);
    CHECK_BLAS(cublasCreate(&g.handle));
    CHECK(cudaMalloc(&g.a, size_t(g.m) * g.k * 2));
    CHECK(cudaMalloc(&g.b, size_t(g.k) * g.n * 2));
    CHECK(cudaMalloc(&g.c, size_t(g.m) * g.n * 4));
    CHECK(cudaMemset(g.a, 0, size_t(g.m) * g.k * 2));
    CHECK(cudaMemset(g.b, 0, size_t(g.k) * g.n * 2));
    float ms = timeIt(reps, runGemm, &g);
    std::printf("cublas: %.4f ms %.2f TFLOP/s\n", ms,
                2.0 * g.m * g.n * g.k / (ms * 1e-3) / 1e12);
    return 0;
  }
  if (argc == 3 && !std::strcmp(argv[1], "copy")) {
    Copy c;
    c.bytes = std::strtoull(argv[2], nullptr, 10);
    CHECK(cudaMalloc(&c.src, c.bytes));
    CHECK(cudaMalloc(&c.dst, c.bytes));
    CHECK(cudaMemset(c.src, 0, c.bytes));
    float ms = timeIt(reps, runCopy, &c);
    std::printf("copy: %.4f ms %.1f GB/s\n", ms,
                2.0 * c.bytes / (ms * 1e-3) / 1e9);
    return 0;
  }
  std::fprintf(stderr, "usage: reference gemm M N K | reference copy BYTES\n");
  return 2;
}
