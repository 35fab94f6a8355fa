//===- CpuPipeline.cpp - pallas kernels to host LLVM ------------*- C++ -*-===//
//
// The host pipeline (docs/run.md), after pallas-to-linalg, and the host's
// lowering from loops to the LLVM dialect it shares with the GPU emulator.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Passes.h"
#include "passes/Pipelines/Pipelines.h"

#include "passes/Conversion/Passes.h"
#include "passes/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/RequestCWrappers.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::pallas::addResolvePlatform(OpPassManager &pm,
                                      const std::string &platform) {
  PallasResolvePlatformOptions options;
  options.platform = platform;
  pm.addPass(createPallasResolvePlatform(options));
}

void mlir::pallas::buildCpuPipeline(OpPassManager &pm) {
  // lax.platform_dependent takes its `cpu` branch, as in interpret mode.
  addResolvePlatform(pm, "cpu");
  // The math ops math-to-llvm lacks (clampf, isinf, isnormal, ipowi), as
  // on the GPU targets.
  pm.addPass(createPallasLegalizeMath());
  // fp8 values are computed in f32 and converted with integer operations.
  pm.addPass(createPallasExpandFp8());
  // Refs take strided memrefs: the runtime passes blocks as views into the
  // (padded) arrays, without copying them (packed int4/int2 refs excepted:
  // their blocks are dense packed copies, pallas-emulate-packed-integers).
  PallasToLinalgOptions toLinalg;
  toLinalg.stridedRefs = true;
  // A symbolic call's symbol values are kernel arguments, after the refs.
  toLinalg.symbolArgs = true;
  pm.addPass(createPallasToLinalg(toLinalg));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Fuse elementwise producers (broadcasts, casts, masks) into their
  // consumers: fewer temporary blocks and passes over memory. A fused body
  // is bounded: LLVM's code generation is super-linear in the size of one
  // loop body.
  pm.addPass(createPallasCpuFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  // f16/bf16 math runs in f32; then matmul loop order and vectorizable math.
  pm.addPass(math::createMathExtendToSupportedTypes());
  pm.addNestedPass<func::FuncOp>(createPallasCpuOptimize());
  // Every function gets a C-interface wrapper: kernels and index maps are
  // called through `_mlir_ciface_<name>`, the runtime's debug printers are
  // reached through theirs.
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());

  // Values stored whole into a ref (a `restrict` store) are computed in
  // the ref's buffer.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  // One-shot bufferization's inference of loop buffer types is exponential
  // in the depth of a loop nest: cut deep nests into bounded segments.
  pm.addPass(createPallasCpuBoundLoopNests());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Kernel loops carry freshly computed blocks (flash attention's state).
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createCanonicalizerPass());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // int4/uint4/int2/uint2 memrefs hold their elements packed in bytes, as
  // XLA packs them (the runtime passes their blocks so).
  pm.addPass(createPallasEmulatePackedIntegers());
  HostToLLVMOptions toLLVM;
  toLLVM.expandBf16 = true;
  buildHostToLLVMPipeline(pm, toLLVM);
}

void mlir::pallas::buildHostToLLVMPipeline(OpPassManager &pm,
                                           const HostToLLVMOptions &options) {
  if (options.affineLoopsFirst) {
    pm.addPass(memref::createExpandStridedMetadataPass());
    pm.addPass(createLowerAffinePass());
    pm.addPass(createSCFToControlFlowPass());
  } else {
    pm.addPass(createSCFToControlFlowPass());
    pm.addPass(memref::createExpandStridedMetadataPass());
    pm.addPass(createLowerAffinePass());
  }
  if (options.expandBf16) {
    arith::ArithExpandOpsPassOptions expand;
    expand.includeBf16 = true;
    pm.addPass(arith::createArithExpandOpsPass(expand));
  }
  if (options.lowerVectors)
    pm.addPass(createConvertVectorToLLVMPass());

  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::pallas::registerCpuPipelineDialects(DialectRegistry &registry) {
  registry.insert<bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  LLVM::LLVMDialect, ub::UBDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void mlir::pallas::registerPallasPipelines() {
  PassPipelineRegistration<>(
      "pallas-to-cpu-pipeline",
      "Lower pallas kernels and index maps to host LLVM IR (the CPU runtime's "
      "pipeline)",
      buildCpuPipeline);
  // The GPU codegen pipelines' own passes (Passes.td), for pallasc-opt's
  // tests.
  registerPallasPipelinesPasses();
}
