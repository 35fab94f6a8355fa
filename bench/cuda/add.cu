// examples/add: o = x + y on [1024, 2048] f32, one 32x256 block per CUDA
// block of 128 threads (grid 32 x 8), 16-byte accesses.
#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(128)
add(const float4 *__restrict__ x, const float4 *__restrict__ y,
    float4 *__restrict__ o) {
  constexpr int cols = 2048 / 4, blockRows = 32, blockCols = 256 / 4;
  int row0 = blockIdx.x * blockRows, col0 = blockIdx.y * blockCols;
  for (int i = threadIdx.x; i < blockRows * blockCols; i += blockDim.x) {
    int r = row0 + i / blockCols, c = col0 + i % blockCols;
    float4 a = x[r * cols + c], b = y[r * cols + c];
    o[r * cols + c] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }
}
