// pallas-gpu-module-to-ptx on modules it cannot serialize: a diagnostic on
// the module, never a crash.
// RUN: pallasc-opt %s --split-input-file --pallas-gpu-module-to-ptx --verify-diagnostics --mlir-print-ir-after-failure=false -o /dev/null

// expected-error @+1 {{target #rocdl.target<chip = "gfx942"> is not an #nvvm.target (this pass only writes PTX)}}
gpu.module @amd [#rocdl.target<chip = "gfx942">] {
}

// -----

// expected-error @+1 {{has no target; attach one with nvvm-attach-target}}
gpu.module @none {
}
