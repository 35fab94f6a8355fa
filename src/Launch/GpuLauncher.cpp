//===- GpuLauncher.cpp - What generated CUDA and ROCm launchers share -*- C++ -*-===//

#include "src/Launch/GpuLauncher.h"

#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/HostGrid.h"
#include "src/Launch/HostPlanCodec.h"
#include "src/Launch/Launcher.h"

#include <climits>
#include <new>
#include <sstream>
#include <system_error>

namespace pallasc::launch {

//===----------------------------------------------------------------------===//
// The record as text
//===----------------------------------------------------------------------===//

namespace {
constexpr const char *kRecordMagic = "pallasc-gpu-record-1";
} // namespace

std::string encodeGpuLaunchRecord(const GpuLaunchRecord &r) {
  std::ostringstream os;
  os << kRecordMagic << ' ' << r.entry;
  for (const std::vector<int64_t> &axes : r.gridAxes) {
    os << ' ' << axes.size();
    for (int64_t a : axes)
      os << ' ' << a;
  }
  os << ' ' << r.block[0] << ' ' << r.block[1] << ' ' << r.block[2] << ' '
     << r.warpSize << ' ' << r.dynamicSharedBytes << ' ' << r.params.size();
  for (const GpuKernelParam &p : r.params) {
    switch (p.kind) {
    case GpuKernelParam::Kind::Pointer:
      os << " P " << (p.isOutput ? 1 : 0) << ' ' << p.index;
      break;
    case GpuKernelParam::Kind::GridBound:
      os << " G " << p.axis;
      break;
    case GpuKernelParam::Kind::Symbol:
      os << " S " << p.index;
      break;
    case GpuKernelParam::Kind::TensorMap: {
      const GpuTensorMap &m = p.tensorMap;
      // Rank 2: "T" over an input, "TO" over an output (a TMA store);
      // another rank: "TR" / "TRO" and the rank, then each shape's dims.
      if (m.rank != 2) {
        os << (m.isOutput ? " TRO " : " TR ") << m.rank << ' ' << m.input
           << ' ' << (m.bf16 ? 1 : 0);
        for (int d = 0; d < m.rank; ++d)
          os << ' ' << m.globalShape[d];
        for (int d = 0; d < m.rank; ++d)
          os << ' ' << m.boxShape[d];
        break;
      }
      os << (m.isOutput ? " TO " : " T ") << m.input << ' '
         << (m.bf16 ? 1 : 0) << ' '
         << m.globalShape[0] << ' ' << m.globalShape[1] << ' ' << m.boxShape[0]
         << ' ' << m.boxShape[1];
      break;
    }
    }
  }
  os << " A " << r.pointerAlignment;
  return os.str();
}

bool decodeGpuLaunchRecord(std::string_view text, GpuLaunchRecord &record,
                           std::string &error) {
  std::istringstream is{std::string(text)};
  GpuLaunchRecord r;
  std::string magic;
  auto bad = [&](const std::string &what) {
    error = "the embedded launch record is malformed (" + what + ")";
    return false;
  };
  if (!(is >> magic) || magic != kRecordMagic)
    return bad("expected '" + std::string(kRecordMagic) + "'");
  if (!(is >> r.entry))
    return bad("no kernel name");
  // Counts are bounded so that hostile text cannot allocate without bound.
  constexpr size_t kMaxCount = 4096;
  for (std::vector<int64_t> &axes : r.gridAxes) {
    size_t n = 0;
    if (!(is >> n) || n > kMaxCount)
      return bad("grid axes");
    axes.resize(n);
    for (int64_t &a : axes)
      if (!(is >> a))
        return bad("grid axes");
  }
  size_t numParams = 0;
  if (!(is >> r.block[0] >> r.block[1] >> r.block[2] >> r.warpSize >>
        r.dynamicSharedBytes >> numParams) ||
      numParams > kMaxCount)
    return bad("block, shared memory or parameter count");
  for (size_t i = 0; i < numParams; ++i) {
    GpuKernelParam p;
    std::string kind;
    int flag = 0;
    is >> kind;
    if (kind == "P" && is >> flag >> p.index) {
      p.kind = GpuKernelParam::Kind::Pointer;
      p.isOutput = flag != 0;
    } else if (kind == "G" && is >> p.axis) {
      p.kind = GpuKernelParam::Kind::GridBound;
    } else if (kind == "S" && is >> p.index) {
      p.kind = GpuKernelParam::Kind::Symbol;
    } else if ((kind == "T" || kind == "TO") &&
               is >> p.tensorMap.input >> flag >> p.tensorMap.globalShape[0] >>
                   p.tensorMap.globalShape[1] >> p.tensorMap.boxShape[0] >>
                   p.tensorMap.boxShape[1]) {
      p.kind = GpuKernelParam::Kind::TensorMap;
      p.tensorMap.bf16 = flag != 0;
      p.tensorMap.isOutput = kind == "TO";
    } else if ((kind == "TR" || kind == "TRO") && is >> p.tensorMap.rank &&
               p.tensorMap.rank >= 2 && p.tensorMap.rank <= kMaxTensorMapRank &&
               is >> p.tensorMap.input >> flag) {
      p.kind = GpuKernelParam::Kind::TensorMap;
      p.tensorMap.bf16 = flag != 0;
      p.tensorMap.isOutput = kind == "TRO";
      for (int d = 0; d < p.tensorMap.rank; ++d)
        is >> p.tensorMap.globalShape[d];
      for (int d = 0; d < p.tensorMap.rank; ++d)
        is >> p.tensorMap.boxShape[d];
      if (!is)
        return bad("parameter " + std::to_string(i));
    } else {
      return bad("parameter " + std::to_string(i));
    }
    r.params.push_back(p);
  }
  // The pointer alignment (absent from records written before it was
  // embedded: the default).
  std::string rest;
  if (is >> rest && rest == "A") {
    if (!(is >> r.pointerAlignment) || r.pointerAlignment < 1 ||
        r.pointerAlignment > 4096 ||
        (r.pointerAlignment & (r.pointerAlignment - 1)) != 0)
      return bad("pointer alignment");
    rest.clear();
    is >> rest;
  }
  if (!rest.empty())
    return bad("trailing '" + rest + "'");
  record = std::move(r);
  return true;
}

//===----------------------------------------------------------------------===//
// The call
//===----------------------------------------------------------------------===//

int gpuLauncherStatus(GpuError e) {
  switch (e) {
  case GpuError::None:
    return kLauncherOk;
  case GpuError::DriverNotFound:
  case GpuError::DriverTooOld:
    return kLauncherNoDriver;
  case GpuError::NoDevice:
  case GpuError::InvalidDevice:
  case GpuError::DeviceSetup:
    return kLauncherNoDevice;
  case GpuError::LoadFailed:
  case GpuError::KernelNotFound:
  case GpuError::SharedMemoryTooLarge:
    return kLauncherLoadFailed;
  case GpuError::Misaligned:
    return kLauncherMisaligned;
  case GpuError::InvalidLaunchRecord:
    return kLauncherInvalidPlan;
  case GpuError::OutOfMemory:
  case GpuError::CopyFailed:
  case GpuError::TensorMapFailed:
  case GpuError::LaunchFailed:
  case GpuError::KernelFailed:
  case GpuError::DriverCallFailed:
    return kLauncherLaunchFailed;
  }
  return kLauncherLaunchFailed;
}

namespace {
int runGuarded(int (*run)(const GpuLauncherCall &call),
               const GpuLauncherCall &call) {
  launcherClearError();
  try {
    return run(call);
  } catch (const std::bad_alloc &) {
    return launcherFail(kLauncherLaunchFailed, call.entry,
                        "out of host memory");
  } catch (const std::system_error &) {
    return launcherFail(kLauncherLaunchFailed, call.entry,
                        "cannot lock the launcher's state");
  }
}
} // namespace

GpuLauncherCall gpuLauncherCall(const char *entry,
                                const pallasc_gpu_image *images,
                                int64_t numImages, const int64_t *grid,
                                int64_t gridRank, void *const *operands,
                                int64_t numInputs, int64_t numOutputs,
                                void *stream) {
  // In GpuLauncherCall's field order; the fields after `stream` keep their
  // defaults (a direct call of a non-symbolic kernel).
  return GpuLauncherCall{entry,      images,   numImages,
                         grid,       gridRank, operands,
                         numInputs,  numOutputs,
                         /*bounds=*/nullptr, /*numBounds=*/0, stream};
}

int gpuLauncherRun(int (*run)(const GpuLauncherCall &call),
                   GpuLauncherCall call, const int64_t *bounds,
                   int64_t numBounds) {
  call.bounds = bounds;
  call.numBounds = numBounds;
  return runGuarded(run, call);
}

namespace {
/// The one entry of the function table a GPU launcher's host plan is
/// decoded with: its kernels are the embedded images, not host code.
void noHostKernel(void **) {}
} // namespace

int gpuLauncherRunSymbolic(int (*run)(const GpuLauncherCall &call),
                           GpuLauncherCall call, const int64_t *bounds,
                           int64_t numBounds, const char *plan,
                           int64_t planSize) {
  const char *entry = call.entry;
  int64_t gridRank = call.gridRank;
  launcherClearError();
  try {
    HostCallPlan host;
    std::string error;
    const PackedFn table[] = {noHostKernel};
    if (!plan || planSize < 0 ||
        !decodeHostCallPlan(std::string_view(plan, static_cast<size_t>(planSize)),
                            table, 1, host, error))
      return launcherFail(kLauncherInvalidPlan, entry,
                          error.empty() ? "no launch plan" : error);
    int64_t numSymbols = static_cast<int64_t>(host.symbolic.symbols.size());
    if (numBounds < numSymbols || gridRank != static_cast<int64_t>(host.grid.size()))
      return launcherFail(kLauncherInvalidPlan, entry,
                          "the entry point passes " +
                              std::to_string(numBounds) +
                              " bound and symbol values; its plan has " +
                              std::to_string(numSymbols) + " symbols");
    std::vector<int64_t> values(bounds + numBounds - numSymbols,
                                bounds + numBounds);
    std::vector<std::string> names;
    for (const HostSymbol &s : host.symbolic.symbols)
      names.push_back(s.name);
    // (instantiateSymbols clears the plan's symbolic section.)
    if (!instantiateSymbols(host, values, error))
      return launcherFail(kLauncherInvalidArgument, entry, error);
    // The kernel takes each symbol as an i32.
    for (int64_t s = 0; s < numSymbols; ++s)
      if (values[s] > INT32_MAX)
        return launcherFail(kLauncherInvalidArgument, entry,
                            names[s] + " = " +
                                std::to_string(values[s]) +
                                " does not fit the GPU kernel's 32-bit "
                                "symbol parameter");
    // The grid with its expressions evaluated; plain dynamic bounds stay
    // -1 and come from `bounds`.
    std::vector<int64_t> sizes(host.grid.begin(), host.grid.end());
    call.grid = sizes.data();
    call.bounds = bounds;
    call.numBounds = numBounds - numSymbols;
    call.symbols = values.data();
    call.numSymbols = numSymbols;
    return runGuarded(run, call);
  } catch (const std::bad_alloc &) {
    return launcherFail(kLauncherRunFailed, entry, "out of host memory");
  }
}

int gpuLauncherRunBatch(int (*run)(const GpuLauncherCall &call),
                        GpuLauncherCall call, const int64_t *const *boundArgs,
                        int64_t numBoundArgs, const int64_t *batchLoop,
                        int64_t batchLoopSize) {
  if (!batchLoop) {
    launcherClearError();
    return launcherFail(kLauncherInvalidPlan, call.entry,
                        "the entry point passes no batch loop");
  }
  call.boundArgs = boundArgs;
  call.numBounds = numBoundArgs;
  call.batchLoop = batchLoop;
  call.batchLoopSize = batchLoopSize;
  return runGuarded(run, call);
}

namespace {

/// The grid with `bounds` filled in; `where` (" in batch iteration b of N"
/// or "") qualifies a bound out of range.
int fillGridSizes(const GpuLauncherCall &c, const int64_t *bounds,
                  int64_t numBounds, const std::string &where,
                  std::vector<int64_t> &gridSizes, bool checkBounds = true) {
  gridSizes.assign(c.grid, c.grid + c.gridRank);
  int64_t next = 0;
  for (int64_t &g : gridSizes) {
    if (g >= 0)
      continue;
    if (next >= numBounds)
      return launcherFail(kLauncherInvalidPlan, c.entry,
                          "the entry point passes fewer grid bounds than the "
                          "grid has dynamic axes");
    int64_t b = bounds[next];
    if (checkBounds && (b < 0 || b > INT32_MAX))
      return launcherFail(kLauncherInvalidArgument, c.entry,
                          "dynamic grid bound " + std::to_string(next) +
                              " is " + std::to_string(b) + where +
                              "; bounds must be in [0, 2^31)");
    g = b;
    ++next;
  }
  if (next != numBounds)
    return launcherFail(kLauncherInvalidPlan, c.entry,
                        "the entry point passes more grid bounds than the "
                        "grid has dynamic axes");
  return kLauncherOk;
}

bool validCall(const GpuLauncherCall &c) {
  return c.images && c.numImages > 0 && c.gridRank >= 0 && c.numInputs >= 0 &&
         c.numOutputs >= 0 && c.numBounds >= 0;
}

} // namespace

int gpuLauncherGridSizes(const GpuLauncherCall &c, const char *vendor,
                         std::vector<int64_t> &gridSizes) {
  if (!validCall(c))
    return launcherFail(kLauncherInvalidPlan, c.entry,
                        "no embedded " + std::string(vendor) + " code object");
  return fillGridSizes(c, c.bounds, c.numBounds, "", gridSizes);
}

int gpuLauncherLaunches(const GpuLauncherCall &c, const char *vendor,
                        std::vector<GpuLauncherLaunch> &launches,
                        bool checkBounds) {
  launches.clear();
  if (!validCall(c))
    return launcherFail(kLauncherInvalidPlan, c.entry,
                        "no embedded " + std::string(vendor) + " code object");
  GpuBatchOperands all;
  gpuLauncherOperands(c, all.inputs, all.outputs);
  if (!c.batchLoop) {
    GpuLauncherLaunch l;
    if (int status = fillGridSizes(c, c.bounds, c.numBounds, "", l.gridSizes,
                                   checkBounds))
      return status;
    l.inputs = std::move(all.inputs);
    l.outputs = std::move(all.outputs);
    if (c.symbols)
      l.symbols.assign(c.symbols, c.symbols + c.numSymbols);
    launches.push_back(std::move(l));
    return kLauncherOk;
  }
  int64_t numDynamic = 0;
  for (int64_t a = 0; a < c.gridRank; ++a)
    numDynamic += c.grid[a] < 0;
  GpuBatchLoop loop;
  if (GpuStatus s = decodeGpuBatchLoop(c.batchLoop, c.batchLoopSize,
                                       c.numInputs, c.numOutputs, numDynamic,
                                       loop);
      !s)
    return launcherFail(kLauncherInvalidPlan, c.entry, s.message);
  bool badArgument = false;
  std::string error;
  if (!gatherGpuBatchBounds(loop, c.boundArgs, c.numBounds, all.bounds,
                            badArgument, error))
    return launcherFail(badArgument ? kLauncherInvalidArgument
                                    : kLauncherInvalidPlan,
                        c.entry, error);
  for (int64_t b = 0; b < loop.axisSize; ++b) {
    GpuBatchOperands iteration;
    if (GpuStatus s = gpuBatchIteration(loop, b, all, iteration); !s)
      return launcherFail(kLauncherInvalidArgument, c.entry,
                          "batch iteration " + std::to_string(b) + " of " +
                              std::to_string(loop.axisSize) + ": " +
                              s.message);
    GpuLauncherLaunch l;
    if (int status =
            fillGridSizes(c, iteration.bounds.data(),
                          static_cast<int64_t>(iteration.bounds.size()),
                          " in batch iteration " + std::to_string(b) + " of " +
                              std::to_string(loop.axisSize),
                          l.gridSizes, checkBounds))
      return status;
    l.inputs = std::move(iteration.inputs);
    l.outputs = std::move(iteration.outputs);
    launches.push_back(std::move(l));
  }
  return kLauncherOk;
}

/// The status of launch k's failure `s`, with the message "<where>: [batch
/// iteration k of N: ]<s's message>".
static int failLaunch(const GpuLauncherCall &c, const std::string &where,
                      size_t k, size_t numLaunches, const GpuStatus &s) {
  return launcherFail(gpuLauncherStatus(s.error), c.entry,
                      where + ": " +
                          gpuLauncherIterationPrefix(c, k, numLaunches) +
                          s.message);
}

int gpuLauncherCheckAlignment(const GpuLauncherCall &c,
                              const GpuLaunchRecord &record,
                              const std::vector<GpuLauncherLaunch> &launches,
                              const std::string &where) {
  for (size_t k = 0; k < launches.size(); ++k)
    if (GpuStatus s = checkPointerAlignment(record, launches[k].inputs,
                                            launches[k].outputs);
        !s)
      return failLaunch(c, where, k, launches.size(), s);
  return kLauncherOk;
}

int gpuLauncherLaunchEach(
    const GpuLauncherCall &c, const GpuLaunchRecord &record,
    const std::vector<GpuLauncherLaunch> &launches, const std::string &where,
    const std::function<GpuStatus(const GpuLauncherLaunch &)> &launch) {
  if (int status = gpuLauncherCheckAlignment(c, record, launches, where))
    return status;
  for (size_t k = 0; k < launches.size(); ++k)
    if (GpuStatus s = launch(launches[k]); !s)
      return failLaunch(c, where, k, launches.size(), s);
  return kLauncherOk;
}

std::string gpuLauncherIterationPrefix(const GpuLauncherCall &c,
                                       size_t launch, size_t numLaunches) {
  if (!c.batchLoop)
    return "";
  return "batch iteration " + std::to_string(launch) + " of " +
         std::to_string(numLaunches) + ": ";
}

void gpuLauncherOperands(const GpuLauncherCall &c,
                         std::vector<uint64_t> &inputs,
                         std::vector<uint64_t> &outputs) {
  inputs.clear();
  outputs.clear();
  for (int64_t k = 0; k < c.numInputs + c.numOutputs; ++k)
    (k < c.numInputs ? inputs : outputs)
        .push_back(reinterpret_cast<uintptr_t>(c.operands[k]));
}

std::string gpuImageList(const pallasc_gpu_image *images, int64_t n,
                         const char *(*format)(int64_t kind)) {
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += std::string(i ? ", " : "") + format(images[i].kind) + " " +
         (images[i].arch ? images[i].arch : "?");
  return s.empty() ? "none" : s;
}

bool gpuImageRecord(const pallasc_gpu_image &image, GpuLaunchRecord &record,
                    std::string &error) {
  error.clear();
  if (image.record && image.recordSize >= 0 &&
      decodeGpuLaunchRecord(
          std::string_view(image.record, static_cast<size_t>(image.recordSize)),
          record, error))
    return true;
  if (error.empty())
    error = "no launch record";
  return false;
}

} // namespace pallasc::launch
