"""pallasc_jax: export Pallas kernels written in Python to pallasc.

    import pallasc_jax
    paths = pallasc_jax.export(fn, jax.ShapeDtypeStruct((4, 128), jnp.float32),
                               out_dir="out")

writes, for every `pallas_call` that `fn` makes, `<name>.mlir` (the kernel in
pallasc's `pallas` dialect, every op located at its Python line) and
`<name>.json` (the grid spec), which `pallasc <name>.mlir --spec <name>.json`
compiles. See docs/jax.md.
"""

from .errors import ExportError
from .export import ExportedCall, export, find_pallas_calls, trace, write

__all__ = ["ExportError", "ExportedCall", "export", "find_pallas_calls",
           "trace", "write"]
__version__ = "0.1.0"
