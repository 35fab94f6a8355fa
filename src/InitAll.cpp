//===- InitAll.cpp - Register every pallasc dialect and pass ---*- C++ -*-===//

#include "src/InitAll.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "dialects/PallasMGPU/IR/MgpuDialect.h"
#include "dialects/TPU/IR/TPUDialect.h"
#include "passes/Conversion/Passes.h"
#include "passes/Pipelines/CudaPipeline.h"
#include "passes/Pipelines/Pipelines.h"
#include "passes/Pipelines/RocmPipeline.h"
#include "passes/Pipelines/TpuPipeline.h"
#include "passes/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

void pallasc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::pallas::PallasDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                  mlir::linalg::LinalgDialect, mlir::memref::MemRefDialect,
                  mlir::vector::VectorDialect, mlir::tpu::TPUDialect,
                  mlir::pallas_mgpu::MgpuDialect>();
  mlir::pallas::registerCpuPipelineDialects(registry);
  mlir::pallas::registerCudaPipelineDialects(registry);
  mlir::pallas::registerRocmPipelineDialects(registry);
}

void pallasc::registerAllPasses() {
  // Once per process, from whichever thread asks first (the registry is
  // global and not thread-safe to fill).
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerTransformsPasses();
    mlir::pallas::registerPallasTransformsPasses();
    mlir::pallas::registerPallasConversionPasses();
    mlir::pallas::registerPallasPipelines();
    mlir::pallas::registerCudaPipeline();
    mlir::pallas::registerRocmPipeline();
    mlir::pallas::registerTpuPipeline();
  });
}
