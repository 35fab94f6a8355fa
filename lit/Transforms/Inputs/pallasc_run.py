"""What the numeric lit checks of this folder share: one `pallasc run`.

Each check script imports this module (Python puts the script's own folder
first on sys.path) instead of writing the .npy round trip again.
"""
import os
import subprocess
import sys

import numpy as np


def pallasc_run(pallasc, work, kernel, spec, inputs, outputs, flags=(),
                prefix=""):
    """Runs `pallasc run KERNEL --spec SPEC FLAGS` on `inputs` (arrays saved
    as WORK/PREFIXin<i>.npy) and returns the outputs it wrote, loaded.

    `outputs` is their number (files WORK/PREFIXout<i>.npy) or a list of
    names (files WORK/PREFIX<name>.npy). A failed run ends the script with
    pallasc's exit status and standard error.
    """
    args = [pallasc, "run", kernel, "--spec", spec, *flags]
    for i, a in enumerate(inputs):
        path = os.path.join(work, f"{prefix}in{i}.npy")
        np.save(path, a)
        args += ["--input", path]
    names = ([f"out{i}" for i in range(outputs)]
             if isinstance(outputs, int) else list(outputs))
    outs = [os.path.join(work, f"{prefix}{name}.npy") for name in names]
    for path in outs:
        args += ["--output", path]
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"pallasc run failed ({result.returncode}; flags: "
                 f"{' '.join(flags) or 'none'}):\n{result.stderr}")
    return [np.load(path) for path in outs]


def to_bf16(values):
    """float32 -> bf16 as pallasc's .npy reader wants it (<V2, the top half)."""
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(
        np.uint16).view("V2")


def bf16_to_f32(a):
    """A <V2 bf16 array (pallasc's .npy form) as float32."""
    return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
