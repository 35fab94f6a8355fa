// examples/matmul: [1024, 512] bf16 x [512, 1024] bf16 -> f32, 128x128
// output tile per block of 4 warps, k in steps of 128 staged in shared
// memory, bf16 tensor cores (wmma 16x16x16), f32 accumulators.
#include <cuda_bf16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void __launch_bounds__(128)
matmul(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
       float *__restrict__ o) {
  constexpr int N = 1024, K = 512, T = 128, P = T + 8;
  extern __shared__ __align__(16) unsigned char smem[];
  __nv_bfloat16 *as = reinterpret_cast<__nv_bfloat16 *>(smem);
  __nv_bfloat16 *bs = as + T * P;
  int warp = threadIdx.x / 32;
  int m0 = blockIdx.x * T, n0 = blockIdx.y * T;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][8];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 8; ++j)
      wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k0 = 0; k0 < K; k0 += T) {
    for (int i = threadIdx.x; i < T * T / 8; i += blockDim.x) {
      int r = i / (T / 8), c = (i % (T / 8)) * 8;
      *reinterpret_cast<uint4 *>(&as[r * P + c]) =
          *reinterpret_cast<const uint4 *>(&a[(m0 + r) * K + k0 + c]);
      *reinterpret_cast<uint4 *>(&bs[r * P + c]) =
          *reinterpret_cast<const uint4 *>(&b[(k0 + r) * N + n0 + c]);
    }
    __syncthreads();
    for (int kk = 0; kk < T; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
      for (int i = 0; i < 2; ++i)
        wmma::load_matrix_sync(fa[i], &as[(warp * 32 + i * 16) * P + kk], P);
      for (int j = 0; j < 8; ++j) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
        wmma::load_matrix_sync(fb, &bs[kk * P + j * 16], P);
        for (int i = 0; i < 2; ++i)
          wmma::mma_sync(acc[i][j], fa[i], fb, acc[i][j]);
      }
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 8; ++j)
      wmma::store_matrix_sync(&o[(m0 + warp * 32 + i * 16) * N + n0 + j * 16],
                              acc[i][j], N, wmma::mem_row_major);
}
