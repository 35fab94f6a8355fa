//===- pallasc-opt.cpp - MlirOptMain with everything pallasc has -*- C++ -*-===//

#include "src/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  pallasc::registerAllDialects(registry);
  pallasc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pallasc optimizer driver\n", registry));
}
