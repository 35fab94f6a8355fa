// examples/softmax: row softmax of [4096, 1000] f32, one row per block of
// 128 threads (the 1024-wide block masked past 1000), warp shuffles and
// shared memory for the max and the sum.
#include <cuda_runtime.h>

__device__ float warpMax(float v) {
  for (int m = 16; m > 0; m /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, m));
  return v;
}
__device__ float warpSum(float v) {
  for (int m = 16; m > 0; m /= 2)
    v += __shfl_xor_sync(0xffffffff, v, m);
  return v;
}

extern "C" __global__ void __launch_bounds__(128)
softmax(const float *__restrict__ x, float *__restrict__ o) {
  constexpr int n = 1000, per = 8;
  __shared__ float partial[4];
  const float *row = x + blockIdx.x * n;
  float v[per];
  float m = -INFINITY;
  for (int i = 0; i < per; ++i) {
    int c = threadIdx.x * 4 + (i / 4) * 512 + i % 4;
    v[i] = c < n ? row[c] : -INFINITY;
    m = fmaxf(m, v[i]);
  }
  m = warpMax(m);
  if (threadIdx.x % 32 == 0)
    partial[threadIdx.x / 32] = m;
  __syncthreads();
  m = fmaxf(fmaxf(partial[0], partial[1]), fmaxf(partial[2], partial[3]));
  __syncthreads();
  float s = 0;
  for (int i = 0; i < per; ++i) {
    v[i] = __expf(v[i] - m);
    s += v[i];
  }
  s = warpSum(s);
  if (threadIdx.x % 32 == 0)
    partial[threadIdx.x / 32] = s;
  __syncthreads();
  s = partial[0] + partial[1] + partial[2] + partial[3];
  float *out = o + blockIdx.x * n;
  for (int i = 0; i < per; ++i) {
    int c = threadIdx.x * 4 + (i / 4) * 512 + i % 4;
    if (c < n)
      out[c] = v[i] / s;
  }
}
