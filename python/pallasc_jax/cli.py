"""`pallasc-export MODULE:FUNCTION --arg 'f32[4,128]' ... -o DIR`."""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import importlib.util
import os
import re
import sys

_DTYPES = {"bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32",
           "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
           "u64": "uint64", "f16": "float16", "bf16": "bfloat16",
           "f32": "float32", "f64": "float64", "f8e4m3fn": "float8_e4m3fn",
           "f8e5m2": "float8_e5m2", "f8e4m3fnuz": "float8_e4m3fnuz",
           "f8e5m2fnuz": "float8_e5m2fnuz", "i4": "int4", "u4": "uint4",
           "i2": "int2", "u2": "uint2"}


_SCOPE = []  # the one jax.export.SymbolicScope of this command's --args


def parse_arg(text: str):
  """'f32[4,128]' (or 'f32[]' for a scalar) -> jax.ShapeDtypeStruct. A
  dimension may be a JAX symbolic dimension ('f32[n,4096]', 'f32[2*b,128]'):
  every --arg of a command shares one symbolic scope."""
  import jax
  import jax.numpy as jnp
  m = re.fullmatch(r"\s*([a-z0-9_]+)\s*\[([^\]]*)\]\s*", text)
  if not m or (m.group(1) not in _DTYPES and m.group(1) not in
               _DTYPES.values()):
    raise ValueError(f"invalid --arg '{text}': expected DTYPE[D0,D1,...] with "
                     f"DTYPE one of {', '.join(_DTYPES)} (e.g. 'f32[4,128]', "
                     "'f32[n,4096]')")
  dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
  dtype = _DTYPES.get(m.group(1), m.group(1))
  if all(re.fullmatch(r"[0-9]+", d) for d in dims):
    return jax.ShapeDtypeStruct(tuple(int(d) for d in dims),
                                jnp.dtype(dtype))
  from jax import export
  if not _SCOPE:
    _SCOPE.append(export.SymbolicScope())
  try:
    shape = export.symbolic_shape(", ".join(dims), scope=_SCOPE[0])
  except Exception as e:
    raise ValueError(f"invalid --arg '{text}': {e}") from None
  return jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))


def parse_static(text: str):
  """'name=value' with a Python literal value (a bare word is a string)."""
  if "=" not in text:
    raise ValueError(f"invalid --static '{text}': expected NAME=VALUE")
  name, value = text.split("=", 1)
  name = name.strip()
  if not name.isidentifier():
    raise ValueError(f"invalid --static '{text}': '{name}' is not a name")
  try:
    v = ast.literal_eval(value)
  except (ValueError, SyntaxError):
    v = value
  return name, v


def load_function(spec: str):
  if ":" not in spec:
    raise ValueError(f"invalid target '{spec}': expected MODULE:FUNCTION")
  mod_name, attr = spec.split(":", 1)
  if os.getcwd() not in sys.path:
    sys.path.insert(0, os.getcwd())
  if mod_name.endswith(".py") or os.sep in mod_name:
    path = mod_name
    name = os.path.splitext(os.path.basename(path))[0]
    s = importlib.util.spec_from_file_location(name, path)
    if s is None:
      raise ValueError(f"cannot load '{path}'")
    module = importlib.util.module_from_spec(s)
    sys.modules[name] = module
    s.loader.exec_module(module)
  else:
    module = importlib.import_module(mod_name)
  obj = module
  for part in attr.split("."):
    if not hasattr(obj, part):
      raise ValueError(f"'{mod_name}' has no attribute '{attr}'")
    obj = getattr(obj, part)
  if not callable(obj):
    raise ValueError(f"'{spec}' is not callable")
  return obj


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(
      prog="pallasc-export",
      description="Trace a JAX function and write, for every pallas_call in "
      "it, the kernel MLIR and grid spec JSON that pallasc compiles.")
  ap.add_argument("function", help="MODULE:FUNCTION (or path/to/file.py:FUNC)")
  ap.add_argument("--arg", action="append", default=[], metavar="DTYPE[DIMS]",
                  help="a positional array argument, e.g. 'f32[4,128]' "
                  "(repeatable, in order)")
  ap.add_argument("--static", action="append", default=[],
                  metavar="NAME=VALUE",
                  help="a static keyword argument (a Python literal)")
  ap.add_argument("-o", "--out-dir", required=True, help="output directory")
  ap.add_argument("--name", help="artifact name (default: the pallas_call's "
                  "name or the kernel function's)")
  ap.add_argument("--device", metavar="DEVICE",
                  help="the GPU to trace for: h100, h200, b200, or "
                  "NAME:sms=N,cc=MAJOR.MINOR,cuda=VERSION; the ops' device "
                  "queries (SM count, compute capability, CUDA version) "
                  "answer from it (default: the machine's devices)")
  ap.add_argument("--source-root", help="Python paths in locations are "
                  "relative to this directory (default: the current one)")
  args = ap.parse_args(argv)
  try:
    arrays = [parse_arg(a) for a in args.arg]
    statics = dict(parse_static(s) for s in args.static)
    if args.device:
      from .device import parse as parse_device
      parse_device(args.device)
    fn = load_function(args.function)
  except ValueError as e:
    print(f"pallasc-export: error: {e}", file=sys.stderr)
    return 2
  from .errors import ExportError
  from .export import export
  if statics:
    fn = functools.partial(fn, **statics)
  try:
    paths = export(fn, *arrays, out_dir=args.out_dir, name=args.name,
                   source_root=args.source_root, device=args.device)
  except ExportError as e:
    print(f"pallasc-export: {e}", file=sys.stderr)
    return 1
  except Exception as e:  # JAX's own tracing errors: the user's mistake
    print(f"pallasc-export: error: tracing {args.function} failed: "
          f"{type(e).__name__}: {e}", file=sys.stderr)
    return 1
  for p in paths:
    print(p)
  return 0


if __name__ == "__main__":
  sys.exit(main())
