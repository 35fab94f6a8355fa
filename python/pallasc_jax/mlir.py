"""Spelling of MLIR types, constants and locations for the kernel text."""

from __future__ import annotations

import math
import struct

import numpy as np

try:  # ml_dtypes ships with jax; bf16 needs it.
  import ml_dtypes
  _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
  ml_dtypes = None
  _BF16 = None

from .errors import ExportError

# numpy dtype name -> (MLIR element type, grid spec dtype)
_DTYPES = {
    "bool": ("i1", "bool"),
    "int8": ("i8", "i8"), "int16": ("i16", "i16"), "int32": ("i32", "i32"),
    "int64": ("i64", "i64"),
    "uint8": ("i8", "u8"), "uint16": ("i16", "u16"), "uint32": ("i32", "u32"),
    "uint64": ("i64", "u64"),
    "float16": ("f16", "f16"), "bfloat16": ("bf16", "bf16"),
    "float32": ("f32", "f32"), "float64": ("f64", "f64"),
    # fp8 (ml_dtypes): stored as bytes, computed in f32 (pallas-expand-fp8).
    "float8_e4m3fn": ("f8E4M3FN", "f8e4m3fn"),
    "float8_e5m2": ("f8E5M2", "f8e5m2"),
    "float8_e4m3fnuz": ("f8E4M3FNUZ", "f8e4m3fnuz"),
    "float8_e5m2fnuz": ("f8E5M2FNUZ", "f8e5m2fnuz"),
    # Sub-byte integers (ml_dtypes): packed storage, 2 or 4 per byte
    # (docs/gridspec.md), signless in the kernel as the other integers.
    "int4": ("i4", "i4"), "uint4": ("i4", "u4"),
    "int2": ("i2", "i2"), "uint2": ("i2", "u2"),
}

_SUB_BYTE_BITS = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2}

_FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
           "float8_e5m2fnuz")


def dtype_name(dtype) -> str:
  return np.dtype(dtype).name


def elem_type(dtype) -> str:
  """The MLIR element type of a JAX dtype (unsigned types are signless)."""
  try:
    return _DTYPES[dtype_name(dtype)][0]
  except (KeyError, TypeError):
    raise ExportError(f"dtype {dtype} is not supported by pallasc "
                      f"(supported: {', '.join(_DTYPES)})")


def spec_dtype(dtype) -> str:
  """The grid-spec spelling of a JAX dtype."""
  elem_type(dtype)
  return _DTYPES[dtype_name(dtype)][1]


def is_float(dtype) -> bool:
  return dtype_name(dtype) in ("float16", "bfloat16", "float32",
                               "float64") + _FLOAT8


def is_float8(dtype) -> bool:
  return dtype_name(dtype) in _FLOAT8


def is_bool(dtype) -> bool:
  return dtype_name(dtype) == "bool"


def is_unsigned(dtype) -> bool:
  return dtype_name(dtype).startswith("uint")


def is_int(dtype) -> bool:
  """Integers, bool excluded."""
  n = dtype_name(dtype)
  return n.startswith("int") or n.startswith("uint")


def bitwidth(dtype) -> int:
  if is_bool(dtype):
    return 1
  return _SUB_BYTE_BITS.get(dtype_name(dtype), np.dtype(dtype).itemsize * 8)


def tensor_type(shape, dtype) -> str:
  dims = "".join(f"{d}x" for d in shape)
  return f"tensor<{dims}{elem_type(dtype)}>"


def value_type(shape, dtype, scalar: bool) -> str:
  return elem_type(dtype) if scalar else tensor_type(shape, dtype)


def ref_type(shape, dtype, space: str) -> str:
  # A symbolic dimension (a pl.ANY ref over a symbolic array) is `?`.
  dims = "".join(f"{d}x" if isinstance(d, (int, np.integer)) else "?x"
                 for d in shape)
  suffix = "" if space == "default" else f", {space}"
  return f"!pallas.ref<{dims}{elem_type(dtype)}{suffix}>"


def _float_bits(value, dtype) -> str:
  """A float as its bit pattern in hex, the form MLIR reads exactly."""
  name = dtype_name(dtype)
  if name == "float32":
    return "0x%08X" % struct.unpack("<I", struct.pack("<f", value))[0]
  if name == "float64":
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
  if name == "float16":
    return "0x%04X" % int(np.array(value, np.float16).view(np.uint16))
  if name == "bfloat16":
    return "0x%04X" % int(np.array(value, _BF16).view(np.uint16))
  if name in _FLOAT8:
    return "0x%02X" % int(np.array(value, dtype).view(np.uint8))
  raise ExportError(f"not a float dtype: {dtype}")


def scalar_literal(value, dtype) -> str:
  """One element as MLIR spells it for `dtype` (exact for every value)."""
  if is_bool(dtype):
    return "true" if bool(value) else "false"
  if is_float(dtype):
    v = np.array(value).astype(dtype).item()
    v = float(v)
    if dtype_name(dtype) in ("float32", "float64") and math.isfinite(v):
      # repr of the (exactly representable) double round-trips, and MLIR
      # parses it with correct rounding into f32/f64.
      text = repr(v)
      return text if ("e" in text or "." in text) else text + ".0"
    return _float_bits(v, dtype)
  iv = int(np.array(value).astype(dtype).item())
  if is_unsigned(dtype) and iv >= 2 ** (bitwidth(dtype) - 1):
    iv -= 2 ** bitwidth(dtype)  # signless: the same bits as a signed value
  return str(iv)


def dense_literal(array: np.ndarray, dtype) -> str:
  """`dense<...>` for a numpy array (a splat when all elements are equal)."""
  flat = np.asarray(array).astype(dtype).reshape(-1)
  if flat.size == 0:
    return "dense<>"
  first = flat[0]
  if flat.size == 1 or np.all(flat == first) and not (
      is_float(dtype) and np.isnan(np.asarray(flat, np.float64)).any()):
    return f"dense<{scalar_literal(first, dtype)}>"
  arr = np.asarray(array).astype(dtype)

  def rec(a):
    if a.ndim == 0:
      return scalar_literal(a.item() if not is_float(dtype) else a, dtype)
    return "[" + ", ".join(rec(x) for x in a) + "]"
  return f"dense<{rec(arr)}>"


def quote(s: str) -> str:
  """An MLIR string literal."""
  out = []
  for ch in s:
    o = ord(ch)
    if ch == '"' or ch == "\\":
      out.append("\\" + ch)
    elif 32 <= o < 127:
      out.append(ch)
    else:
      for b in ch.encode("utf-8"):
        out.append("\\%02X" % b)
  return '"' + "".join(out) + '"'
