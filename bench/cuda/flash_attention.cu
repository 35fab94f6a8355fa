// examples/flash_attention: o = softmax(q k^T / 8) v on [8, 1024, 64] f16,
// one 128-row query block per block of 4 warps (32 rows each), key/value
// blocks of 128 in shared memory, f16 tensor cores (wmma 16x16x16) with f32
// scores, online softmax over the 8 key blocks.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void __launch_bounds__(128)
flash_attention(const half *__restrict__ q, const half *__restrict__ k,
                const half *__restrict__ v, half *__restrict__ o) {
  constexpr int S = 1024, D = 64, BM = 128, BN = 128, PD = D + 8, PN = BN + 4;
  extern __shared__ __align__(16) unsigned char smem[];
  half *qs = reinterpret_cast<half *>(smem);
  half *ks = qs + BM * PD;
  half *vs = ks + BN * PD;
  float *ss = reinterpret_cast<float *>(vs + BN * PD); // [BM][PN] scores
  half *ps = reinterpret_cast<half *>(ss + BM * PN);   // [BM][BN + 8]
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  size_t base = static_cast<size_t>(blockIdx.x) * S * D;
  int q0 = blockIdx.y * BM;
  for (int i = threadIdx.x; i < BM * D / 8; i += blockDim.x) {
    int r = i / (D / 8), c = (i % (D / 8)) * 8;
    *reinterpret_cast<uint4 *>(&qs[r * PD + c]) =
        *reinterpret_cast<const uint4 *>(&q[base + (q0 + r) * D + c]);
  }
  // This lane's row: running max and sum.
  float m = -INFINITY, l = 0;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][4];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      wmma::fill_fragment(acc[i][j], 0.0f);
  for (int kb = 0; kb < S; kb += BN) {
    __syncthreads();
    for (int i = threadIdx.x; i < BN * D / 8; i += blockDim.x) {
      int r = i / (D / 8), c = (i % (D / 8)) * 8;
      *reinterpret_cast<uint4 *>(&ks[r * PD + c]) =
          *reinterpret_cast<const uint4 *>(&k[base + (kb + r) * D + c]);
      *reinterpret_cast<uint4 *>(&vs[r * PD + c]) =
          *reinterpret_cast<const uint4 *>(&v[base + (kb + r) * D + c]);
    }
    __syncthreads();
    // Scores of this warp's 32 rows.
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < BN / 16; ++j) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> s;
        wmma::fill_fragment(s, 0.0f);
        for (int d = 0; d < D; d += 16) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
          wmma::load_matrix_sync(fa, &qs[(warp * 32 + i * 16) * PD + d], PD);
          wmma::load_matrix_sync(fb, &ks[(j * 16) * PD + d], PD);
          wmma::mma_sync(s, fa, fb, s);
        }
        wmma::store_matrix_sync(&ss[(warp * 32 + i * 16) * PN + j * 16], s, PN,
                                wmma::mem_row_major);
      }
    __syncwarp();
    // Online softmax, one row per lane.
    {
      int r = warp * 32 + lane;
      float mx = m;
      for (int c = 0; c < BN; ++c)
        mx = fmaxf(mx, ss[r * PN + c] * 0.125f);
      float alpha = __expf(m - mx), sum = 0;
      for (int c = 0; c < BN; ++c) {
        float p = __expf(ss[r * PN + c] * 0.125f - mx);
        sum += p;
        ps[r * (BN + 8) + c] = __float2half(p);
      }
      l = l * alpha + sum;
      m = mx;
      ss[r * PN] = alpha; // rescale factor for the accumulator rows
    }
    __syncwarp();
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        // acc *= alpha (per row): through shared memory.
        wmma::store_matrix_sync(&ss[(warp * 32 + i * 16) * PN + 1 + j * 16],
                                acc[i][j], PN, wmma::mem_row_major);
      }
    __syncwarp();
    for (int c = 0; c < D; ++c)
      ss[(warp * 32 + lane) * PN + 1 + c] *= ss[(warp * 32 + lane) * PN];
    __syncwarp();
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        wmma::load_matrix_sync(acc[i][j],
                               &ss[(warp * 32 + i * 16) * PN + 1 + j * 16], PN,
                               wmma::mem_row_major);
        for (int kk = 0; kk < BN; kk += 16) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fp;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fv;
          wmma::load_matrix_sync(fp, &ps[(warp * 32 + i * 16) * (BN + 8) + kk],
                                 BN + 8);
          wmma::load_matrix_sync(fv, &vs[kk * PD + j * 16], PD);
          wmma::mma_sync(acc[i][j], fp, fv, acc[i][j]);
        }
      }
  }
  // o = acc / l.
  __syncwarp();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      wmma::store_matrix_sync(&ss[(warp * 32 + i * 16) * PN + j * 16],
                              acc[i][j], PN, wmma::mem_row_major);
  __syncwarp();
  int r = warp * 32 + lane;
  for (int c = 0; c < D; ++c)
    o[base + (q0 + r) * D + c] = __float2half(ss[r * PN + c] / l);
}
