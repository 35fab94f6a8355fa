//===- InitAll.h - Register every pallasc dialect and pass ----*- C++ -*-===//

#ifndef PALLASC_SRC_INITALL_H
#define PALLASC_SRC_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace pallasc {
/// Adds every dialect pallasc reads or produces to `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Registers every pallasc pass and pipeline (idempotent).
void registerAllPasses();
} // namespace pallasc

#endif // PALLASC_SRC_INITALL_H
