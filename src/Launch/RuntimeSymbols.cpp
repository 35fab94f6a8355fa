//===- RuntimeSymbols.cpp - C functions lowered kernels call ---*- C++ -*-===//

#include "src/Launch/RuntimeSymbols.h"
#include "src/Support/FloatRepr.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

std::FILE *debugStream = nullptr;
std::FILE *out() { return debugStream ? debugStream : stdout; }

/// A ranked memref descriptor of any rank, as laid out by the LLVM lowering:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct Descriptor {
  void *allocated;
  char *aligned;
  int64_t offset;
  int64_t dims[]; // sizes, then strides
};
struct UnrankedMemRef {
  int64_t rank;
  Descriptor *descriptor;
};
struct Memref1D {
  void *allocated;
  char *aligned;
  int64_t offset, size, stride;
};

template <typename T> std::string formatValue(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return pallasc::pythonFloatRepr(v);
  else
    return std::to_string(v);
}
std::string formatBool(int64_t v) { return v ? "True" : "False"; }

/// Prints a tensor as nested lists.
template <typename T, typename F>
void printTensor(const UnrankedMemRef *m, F format) {
  int64_t rank = m->rank;
  const Descriptor *d = m->descriptor;
  const int64_t *sizes = d->dims, *strides = d->dims + rank;
  const T *base = reinterpret_cast<const T *>(d->aligned) + d->offset;
  std::string s;
  // Recursive walk over the dimensions.
  auto walk = [&](auto &self, int64_t dim, int64_t off) -> void {
    if (dim == rank) {
      s += format(base[off]);
      return;
    }
    s += '[';
    for (int64_t i = 0; i < sizes[dim]; ++i) {
      if (i)
        s += ", ";
      self(self, dim + 1, off + i * strides[dim]);
    }
    s += ']';
  };
  walk(walk, 0, 0);
  std::fputs(s.c_str(), out());
}

/// The first error a kernel reported through the runtime on this thread.
thread_local std::string kernelError;

} // namespace

extern "C" {

void _mlir_ciface_pallasc_semaphore_wait_stuck(Memref1D *where, int32_t have,
                                               int32_t want) {
  if (!kernelError.empty())
    return;
  std::string site;
  for (int64_t i = 0; i < where->size; ++i)
    site += where->aligned[where->offset + i * where->stride];
  kernelError = site + ": pl.semaphore_wait for " + std::to_string(want) +
                " on a semaphore at " + std::to_string(have) +
                ": the CPU runs one program at a time, so no other program "
                "can signal it and the wait would never return";
}

void _mlir_ciface_pallasc_debug_text(Memref1D *text) {
  for (int64_t i = 0; i < text->size; ++i)
    std::fputc(text->aligned[text->offset + i * text->stride], out());
}
void _mlir_ciface_pallasc_debug_i64(int64_t v) {
  std::fputs(formatValue(v).c_str(), out());
}
void _mlir_ciface_pallasc_debug_bool(int64_t v) {
  std::fputs(formatBool(v).c_str(), out());
}
void _mlir_ciface_pallasc_debug_f32(float v) {
  std::fputs(formatValue(v).c_str(), out());
}
void _mlir_ciface_pallasc_debug_f64(double v) {
  std::fputs(formatValue(v).c_str(), out());
}
void _mlir_ciface_pallasc_debug_tensor_i64(UnrankedMemRef *m) {
  printTensor<int64_t>(m, [](int64_t v) { return formatValue(v); });
}
void _mlir_ciface_pallasc_debug_tensor_bool(UnrankedMemRef *m) {
  printTensor<int64_t>(m, formatBool);
}
void _mlir_ciface_pallasc_debug_tensor_f32(UnrankedMemRef *m) {
  printTensor<float>(m, [](float v) { return formatValue(v); });
}
void _mlir_ciface_pallasc_debug_tensor_f64(UnrankedMemRef *m) {
  printTensor<double>(m, [](double v) { return formatValue(v); });
}

/// memref.copy between non-contiguous memrefs of the same shape (what
/// finalize-memref-to-llvm calls; same contract as MLIR's runner utils).
void memrefCopy(int64_t elemSize, UnrankedMemRef *src, UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  const Descriptor *s = src->descriptor, *d = dst->descriptor;
  const int64_t *sizes = s->dims;
  const int64_t *sStrides = s->dims + rank, *dStrides = d->dims + rank;
  const char *sBase = s->aligned + s->offset * elemSize;
  char *dBase = d->aligned + d->offset * elemSize;
  if (rank == 0) {
    std::memcpy(dBase, sBase, elemSize);
    return;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  // Odometer over all but the last dimension; the last is copied as a run
  // when both sides are unit-stride.
  int64_t inner = sizes[rank - 1];
  bool contiguous = sStrides[rank - 1] == 1 && dStrides[rank - 1] == 1;
  int64_t idx[16] = {0};
  if (rank > 16) {
    std::fprintf(stderr, "memrefCopy: rank %lld is not supported\n",
                 static_cast<long long>(rank));
    std::abort();
  }
  while (true) {
    int64_t so = 0, dof = 0;
    for (int64_t i = 0; i + 1 < rank; ++i) {
      so += idx[i] * sStrides[i];
      dof += idx[i] * dStrides[i];
    }
    if (contiguous) {
      std::memmove(dBase + dof * elemSize, sBase + so * elemSize,
                   inner * elemSize);
    } else {
      for (int64_t j = 0; j < inner; ++j)
        std::memcpy(dBase + (dof + j * dStrides[rank - 1]) * elemSize,
                    sBase + (so + j * sStrides[rank - 1]) * elemSize,
                    elemSize);
    }
    int64_t i = rank - 2;
    for (; i >= 0; --i) {
      if (++idx[i] < sizes[i])
        break;
      idx[i] = 0;
    }
    if (i < 0)
      break;
  }
}

} // extern "C"

namespace pallasc::runtime {

void setDebugPrintStream(std::FILE *stream) { debugStream = stream; }

/// compiler-rt's f32/f64 -> bf16 truncations (round to nearest even, NaN
/// kept quiet): LLVM calls them for bf16 arithmetic on hosts without bf16
/// instructions, and the JIT has no compiler-rt to find them in.
static uint16_t bf16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
extern "C" __bf16 pallasc_truncsfbf2(float f) {
  uint16_t b = bf16Bits(f);
  __bf16 r;
  std::memcpy(&r, &b, sizeof(r));
  return r;
}
extern "C" __bf16 pallasc_truncdfbf2(double d) {
  // Via f32 except where that double-rounds: keep d's sticky bits.
  float f = static_cast<float>(d);
  if (std::isfinite(d) && static_cast<double>(f) != d) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    if ((bits & 0xffffu) == 0x8000u) // a tie after the first rounding
      bits += static_cast<double>(f) > d ? -1 : 1;
    std::memcpy(&f, &bits, sizeof(f));
  }
  return pallasc_truncsfbf2(f);
}

std::vector<std::pair<const char *, void *>> runtimeSymbols() {
// The function `fn` under its own name.
// clang-format off
#define PALLASC_SAME_NAME(fn) {#fn, reinterpret_cast<void *>(&fn)}
// clang-format on
  return {
      {"__truncsfbf2", reinterpret_cast<void *>(&pallasc_truncsfbf2)},
      {"__truncdfbf2", reinterpret_cast<void *>(&pallasc_truncdfbf2)},
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_text),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_i64),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_bool),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_f32),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_f64),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_tensor_i64),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_tensor_bool),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_tensor_f32),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_debug_tensor_f64),
      PALLASC_SAME_NAME(memrefCopy),
      PALLASC_SAME_NAME(_mlir_ciface_pallasc_semaphore_wait_stuck),
  };
#undef PALLASC_SAME_NAME
}

bool takeKernelError(std::string &message) {
  if (kernelError.empty())
    return false;
  message = std::move(kernelError);
  kernelError.clear();
  return true;
}

} // namespace pallasc::runtime
