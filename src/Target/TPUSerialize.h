//===- TPUSerialize.h - Mosaic serialization and backend config -*- C++ -*-===//
//
// What jax/_src/tpu_custom_call.py does with the kernel module Pallas'
// Mosaic lowering produced: `mosaic-serde{serialize=true}` (every op except
// the module renamed `stable_mosaic.<dialect>.<op>`, properties turned into
// attributes, `stable_mosaic.version` set, downgrade rules for older
// versions), MLIR bytecode version 0, and the `tpu_custom_call` backend
// config JSON, byte for byte as CustomCallBackendConfig.to_json writes it.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_TARGET_TPUSERIALIZE_H
#define PALLASC_SRC_TARGET_TPUSERIALIZE_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pallasc::tpu {

/// The Mosaic IR version pallasc writes by default: the one jax 0.10.2
/// writes when exporting or compiling without a TPU attached
/// (tpu_custom_call._FWD_COMPAT_VERSION), readable by every TPU runtime
/// that jax version supports.
constexpr int kDefaultMosaicVersion = 11;
/// The versions the serializer can write (jaxlib 0.10.2 reads up to 15).
constexpr int kMinMosaicVersion = 11;
constexpr int kMaxMosaicVersion = 15;
constexpr const char *kVersionAttrName = "stable_mosaic.version";
constexpr const char *kMangledPrefix = "stable_mosaic.";

/// Renames every op of `module` (not the module) to its stable name and sets
/// the version attribute, applying Mosaic's downgrade rules for `version`.
/// The module is no longer verifiable afterwards (its ops are unregistered);
/// the context must allow unregistered dialects. Fails with a diagnostic
/// when an op cannot be expressed at `version`.
mlir::LogicalResult serializeForMosaic(mlir::ModuleOp module, int version);

/// The module as MLIR bytecode, format version 0 (as Mosaic writes it).
mlir::FailureOr<std::string> writeMosaicBytecode(mlir::ModuleOp module);

/// The fields of the tpu_custom_call backend config that pallas_call sets.
struct BackendConfig {
  struct Cost {
    int64_t flops = 0, transcendentals = 0, bytesAccessed = 0,
            remoteBytesTransferred = 0;
  };
  std::optional<Cost> costEstimate;
  int serializationFormat = 1;
  bool needsLayoutPasses = true;
  bool hasCommunication = false;
  /// compiler_params.tpu.collective_id (the barrier semaphore's id).
  std::optional<int64_t> collectiveId;
  std::optional<int64_t> vmemLimitBytes;
  /// Mosaic compiler flags: name -> bool / integer / double.
  struct Flag {
    std::string name;
    enum class Kind { Bool, Int, Double } kind = Kind::Bool;
    bool b = false;
    int64_t i = 0;
    double d = 0;
  };
  std::vector<Flag> flags;
};

/// True when the Mosaic module sends to another device (a tpu.enqueue_dma or
/// tpu.sem_signal with a device id), as Mosaic's private_has_communication.
bool hasCommunication(mlir::ModuleOp module);

/// `CustomCallBackendConfig.to_json()` for `body` (the bytecode, base64
/// encoded here).
std::string backendConfigJson(llvm::StringRef body,
                              const BackendConfig &config);

} // namespace pallasc::tpu

#endif // PALLASC_SRC_TARGET_TPUSERIALIZE_H
