//===- ExternSharedMemory.cpp - pallas-gpu-extern-shared-memory --*- C++ -*-===//
//
// The dynamic shared memory global as an extern array (see GPUCodegen.td).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASGPUEXTERNSHAREDMEMORY
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

struct PallasGPUExternSharedMemoryPass
    : pallas::impl::PallasGPUExternSharedMemoryBase<
          PallasGPUExternSharedMemoryPass> {
  void runOnOperation() override {
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != 3 || !array || array.getNumElements() != 0 ||
          global.getLinkage() != LLVM::Linkage::Internal ||
          global.getInitializerRegion().getBlocks().size() != 0 ||
          global.getValueAttr())
        continue;
      global.setLinkage(LLVM::Linkage::External);
    }
  }
};

} // namespace
