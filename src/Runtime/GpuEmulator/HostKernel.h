//===- HostKernel.h - The distributed gpu.func as a host function -*- C++ -*-===//
//
// The emulator runs the GPU lowering's own output: the gpu.func that
// pallas-to-gpu produced (before NVVM/ROCDL) is moved into a host
// func.func, `pallasc_emu_kernel`, whose GPU-specific ops (thread and block
// ids, barriers, shuffles, mma.sync / MFMA / wgmma, ldmatrix, cp.async, TMA,
// mbarriers, fences) become calls of the emulator's intrinsics
// (Intrinsics.h), with shared memory as an extra memref argument; then it
// is lowered to the LLVM dialect for the JIT.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_GPUEMULATOR_HOSTKERNEL_H
#define PALLASC_SRC_RUNTIME_GPUEMULATOR_HOSTKERNEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace pallasc::runtime::emulator {

/// Rewrites the gpu.func of `module` into `pallasc_emu_kernel` (its
/// arguments, then the shared memory as memref<?xi8>) and erases the
/// gpu.module. Fails with `error` set for ops the emulator does not run.
mlir::FailureOr<mlir::func::FuncOp> buildHostKernel(mlir::ModuleOp module,
                                                    std::string &error);

/// Lowers the rewritten module to the LLVM dialect.
mlir::LogicalResult lowerHostKernel(mlir::ModuleOp module);

} // namespace pallasc::runtime::emulator

#endif // PALLASC_SRC_RUNTIME_GPUEMULATOR_HOSTKERNEL_H
