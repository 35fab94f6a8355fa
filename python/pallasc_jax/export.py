"""Tracing a function, finding its pallas_calls and writing, per call, the
kernel `.mlir` and the grid spec `.json` that pallasc compiles."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import tempfile
from typing import Any, Sequence

import numpy as np

import jax
from jax._src import core as jax_core
from jax._src.pallas import core as pallas_core
from jax._src import source_info_util
from jax._src.export import shape_poly
from jax._src.state.types import AbstractRef

from . import device as device_mod
from . import mlir as M
from .errors import ExportError
from .indexmap import affine_map, index_map_func
from .lowering import (Function, Locations, Lowering, RefV, frame_of,
                       user_frame, where)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")


def _ident(name: str, fallback: str) -> str:
  name = re.sub(r"[^A-Za-z0-9_$.]", "_", name or "")
  if not name:
    name = fallback
  if not re.match(r"[A-Za-z_]", name):
    name = "k_" + name
  return name


@dataclasses.dataclass
class ExportedCall:
  """One pallas_call as pallasc input."""
  name: str
  kernel_mlir: str
  spec: dict
  eqn: Any  # the pallas_call equation (for tests: JAX's interpret mode)
  paths: tuple = ()
  grid_dims: Any = ()  # the symbolic dimensions of the grid

  @property
  def in_avals(self):
    if self.eqn.primitive.name == "mpmd_map":
      return [v.aval for v in self.eqn.invars]
    gm = self.eqn.params["grid_mapping"]
    return [v.aval for v in self.eqn.invars[gm.num_dynamic_grid_bounds:]]

  @property
  def out_avals(self):
    return list(self.eqn.params["out_avals"])


# ---------------------------------------------------------------------------
# Memory spaces, compiler params
# ---------------------------------------------------------------------------

def memory_space(ms, what: str, where_: str) -> str:
  """pallasc's name of a JAX memory space."""
  if ms is None:
    return "default"
  v = getattr(ms, "value", ms)
  name = str(v).lower()
  table = {"default": "default", "any": "any", "vmem": "vmem", "smem": "smem",
           "semaphore_mem": "semaphore", "semaphore": "semaphore",
           "hbm": "hbm", "gmem": "gmem", "global": "gmem",
           "device": "default"}
  if name in table:
    return table[name]
  if name.startswith("memoryspace."):
    return memory_space(name.split(".", 1)[1], what, where_)
  raise ExportError(f"{what}: memory space {ms} is not supported by pallasc "
                    f"(supported: {', '.join(sorted(set(table.values())))})",
                    where_)


def _semantics(s) -> str:
  v = str(getattr(s, "value", s)).lower()
  v = v.split(".")[-1]
  if v not in ("parallel", "arbitrary", "core_parallel", "subcore_parallel"):
    raise ExportError(f"dimension semantics {s!r} is not supported")
  return v


def compiler_params(cp, grid_len: int, vmapped: Sequence[int], where_: str):
  """The spec's compiler_params from Triton / Mosaic TPU CompilerParams."""
  if cp is None:
    return None
  if isinstance(cp, dict):  # older JAX: {"triton": {...}, "mosaic": {...}}
    out = {}
    for k, v in cp.items():
      sub = compiler_params(_DictParams(k, v), grid_len, vmapped, where_)
      out.update(sub or {})
    return out or None
  mod = type(cp).__module__
  fields = {f.name: getattr(cp, f.name) for f in dataclasses.fields(cp)}
  if ".triton" in mod or getattr(cp, "PLATFORM", "") == "triton":
    gpu = {}
    for k, v in fields.items():
      if v is None:
        continue
      if k in ("num_warps", "num_stages"):
        gpu[k] = int(v)
      else:
        raise ExportError(f"Triton compiler parameter '{k}' = {v!r} is not "
                          "supported by pallasc", where_)
    return {"gpu": gpu} if gpu else None
  if ".mosaic" in mod and "mosaic_gpu" not in mod:
    tpu = {}
    defaults = {f.name: f.default for f in dataclasses.fields(cp)}
    for k, v in fields.items():
      if k == "dimension_semantics":
        if v is None:
          continue
        sem = [_semantics(s) for s in v]
        it = iter(sem)
        tpu[k] = [next(it) if i not in vmapped else "parallel"
                  for i in range(grid_len)] if len(sem) + len(vmapped) == (
                      grid_len) else sem
      elif k == "vmem_limit_bytes":
        if v is not None:
          tpu[k] = int(v)
      elif k == "has_side_effects":
        if v:
          tpu[k] = True
      elif k == "collective_id":
        # The barrier semaphore's id (pltpu.get_barrier_semaphore) of a
        # kernel that communicates across devices.
        if v is not None:
          tpu[k] = int(v)
      elif v != defaults.get(k) and not (v is None and defaults.get(k) in
                                         (None, False)):
        raise ExportError(f"Mosaic TPU compiler parameter '{k}' = {v!r} is "
                          "not supported by pallasc", where_)
    return {"tpu": tpu} if tpu else None
  raise ExportError(f"compiler params {type(cp).__name__} ({mod}) are not "
                    "supported by pallasc (Triton and Mosaic TPU params are)",
                    where_)


class _DictParams:
  def __init__(self, kind, d):
    self.kind, self.d = kind, d


# ---------------------------------------------------------------------------
# One pallas_call
# ---------------------------------------------------------------------------

def _block_entry(bd, where_):
  from jax._src.pallas import core as pc
  if isinstance(bd, pc.Squeezed) or bd is None:
    return None
  if isinstance(bd, pc.Blocked):
    return int(bd.block_size)
  if isinstance(bd, pc.Element):
    lo, hi = bd.padding
    e = {"element": int(bd.block_size)}
    if (lo, hi) != (0, 0):
      e["padding"] = [int(lo), int(hi)]
    return e
  if isinstance(bd, int):
    return int(bd)
  if isinstance(bd, pc.BoundedSlice):
    raise ExportError(f"block dimension {bd!r}: pl.BoundedSlice is a "
                      "pltpu.emit_pipeline block dimension; JAX's pallas_call "
                      "lowerings and interpret mode refuse it too ('Unsupported "
                      "block dimension type'); use a Blocked dimension or "
                      "pl.Element", where_)
  raise ExportError(f"block dimension {bd!r} ({type(bd).__name__}) is not "
                    "supported by pallasc (Blocked, Squeezed/None and "
                    "pl.Element are)", where_)


def export_call(eqn, name_hint: str, locs: Locations,
                dims_as_values=None) -> ExportedCall:
  p = eqn.params
  here = where(eqn.source_info)
  gm = p["grid_mapping"]
  kjaxpr = p["jaxpr"]
  if p.get("mesh") is not None:
    raise ExportError("pallas_call with a mesh (core_map) is not supported",
                      here)
  # Refs closed over by the kernel come first among the call's operands.
  nrefs = sum(isinstance(v.aval, AbstractRef) for v in eqn.invars)
  if nrefs:
    raise ExportError("a kernel that closes over Refs (pl.get_global / "
                      "captured refs) is not supported", here)
  if any(bm.transforms for bm in gm.block_mappings):
    raise ExportError("block specs with transforms (tiling/swizzling) are not "
                      "supported", here)
  for bm in gm.block_mappings:
    pm = bm.pipeline_mode
    if pm is None:
      continue
    # pl.Buffered(n) becomes the block spec's buffer_count; its lookahead
    # and revisit options have no spec field.
    if not isinstance(pm, pallas_core.Buffered):
      raise ExportError(f"{bm.origin}: pipeline_mode={pm} is not supported; "
                        "expected pl.Buffered(n)", here)
    if pm.use_lookahead or pm.revisit is not None:
      raise ExportError(f"{bm.origin}: pipeline_mode={pm}: use_lookahead and "
                        "revisit are not supported; expected "
                        "pl.Buffered(n)", here)

  dbg = getattr(kjaxpr, "debug_info", None)
  src = getattr(dbg, "func_src_info", None) or ""
  kname = src.split(" at ")[0] if src else "kernel"
  kfile, kline = None, 1
  m = re.match(r".* at (.*):(\d+)$", src)
  if m:
    kfile, kline = m.group(1), int(m.group(2))
  kernel_sym = _ident(kname, "kernel")
  call_name = _ident(p.get("name") or name_hint or kname, kernel_sym)
  kloc = locs.file_loc(kfile, kline, 1) if kfile else (
      _eqn_loc(eqn, locs) or locs.alias("loc(unknown)"))

  grid = list(gm.grid)
  ngrid = len(grid)
  vmapped = tuple(gm.vmapped_dims)
  kernel_axes = [i for i in range(ngrid) if i not in vmapped]
  nidx = gm.num_index_operands
  nin, nout = gm.num_inputs, gm.num_outputs
  nscratch = len(gm.scratch_avals)
  ndyn = gm.num_dynamic_grid_bounds
  operands = eqn.invars[ndyn:]
  if len(operands) != nidx + nin:
    raise ExportError("internal error: operand count", here)

  counter = [0]
  # Kernel arguments.
  fn = Function(counter)
  low = Lowering(fn, locs, kernel_axes=kernel_axes)
  low.mesh = _MESH_OF.get(id(eqn))
  low.loc = kloc
  args, sig, prefetch_types = [], [], []
  roles = (["idx"] * nidx + ["in"] * nin + ["out"] * nout +
           ["scratch"] * nscratch)
  if len(kjaxpr.invars) != len(roles):
    raise ExportError(f"kernel takes {len(kjaxpr.invars)} refs but the call "
                      f"has {len(roles)} operands", here)
  arg_names = list(getattr(dbg, "arg_names", None) or [])
  for i, (v, role) in enumerate(zip(kjaxpr.invars, roles)):
    aval = v.aval
    if not isinstance(aval, AbstractRef):
      raise ExportError(f"kernel argument {i} is not a Ref", here)
    inner = aval.inner_aval
    dtype = inner.dtype
    space = _arg_space(aval, role, here, i)
    if role == "scratch" and space == "semaphore":
      dtype = np.dtype(np.int32)
    hint = _ident(arg_names[i], "a") if i < len(arg_names) and arg_names[i] \
        else f"{role}{i}"
    hint = re.sub(r"[^A-Za-z0-9_]", "_", hint)
    nm = f"%{hint}" if not hint[0].isdigit() else f"%a{hint}"
    if nm in [a.name for a in args]:
      nm = f"{nm}_{i}"
    r = RefV(nm, tuple(inner.shape), np.dtype(dtype), space)
    args.append(r)
    sig.append(f"{nm}: {r.type} loc({kloc})")
    if role == "idx":
      prefetch_types.append((r.shape, r.dtype, r.space))

  spec: dict = {"schema": "pallasc.gridspec/v1", "kernel": kernel_sym,
                "name": call_name}
  # A dynamic bound that JAX made of a symbolic dimension
  # (dim_as_value) is written as that dimension's expression.
  bounds = iter(eqn.invars[:ndyn])
  grid_dims = []
  spec["grid"] = []
  for g in grid:
    if isinstance(g, (int, np.integer)):
      spec["grid"].append(int(g))
      continue
    d = (dims_as_values or {}).get(next(bounds, None))
    if d is not None and jax_core.is_symbolic_dim(d):
      grid_dims.append(d)
      spec["grid"].append(_dim(d))
    else:
      spec["grid"].append("dynamic")
  gn = gm.grid_names
  if gn is not None and all(isinstance(n, str) and _IDENT.match(n)
                            for n in gn) and len(set(gn)) == len(gn):
    spec["grid_names"] = list(gn)
  if nidx:
    spec["num_scalar_prefetch"] = nidx
  in_avals = [v.aval for v in operands]
  spec["inputs"] = [_array(a, here) for a in in_avals]
  spec["outputs"] = [_array(a, here) for a in p["out_avals"]]

  # Index maps.
  extra_funcs: list[list[str]] = []
  specs = []
  for k, bm in enumerate(gm.block_mappings):
    specs.append(_block_spec(bm, k, ngrid, kernel_sym, prefetch_types, counter,
                             locs, kloc, extra_funcs, here))
  spec["in_specs"] = specs[:nin]
  spec["out_specs"] = specs[nin:]
  if nscratch:
    sc = []
    for j, a in enumerate(gm.scratch_avals):
      r = args[nidx + nin + nout + j]
      sc.append({"shape": list(r.shape), "dtype": M.spec_dtype(r.dtype),
                 "memory_space": r.space})
    spec["scratch_shapes"] = sc
  aliases = p.get("input_output_aliases") or ()
  if aliases:
    spec["input_output_aliases"] = {str(int(i)): int(o) for i, o in aliases}
  ce = p.get("cost_estimate")
  if ce is not None:
    if getattr(ce, "remote_bytes_transferred", 0):
      raise ExportError("cost_estimate.remote_bytes_transferred is not "
                        "supported by pallasc", here)
    spec["cost_estimate"] = {"flops": int(ce.flops),
                             "bytes_accessed": int(ce.bytes_accessed),
                             "transcendentals": int(ce.transcendentals)}
  cp = compiler_params(p.get("compiler_params"), ngrid, vmapped, here)
  if cp:
    spec["compiler_params"] = cp
  md = p.get("metadata")
  if md:
    spec["metadata"] = {str(k): str(v) for k, v in dict(md).items()}

  # The kernel body. `pl.run_scoped` allocations become scratch operands
  # after the call's own (their contents are undefined on entry to each
  # scope, so one buffer for the whole kernel serves every scope).
  scoped: list = []

  def scoped_scratch(aval):
    k = nidx + nin + nout + nscratch + len(scoped)
    if not isinstance(aval, AbstractRef):
      raise ExportError(f"run_scoped allocation {aval} is not a Ref", here)
    space = _arg_space(aval, "scratch", here, k)
    dtype = np.dtype(np.int32) if space == "semaphore" else np.dtype(
        aval.inner_aval.dtype)
    r = RefV(f"%scoped{len(scoped)}", tuple(aval.inner_aval.shape), dtype,
             space)
    sig.append(f"{r.name}: {r.type} loc({kloc})")
    scoped.append(r)
    return r
  low.scoped_scratch = scoped_scratch
  outs = low.lower_jaxpr(kjaxpr, args)
  del outs
  if scoped:
    spec.setdefault("scratch_shapes", []).extend(
        {"shape": list(r.shape), "dtype": M.spec_dtype(r.dtype),
         "memory_space": r.space} for r in scoped)
  lines = [f"pallas.kernel @{kernel_sym}({', '.join(sig)}) {{"] + fn.lines + [
      f"}} loc({kloc})"]
  body = []
  for f in extra_funcs:
    body += f + [""]
  body += lines
  header = [f"// Exported by pallasc-export from the pallas_call at "
            f"{locs.display(here.rsplit(':', 2)[0]) if here else '?'}"
            f"{':' + here.rsplit(':', 2)[1] if here else ''}.", ""]
  text = "\n".join(header + locs.header() + [""] + body) + "\n"
  c = ExportedCall(call_name, text, spec, eqn)
  c.grid_dims = grid_dims
  symbols = _symbols(_symbol_dims(c))
  if symbols:
    # After "name", as docs/gridspec.md orders the keys.
    items = list(spec.items())
    spec.clear()
    for k, v in items:
      spec[k] = v
      if k == "name":
        spec["symbols"] = symbols
  return c


def _eqn_loc(eqn, locs):
  f = frame_of(eqn.source_info)
  if f is None:
    return None
  return locs.file_loc(f.file_name, f.start_line, f.start_column + 1)


def _arg_space(aval, role, here, i):
  ms = getattr(aval, "memory_space", None)
  space = memory_space(ms, f"kernel argument {i}", here)
  if role == "idx":
    return "smem"
  return space


def _array(aval, here):
  if not isinstance(aval, jax_core.ShapedArray):
    raise ExportError(f"operand of type {aval} is not an array", here)
  return {"shape": [_dim(d) for d in aval.shape],
          "dtype": M.spec_dtype(aval.dtype)}


# ---------------------------------------------------------------------------
# Symbolic dimensions (jax.export.symbolic_shape): the spec's "symbols"
# ---------------------------------------------------------------------------

def _dim(d):
  """An array dimension or grid entry: an int, or a symbolic dimension's
  expression in the spec's syntax (JAX's, with pl.cdiv's
  floordiv(E + k - 1, k) written cdiv(E, k))."""
  if not jax_core.is_symbolic_dim(d):
    return int(d)
  text = str(d)
  m = re.fullmatch(r"floordiv\((.*) \+ (\d+), (\d+)\)", text)
  if m and int(m.group(2)) + 1 == int(m.group(3)) and int(m.group(3)) > 1:
    text = f"cdiv({m.group(1)}, {m.group(3)})"
  return text


def _symbol_dims(c):
  """The symbolic dimensions a call's operands and grid use."""
  dims = []
  for v in list(c.eqn.invars) + list(c.eqn.params["out_avals"]):
    aval = getattr(v, "aval", v)
    dims += [d for d in getattr(aval, "shape", ()) if
             jax_core.is_symbolic_dim(d)]
  return dims + list(c.grid_dims)


def _symbols(dims) -> dict:
  """The spec's "symbols": each symbol of `dims` with the bounds its
  constraints give (JAX's dimension variables are >= 1)."""
  out = {}
  for d in dims:
    for name in sorted(d._get_vars()):
      if name in out:
        continue
      var = shape_poly._DimExpr._from_var(name, d.scope)
      lo, hi = shape_poly._bounds_decision(var,
                                           shape_poly.BoundsPrecision.BEST)
      entry = {}
      if lo is not None and np.isfinite(lo) and int(lo) > 1:
        entry["min"] = int(lo)
      if hi is not None and np.isfinite(hi):
        entry["max"] = int(hi)
      out[name] = entry
  return dict(sorted(out.items()))


def _dims_as_values(closed) -> dict:
  """var -> the symbolic dimension a `dim_as_value` equation makes of it, in
  `closed` and every jaxpr nested in it (JAX passes symbolic grid bounds to
  a pallas_call this way)."""
  found = {}

  def walk(j):
    for e in j.eqns:
      if e.primitive.name == "dim_as_value":
        found[e.outvars[0]] = e.params["dim"]
      for sub in jax_core.jaxprs_in_params(e.params):
        walk(sub)
  walk(closed.jaxpr if isinstance(closed, jax_core.ClosedJaxpr) else closed)
  return found


def _block_spec(bm, k, ngrid, kernel_sym, prefetch_types, counter, locs, kloc,
                extra_funcs, here):
  aval = bm.transformed_block_aval
  space = memory_space(getattr(aval, "memory_space", None), bm.origin, here)
  out: dict = {}
  if space == "any":
    return {"memory_space": "any"}
  bs = [_block_entry(b, here) for b in bm.block_shape]
  arr = tuple(bm.array_aval.shape)
  if not (all(isinstance(b, int) for b in bs) and tuple(bs) == arr and
          _is_zero_map(bm.index_map_jaxpr)):
    out["block_shape"] = bs
    amap = affine_map(bm.index_map_jaxpr, ngrid)
    if amap is not None:
      if not _is_zero_map(bm.index_map_jaxpr):
        out["index_map"] = amap
    else:
      fname = f"{kernel_sym}_index_map_{k}"
      where_loc = _jaxpr_loc(bm.index_map_jaxpr, locs) or kloc
      extra_funcs.append(index_map_func(bm.index_map_jaxpr, fname, ngrid,
                                        prefetch_types, counter, locs,
                                        where_loc))
      out["index_map"] = "@" + fname
  if space != "default":
    out["memory_space"] = space
  if bm.pipeline_mode is not None:
    out["buffer_count"] = int(bm.pipeline_mode.buffer_count)
  return out


def _is_zero_map(closed):
  j = closed.jaxpr
  return not j.eqns and all(isinstance(o, jax_core.Literal) and
                            int(np.asarray(o.val)) == 0 for o in j.outvars)


def _jaxpr_loc(closed, locs):
  for e in closed.jaxpr.eqns:
    loc = _eqn_loc(e, locs)
    if loc:
      return loc
  return None


# ---------------------------------------------------------------------------
# Tracing and writing
# ---------------------------------------------------------------------------

KERNEL_PRIMITIVES = ("pallas_call", "mpmd_map", "core_map")


def find_pallas_calls(jaxpr, kinds=("pallas_call",)) -> list:
  """Every pallas_call equation (or, with `kinds`, every equation of those
  kernel primitives: `mpmd_map` is a Mosaic GPU `plgpu.kernel`), in program
  order, nested ones included."""
  found = []

  def walk(j, mesh):
    for e in j.eqns:
      if e.primitive.name in kinds:
        found.append(e)
        _MESH_OF[id(e)] = mesh
        continue
      # A kernel inside shard_map sees the mesh's axes (lax.axis_index, the
      # device ids of remote copies and signals).
      inner = e.params.get("mesh", mesh) if e.primitive.name == "shard_map" \
          else mesh
      for sub in jax_core.jaxprs_in_params(e.params):
        walk(sub, inner)
  walk(jaxpr.jaxpr if isinstance(jaxpr, jax_core.ClosedJaxpr) else jaxpr, None)
  return found


# id(pallas_call equation) -> the mesh of the shard_map around it (or None),
# recorded by find_pallas_calls for export_call.
_MESH_OF: dict = {}


def _abstract(a):
  if isinstance(a, jax.ShapeDtypeStruct):
    return a
  if hasattr(a, "shape") and hasattr(a, "dtype"):
    return jax.ShapeDtypeStruct(tuple(a.shape), a.dtype)
  return a


@contextlib.contextmanager
def _own_tracebacks():
  """While tracing, an equation made under a caller's traceback keeps its own.

  JAX traces custom_vjp/custom_jvp rules (and replays jaxprs) inside
  `source_info_util.user_context(caller's traceback)`, so every equation of a
  kernel traced in a backward rule would carry the line that called the op.
  Where the real stack's innermost user frame is not already a frame of that
  context (a replay of equations traced before keeps their own lines), the
  real traceback is recorded instead: the kernel's own lines."""
  orig = source_info_util.current
  ctx = source_info_util._source_info_context
  get_tb = source_info_util.xla_client.Traceback.get_traceback

  def current():
    si = orig()
    if ctx.context.traceback is None:
      return si
    real = get_tb()
    f = user_frame(real)
    if f is None or any(
        (g.file_name, g.start_line) == (f.file_name, f.start_line)
        for g in source_info_util.user_frames(si.traceback)):
      return si
    return si.replace(traceback=real)
  source_info_util.current = current
  try:
    yield
  finally:
    source_info_util.current = orig


def trace(fn, *args, **kwargs) -> list[ExportedCall]:
  """Traces `fn(*args)` and translates every pallas_call it makes (nothing
  is written)."""
  source_root = kwargs.pop("source_root", None)
  name = kwargs.pop("name", None)
  dev = kwargs.pop("device", None)
  if kwargs:
    raise TypeError(f"unexpected arguments {sorted(kwargs)}")
  sargs = [jax.tree_util.tree_map(_abstract, a) for a in args]
  with _own_tracebacks(), device_mod.answering(
      device_mod.parse(dev) if dev else None):
    try:
      closed = jax.make_jaxpr(fn)(*sargs)
    except ValueError as e:
      # Over symbolic shapes JAX traces a pl.ANY operand (whose kernel ref
      # keeps the symbolic dimensions) only with Pallas' dynamic-shapes
      # export on. Only then: JAX caches what it traces under it, and its
      # own TPU export of the same function without it would find that.
      if "dynamically-shaped blocks" not in str(e):
        raise
      with pallas_core.pallas_export_experimental(dynamic_shapes=True):
        closed = jax.make_jaxpr(fn)(*sargs)
  eqns = find_pallas_calls(closed, KERNEL_PRIMITIVES)
  dims = _dims_as_values(closed)
  if not eqns:
    raise ExportError(f"{getattr(fn, '__name__', fn)!r} makes no pallas_call "
                      "(and no plgpu.kernel)")
  calls, used = [], {}
  for i, e in enumerate(eqns):
    hint = name if name and len(eqns) == 1 else (
        f"{name}_{i}" if name else None)
    if e.primitive.name == "core_map":
      raise ExportError("pl.core_map is not supported by pallasc (a Mosaic "
                        "GPU kernel written with plgpu.kernel is)",
                        where(e.source_info))
    if e.primitive.name == "mpmd_map":
      from .mgpu import export_kernel
      text, spec, cname = export_kernel(e, hint, Locations(source_root))
      c = ExportedCall(cname, text, spec, e)
    else:
      c = export_call(e, hint, Locations(source_root), dims)
    if c.name in used:
      used[c.name] += 1
      c.name = f"{c.name}_{used[c.name]}"
      c.spec["name"] = c.name
    else:
      used[c.name] = 0
    calls.append(c)
  return calls


def spec_json(spec: dict) -> str:
  """The spec as JSON laid out like the hand-written ones: one key per
  line, arrays of scalars and small objects inline."""
  def fmt(v, ind):
    if isinstance(v, dict):
      if not v:
        return "{}"
      flat = json.dumps(v)
      if len(flat) <= 72 and not any(isinstance(x, (dict, list)) and x
                                     for x in v.values() if
                                     isinstance(x, dict)):
        return flat
      pad = "  " * (ind + 1)
      return "{\n" + ",\n".join(f"{pad}{json.dumps(k)}: {fmt(x, ind + 1)}"
                                 for k, x in v.items()) + "\n" + "  " * ind + "}"
    if isinstance(v, list):
      flat = json.dumps(v)
      if len(flat) <= 72:
        return flat
      pad = "  " * (ind + 1)
      return "[\n" + ",\n".join(pad + fmt(x, ind + 1) for x in v) + "\n" + (
          "  " * ind) + "]"
    return json.dumps(v)
  return fmt(spec, 0) + "\n"


def write(calls: list[ExportedCall], out_dir: str) -> list[str]:
  """Writes `<name>.mlir` and `<name>.json` per call, atomically: either
  every file is written or none."""
  os.makedirs(out_dir, exist_ok=True)
  staged = []
  try:
    for c in calls:
      for suffix, text in ((".mlir", c.kernel_mlir),
                           (".json", spec_json(c.spec))):
        final = os.path.join(out_dir, c.name + suffix)
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix="." + c.name,
                                   suffix=suffix + ".tmp")
        with os.fdopen(fd, "w") as f:
          f.write(text)
        staged.append((tmp, final))
    paths = []
    for tmp, final in staged:
      os.replace(tmp, final)
      paths.append(final)
    for c in calls:
      c.paths = (os.path.join(out_dir, c.name + ".mlir"),
                 os.path.join(out_dir, c.name + ".json"))
    return paths
  finally:
    for tmp, _ in staged:
      if os.path.exists(tmp):
        os.unlink(tmp)


def export(fn, *args, out_dir: str, name: str | None = None,
           source_root: str | None = None, device=None) -> list[str]:
  """Traces `fn(*args)` with JAX and writes, for every pallas_call in it
  (nested in jit, vmapped ones as JAX batched them), a kernel `.mlir` and a
  grid spec `.json` that pallasc accepts. `args` are arrays or
  `jax.ShapeDtypeStruct`s. Returns the written paths (`.mlir`, `.json` per
  call, in program order). Raises `ExportError` (nothing written) when a
  primitive or parameter cannot be translated.

  `device` ("h100", or "NAME:sms=N,cc=9.0,cuda=13000", or a
  `pallasc_jax.device.Device`) is the GPU the kernels are traced for: the
  ops' queries of the SM count, compute capability and CUDA version answer
  from it, so Mosaic GPU kernels trace on a machine without that GPU."""
  calls = trace(fn, *args, name=name, source_root=source_root, device=device)
  return write(calls, out_dir)
