// examples/layernorm: 8 rows of [4096, 1024] f32 per block of 128 threads
// (one warp per 2 rows), scale and shift, biased variance, eps 1e-5.
#include <cuda_runtime.h>

__device__ float warpSum(float v) {
  for (int m = 16; m > 0; m /= 2)
    v += __shfl_xor_sync(0xffffffff, v, m);
  return v;
}

extern "C" __global__ void __launch_bounds__(128)
layernorm(const float4 *__restrict__ x, const float4 *__restrict__ w,
          const float4 *__restrict__ b, float4 *__restrict__ o) {
  constexpr int cols = 1024 / 4, per = cols / 32;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int rr = 0; rr < 2; ++rr) {
    int row = blockIdx.x * 8 + warp * 2 + rr;
    float4 v[per];
    float s = 0;
    for (int i = 0; i < per; ++i) {
      v[i] = x[row * cols + i * 32 + lane];
      s += v[i].x + v[i].y + v[i].z + v[i].w;
    }
    float mean = warpSum(s) / 1024.0f;
    float q = 0;
    for (int i = 0; i < per; ++i) {
      v[i].x -= mean; v[i].y -= mean; v[i].z -= mean; v[i].w -= mean;
      q += v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z +
           v[i].w * v[i].w;
    }
    float rstd = rsqrtf(warpSum(q) / 1024.0f + 1e-5f);
    for (int i = 0; i < per; ++i) {
      float4 ww = w[i * 32 + lane], bb = b[i * 32 + lane];
      o[row * cols + i * 32 + lane] =
          make_float4(v[i].x * rstd * ww.x + bb.x, v[i].y * rstd * ww.y + bb.y,
                      v[i].z * rstd * ww.z + bb.z, v[i].w * rstd * ww.w + bb.w);
    }
  }
}
