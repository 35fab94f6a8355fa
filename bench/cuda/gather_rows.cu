// examples/scalar_prefetch: out[i, :] = table[indices[i], :] for 16 rows of
// a [256, 512] f32 table, one row per block of 128 threads.
#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(128)
gather_rows(const int *__restrict__ indices, const float4 *__restrict__ table,
            float4 *__restrict__ out) {
  constexpr int cols = 512 / 4;
  int row = min(max(indices[blockIdx.x], 0), 255);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    out[blockIdx.x * cols + c] = table[row * cols + c];
}
