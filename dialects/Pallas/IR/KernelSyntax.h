//===- KernelSyntax.h - The kernel ops' function-like syntax ----*- C++ -*-===//
//
// `pallas.kernel` and `pallas_mgpu.kernel` are both written as a function:
// `@name(%arg: type, ...) attributes {...} { body }`, with argument
// attributes and no results. Their parsers and printers share this; each op
// adds its own checks of the body.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_DIALECTS_PALLAS_IR_KERNELSYNTAX_H
#define PALLASC_DIALECTS_PALLAS_IR_KERNELSYNTAX_H

#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

namespace mlir::pallas {

/// Parses a kernel op's name, signature, attributes and body region.
template <typename KernelLikeOp>
ParseResult parseKernelSyntax(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType = [](Builder &builder, ArrayRef<Type> argTypes,
                          ArrayRef<Type> results,
                          function_interface_impl::VariadicFlag,
                          std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      KernelLikeOp::getFunctionTypeAttrName(result.name), buildFuncType,
      KernelLikeOp::getArgAttrsAttrName(result.name),
      KernelLikeOp::getResAttrsAttrName(result.name));
}

/// Prints what parseKernelSyntax reads; the body's terminator is implicit.
template <typename KernelLikeOp>
void printKernelSyntax(KernelLikeOp op, OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(op.getSymName());
  function_interface_impl::printFunctionSignature(
      p, op, op.getArgumentTypes(), /*isVariadic=*/false,
      op.getResultTypes());
  function_interface_impl::printFunctionAttributes(
      p, op,
      {op.getFunctionTypeAttrName(), op.getArgAttrsAttrName(),
       op.getResAttrsAttrName()});
  p << ' ';
  p.printRegion(op.getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

} // namespace mlir::pallas

#endif // PALLASC_DIALECTS_PALLAS_IR_KERNELSYNTAX_H
