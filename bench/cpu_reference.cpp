//===- cpu_reference.cpp - Plain C++ loops for bench/cpu_run.sh -----------===//
//
// The same computations as the benchmarked kernels, at the same sizes,
// written as straightforward loops (one thread), compiled with -O3 by
// cpu_run.sh. Prints "<name> <best milliseconds of 3>" per kernel.
//
//   cpu_reference add|softmax|softmax4096|layernorm|matmul|flash
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff, u;
  if (exp == 0x1f)
    u = sign | 0x7f800000 | (mant << 13);
  else if (exp == 0) {
    float v = mant * (1.0f / 16777216.0f);
    return sign ? -v : v;
  } else
    u = sign | ((exp + 112) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t floatToHalfTrunc(float f) { // good enough for the output store
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t a = u & 0x7fffffff;
  uint16_t sign = (u >> 16) & 0x8000;
  if (a < 0x38800000)
    return sign;
  return sign | static_cast<uint16_t>((a + 0xfff + ((a >> 13) & 1) - 0x38000000) >> 13);
}
float bf16ToFloat(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}
std::vector<uint16_t> randomBits16(size_t n, unsigned seed, bool bf16) {
  std::vector<float> f = randomFloats(n, seed);
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &f[i], 4);
    v[i] = bf16 ? static_cast<uint16_t>(u >> 16) : floatToHalfTrunc(f[i]);
  }
  return v;
}

double bestOf3(const std::function<void()> &fn) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
    best = std::min(best, ms);
  }
  return best;
}

volatile float sink;

} // namespace

int main(int argc, char **argv) {
  std::string which = argc > 1 ? argv[1] : "";
  double ms = -1;
  if (which == "add") {
    const size_t n = 4096 * 4096;
    auto x = randomFloats(n, 1), y = randomFloats(n, 2);
    std::vector<float> o(n);
    ms = bestOf3([&] {
      for (size_t i = 0; i < n; ++i)
        o[i] = x[i] + y[i];
      sink = o[n / 2];
    });
  } else if (which == "softmax" || which == "softmax4096") {
    const size_t rows = 4096, cols = which == "softmax" ? 1000 : 4096;
    auto x = randomFloats(rows * cols, 3);
    std::vector<float> o(rows * cols);
    ms = bestOf3([&] {
      for (size_t r = 0; r < rows; ++r) {
        const float *in = &x[r * cols];
        float *out = &o[r * cols];
        float mx = -INFINITY;
        for (size_t c = 0; c < cols; ++c)
          mx = std::max(mx, in[c]);
        float sum = 0;
        for (size_t c = 0; c < cols; ++c)
          sum += (out[c] = std::exp(in[c] - mx));
        for (size_t c = 0; c < cols; ++c)
          out[c] /= sum;
      }
      sink = o[7];
    });
  } else if (which == "layernorm") {
    const size_t rows = 16384, cols = 1024;
    auto x = randomFloats(rows * cols, 4), w = randomFloats(cols, 5),
         b = randomFloats(cols, 6);
    std::vector<float> o(rows * cols);
    ms = bestOf3([&] {
      for (size_t r = 0; r < rows; ++r) {
        const float *in = &x[r * cols];
        float *out = &o[r * cols];
        float mean = 0, var = 0;
        for (size_t c = 0; c < cols; ++c)
          mean += in[c];
        mean /= cols;
        for (size_t c = 0; c < cols; ++c)
          var += (in[c] - mean) * (in[c] - mean);
        var /= cols;
        float rstd = 1.0f / std::sqrt(var + 1e-5f);
        for (size_t c = 0; c < cols; ++c)
          out[c] = (in[c] - mean) * rstd * w[c] + b[c];
      }
      sink = o[7];
    });
  } else if (which == "matmul") {
    const size_t n = 2048;
    auto a = randomBits16(n * n, 7, true), b = randomBits16(n * n, 8, true);
    std::vector<float> af(n * n), bf(n * n), c(n * n);
    ms = bestOf3([&] {
      for (size_t i = 0; i < n * n; ++i) {
        af[i] = bf16ToFloat(a[i]);
        bf[i] = bf16ToFloat(b[i]);
      }
      std::fill(c.begin(), c.end(), 0.0f);
      // The cache-friendly plain loop order (i, k, j).
      for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < n; ++k) {
          float aik = af[i * n + k];
          for (size_t j = 0; j < n; ++j)
            c[i * n + j] += aik * bf[k * n + j];
        }
      sink = c[n + 1];
    });
  } else if (which == "flash") {
    const size_t bh = 8, s = 1024, d = 64;
    auto q = randomBits16(bh * s * d, 9, false),
         k = randomBits16(bh * s * d, 10, false),
         v = randomBits16(bh * s * d, 11, false);
    std::vector<uint16_t> o(bh * s * d);
    std::vector<float> qf(bh * s * d), kf(bh * s * d), vf(bh * s * d),
        p(s), acc(d);
    ms = bestOf3([&] {
      for (size_t i = 0; i < bh * s * d; ++i) {
        qf[i] = halfToFloat(q[i]);
        kf[i] = halfToFloat(k[i]);
        vf[i] = halfToFloat(v[i]);
      }
      for (size_t b = 0; b < bh; ++b)
        for (size_t i = 0; i < s; ++i) {
          const float *qi = &qf[(b * s + i) * d];
          float mx = -INFINITY;
          for (size_t j = 0; j < s; ++j) {
            const float *kj = &kf[(b * s + j) * d];
            float dot = 0;
            for (size_t c = 0; c < d; ++c)
              dot += qi[c] * kj[c];
            p[j] = dot * 0.125f;
            mx = std::max(mx, p[j]);
          }
          float sum = 0;
          for (size_t j = 0; j < s; ++j)
            sum += (p[j] = std::exp(p[j] - mx));
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (size_t j = 0; j < s; ++j) {
            const float *vj = &vf[(b * s + j) * d];
            for (size_t c = 0; c < d; ++c)
              acc[c] += p[j] * vj[c];
          }
          for (size_t c = 0; c < d; ++c)
            o[(b * s + i) * d + c] = floatToHalfTrunc(acc[c] / sum);
        }
      sink = o[3];
    });
  } else {
    std::fprintf(stderr,
                 "usage: cpu_reference add|softmax|softmax4096|layernorm|"
                 "matmul|flash\n");
    return 2;
  }
  std::printf("%s %.3f\n", which.c_str(), ms);
  return 0;
}
