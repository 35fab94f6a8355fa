//===- AttrGroups.h - attribute groups of their own .td file ---*- C++ -*-===//
//
// The pallas attributes that a TableGen file of their own defines
// (GpuLaunchAttrs.td, GpuCallAttrs.td) reach the dialect's parser, printer
// and attribute verifier through one AttrGroup each: PallasDialect.cpp asks
// the groups of attrGroups() in turn, after the attributes of
// PallasAttrs.td. A new group is one AttrGroup in its file, declared in
// its header, and one entry in attrGroups().
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_DIALECTS_PALLAS_IR_ATTRGROUPS_H
#define PALLASC_DIALECTS_PALLAS_IR_ATTRGROUPS_H

#include "mlir/IR/DialectImplementation.h"

namespace mlir::pallas {

struct AttrGroup {
  /// Parses the attribute whose `mnemonic` the dialect has read: no value
  /// when the mnemonic is none of the group's (parseAttrOf).
  OptionalParseResult (*parse)(AsmParser &parser, StringRef mnemonic,
                               Type type, Attribute &value);
  /// Prints `attr`: failure when it is none of the group's (the group's
  /// generatedAttributePrinter).
  LogicalResult (*print)(Attribute attr, AsmPrinter &printer);
  /// The discardable attribute the group's record travels under, the
  /// record's mnemonic and whether a value is such a record: the dialect
  /// refuses any other value under this name.
  StringRef attrName;
  StringRef recordMnemonic;
  bool (*isRecord)(Attribute value);
};

/// AttrGroup::parse of a group of the attributes `Attrs`.
template <typename... Attrs>
OptionalParseResult parseAttrOf(AsmParser &parser, StringRef mnemonic,
                                Type type, Attribute &value) {
  bool known = ((mnemonic == Attrs::getMnemonic() &&
                 (value = Attrs::parse(parser, type), true)) ||
                ...);
  if (!known)
    return std::nullopt;
  return success(static_cast<bool>(value));
}

} // namespace mlir::pallas

#endif // PALLASC_DIALECTS_PALLAS_IR_ATTRGROUPS_H
