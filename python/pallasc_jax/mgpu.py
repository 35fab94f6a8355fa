"""Mosaic GPU kernels (`plgpu.kernel`, which traces to `mpmd_map` over a
`plgpu.Mesh`) -> the `pallas_mgpu` dialect (docs/dialect.md, "Mosaic GPU").

Shared-memory refs become memrefs in `#pallas_mgpu.smem<tiling, swizzle>`
with their logical shape (JAX allocates the tiled physical shape and views it
through UnswizzleRef/UntilingTransform); `.at[...]` views become
`memref.subview`s; barriers `!pallas_mgpu.barrier<N, arrivals = A>`; the
accumulator a memref in `#pallas_mgpu.acc`. Scalar and register-array
equations use the `pallas` exporter's rules (arith/tensor/scf). Every line is
located at its Python frame; a primitive this module does not translate is
refused by name with that location.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from jax._src import core as jax_core
from jax._src import tree_util

from . import mlir as M
from .errors import ExportError
from .lowering import (RULES, Function, Locations, Lowering, V, registrar,
                       where)

# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MemV:
  """A memref: `space` is gmem, smem or acc; `strides`/`offset` its layout
  (offset None: dynamic); `identity` when it has no layout attribute."""
  name: str
  shape: tuple
  dtype: Any
  space: str
  tiling: tuple = ()
  swizzle: int = 0
  strides: tuple = ()
  offset: Any = 0
  identity: bool = True

  @property
  def type(self) -> str:
    dims = "".join(f"{d}x" for d in self.shape)
    parts = [f"{dims}{M.elem_type(self.dtype)}"]
    if not self.identity:
      off = "?" if self.offset is None else str(self.offset)
      parts.append(f"strided<[{', '.join(map(str, self.strides))}], "
                   f"offset: {off}>")
    if self.space == "smem":
      if self.tiling:
        t = f"tiling = [{', '.join(map(str, self.tiling))}]"
        if self.swizzle:
          t += f", swizzle = {self.swizzle}"
        parts.append(f"#pallas_mgpu.smem<{t}>")
      else:
        parts.append("#pallas_mgpu.smem")
    elif self.space == "acc":
      parts.append("#pallas_mgpu.acc")
    return f"memref<{', '.join(parts)}>"


def _row_major(shape):
  strides, s = [], 1
  for d in reversed(shape):
    strides.append(s)
    s *= int(d)
  return tuple(reversed(strides))


def new_mem(name, shape, dtype, space, tiling=(), swizzle=0) -> MemV:
  shape = tuple(int(d) for d in shape)
  return MemV(name, shape, np.dtype(dtype), space, tuple(tiling),
              int(swizzle), _row_major(shape), 0, True)


@dataclasses.dataclass(frozen=True)
class Refused:
  """A scoped allocation pallasc cannot translate (TMEM, semaphores): the
  kernel is refused, by the primitive that uses it when that primitive is
  refused by name, else by the allocation."""
  message: str
  where: str


@dataclasses.dataclass(frozen=True)
class BarV:
  name: str
  num: int
  arrivals: int

  @property
  def type(self) -> str:
    return f"!pallas_mgpu.barrier<{self.num}, arrivals = {self.arrivals}>"


# ---------------------------------------------------------------------------
# Refusals: primitives of other chips or models, by name
# ---------------------------------------------------------------------------

_BLACKWELL = {
    "tcgen05_mma", "tcgen05_commit_arrive", "async_copy_smem_to_tmem",
    "async_copy_scales_to_tmem", "async_copy_sparse_metadata_to_tmem",
    "async_store_tmem", "wait_load_tmem", "commit_tmem", "async_load_tmem"}
_MULTI_DEVICE = {
    "multimem_store", "multimem_load_reduce", "semaphore_signal",
    "semaphore_signal_multicast", "semaphore_wait", "mgpu_atomic_store"}
_CLUSTER_CANCEL = {"try_cluster_cancel", "query_cluster_cancel"}


def refusal(name: str) -> str | None:
  """Why a primitive is refused by name (None: not one of those)."""
  if name in _BLACKWELL or "tcgen05" in name or "tmem" in name:
    return (f"primitive '{name}' is Blackwell-only (tcgen05/TMEM): pallasc "
            "translates the Hopper subset of Mosaic GPU (sm_90a)")
  if name in _MULTI_DEVICE or name.startswith("multimem"):
    return (f"primitive '{name}' communicates across devices (multimem, "
            "remote refs, semaphores): pallasc compiles single-device kernels")
  if name in _CLUSTER_CANCEL:
    return (f"primitive '{name}' (cluster launch control / cluster cancel) "
            "is not supported by pallasc")
  if name in ("inline_mgpu", "inline_mgpu_p"):
    return ("primitive 'inline_mgpu' embeds Mosaic GPU Python code that "
            "pallasc cannot translate ahead of time")
  return None


# ---------------------------------------------------------------------------
# The lowering
# ---------------------------------------------------------------------------

MGPU_RULES: dict[str, Any] = {}


mrule = registrar(MGPU_RULES)


class MgpuLowering(Lowering):
  """The `pallas` lowering plus the Mosaic GPU primitives."""

  def __init__(self, fn, locs, mesh):
    super().__init__(fn, locs)
    self.mesh = mesh
    self.refused: list[Refused] = []  # unsupported allocations

  def rule_for(self, name):
    """The `pallas` rule of `name` unless it means something else here, else
    the Mosaic GPU rule; a located error where the primitive is refused or
    has no rule."""
    why = refusal(name)
    if why is None and name not in MGPU_RULES:
      if name in RULES and name not in _NOT_IN_MGPU:
        return RULES[name]
    if why is not None:
      raise self.error(why)
    fn = MGPU_RULES.get(name)
    if fn is None:
      raise self.error(f"primitive '{name}' is not supported in a Mosaic GPU "
                       "kernel by pallasc-export (see docs/jax.md, "
                       "\"Mosaic GPU\")")
    return fn


# `pallas` rules that mean something else on Mosaic GPU refs.
_NOT_IN_MGPU = {"get", "swap", "addupdate", "program_id", "num_programs",
                "dma_start", "dma_wait", "masked_load", "masked_swap",
                "atomic_rmw", "atomic_cas", "run_scoped"}


def _lit_int(low, atom, what):
  if not isinstance(atom, jax_core.Literal):
    raise low.error(f"{what} must be a static integer")
  return int(np.asarray(atom.val))


def _index(low, x) -> str:
  """An index SSA value (or a constant) from an int or a jaxpr atom."""
  if isinstance(x, (int, np.integer)):
    return low.index_const(int(x))
  if isinstance(x, jax_core.Literal):
    return low.index_const(int(np.asarray(x.val)))
  v = low.read(x) if isinstance(x, jax_core.Var) else x
  return low.to_index(v)


def _static(x):
  if isinstance(x, (int, np.integer)):
    return int(x)
  if isinstance(x, jax_core.Literal):
    return int(np.asarray(x.val))
  return None


def _transforms(low, eqn, tree_key, leaves):
  tree = eqn.params.get(tree_key)
  if tree is None:
    return (), leaves
  n = tree.num_leaves
  return tree_util.tree_unflatten(tree, leaves[:n]), leaves[n:]


def _check_layout_transform(low, ref: MemV, t):
  cls = type(t).__name__
  if "Remote" in cls or "Peer" in cls:
    raise low.error(f"a remote ref ({cls}) communicates across devices: "
                    "pallasc compiles single-device kernels")
  if cls == "UnswizzleRef":
    if ref.space != "smem" or int(t.swizzle) != ref.swizzle:
      raise low.error(f"unswizzle({t.swizzle}) of a ref that is not "
                      f"swizzled {t.swizzle} bytes")
    return True
  if cls == "UntilingTransform":
    if ref.space != "smem" or tuple(t.tiling) != ref.tiling:
      raise low.error(f"untile({list(t.tiling)}) of a ref not tiled so")
    return True
  return False


def view(low, ref, transforms):
  """`ref` seen through `transforms` (layout ones are the ref's own; each
  NDIndexer is a memref.subview)."""
  from jax._src.state import indexing
  for t in transforms:
    if isinstance(ref, BarV):
      raise low.error("a view of a barrier array must be an index")
    if _check_layout_transform(low, ref, t):
      continue
    if type(t).__name__ == "TransposeTransform":
      ref = _transpose(low, ref, tuple(int(p) for p in t.permutation))
      continue
    if not isinstance(t, indexing.NDIndexer):
      raise low.error(f"ref transform {type(t).__name__} is not supported "
                      "by pallasc-export")
    ref = _subview(low, ref, t)
  return ref


def _transpose(low, ref: MemV, perm) -> MemV:
  """`plgpu.transpose_ref` / `ref.T`: memref.transpose (dimension i of the
  view is dimension perm[i] of the ref)."""
  if sorted(perm) != list(range(len(ref.shape))):
    raise low.error(f"transpose permutation {list(perm)} of a ref of rank "
                    f"{len(ref.shape)}")
  if list(perm) == list(range(len(ref.shape))):
    return ref
  res = dataclasses.replace(ref, name=low.fn.fresh("v"),
                            shape=tuple(ref.shape[p] for p in perm),
                            strides=tuple(ref.strides[p] for p in perm),
                            identity=False)
  dims = ", ".join(f"d{i}" for i in range(len(perm)))
  image = ", ".join(f"d{p}" for p in perm)
  low.emit(f"{res.name} = memref.transpose {ref.name} ({dims}) -> ({image}) "
           f": {ref.type} to {res.type}")
  return res


def _subview(low, ref: MemV, idx) -> MemV:
  from jax._src.state import indexing
  if len(idx.indices) != len(ref.shape):
    raise low.error(f"an indexer of rank {len(idx.indices)} for a ref of "
                    f"rank {len(ref.shape)}")
  offs, sizes, strides, keep = [], [], [], []
  for d, e in enumerate(idx.indices):
    if isinstance(e, indexing.Slice):
      offs.append(e.start)
      sizes.append(int(e.size))
      strides.append(int(e.stride))
      keep.append(True)
    else:
      aval = getattr(e, "aval", None)
      if aval is not None and tuple(aval.shape) != ():
        raise low.error("gather-style (array) indexing of a Mosaic GPU ref "
                        "is not supported by pallasc-export")
      offs.append(e)
      sizes.append(1)
      strides.append(1)
      keep.append(False)
  if all(k for k in keep) and tuple(sizes) == ref.shape and all(
      _static(o) == 0 for o in offs) and all(s == 1 for s in strides):
    return ref
  off_txt = []
  static_off = ref.offset
  for d, o in enumerate(offs):
    s = _static(o)
    if s is None:
      off_txt.append(_index(low, o))
      static_off = None
    else:
      off_txt.append(str(s))
      if static_off is not None:
        static_off += s * ref.strides[d]
  new_shape = tuple(sz for sz, k in zip(sizes, keep) if k)
  new_strides = tuple(ref.strides[d] * strides[d] for d in range(len(keep))
                      if keep[d])
  res = dataclasses.replace(ref, name=low.fn.fresh("v"), shape=new_shape,
                            strides=new_strides, offset=static_off,
                            identity=False)
  low.emit(f"{res.name} = memref.subview {ref.name}[{', '.join(off_txt)}] "
           f"[{', '.join(map(str, sizes))}] [{', '.join(map(str, strides))}] "
           f": {ref.type} to {res.type}")
  return res


def _barrier(low, bar, transforms):
  from jax._src.state import indexing
  if not isinstance(bar, BarV):
    raise low.error("expected a barrier ref")
  idx = None
  for t in transforms:
    if not isinstance(t, indexing.NDIndexer) or len(t.indices) != 1 or \
        isinstance(t.indices[0], indexing.Slice) or idx is not None:
      raise low.error("a barrier must be selected by one integer index "
                      "(barriers.at[i])")
    idx = t.indices[0]
  if idx is None:
    if bar.num != 1:
      raise low.error(f"an array of {bar.num} barriers used without an "
                      "index")
    idx = 0
  return _index(low, idx)


def _ref(low, atom):
  v = low.read(atom)
  if isinstance(v, Refused):
    raise ExportError(v.message, v.where)
  if not isinstance(v, (MemV, BarV)):
    raise low.error("expected a ref")
  return v


# -- mesh and hints ---------------------------------------------------------

@mrule("axis_index")
def _axis_index(low, eqn):
  name = eqn.params["axis_name"]
  if isinstance(name, tuple):
    if len(name) != 1:
      raise low.error(f"axis_index over several axes {name} is not supported")
    name = name[0]
  if name not in low.mesh["axes"]:
    raise low.error(f"axis '{name}' is not an axis of the kernel's mesh "
                    f"({', '.join(low.mesh['axes'])})")
  return low.op(f"pallas_mgpu.axis_index {M.quote(str(name))} : i32", (),
                np.int32, True)


@mrule("set_max_registers_p")
def _set_max_registers(low, eqn):
  n = _lit_int(low, eqn.invars[0], "set_max_registers' count")
  low.emit(f"pallas_mgpu.set_max_registers "
           f"{M.quote(str(eqn.params['action']))} {n}")
  return []


# -- allocation -------------------------------------------------------------

def _alloc(low, var, transforms):
  aval = var.aval
  inner = aval.inner_aval
  cls = type(aval).__name__
  dtype = inner.dtype
  space = str(getattr(getattr(aval, "memory_space", None), "value",
                      getattr(aval, "memory_space", ""))).lower()
  if "Accumulator" in cls:
    name = low.fn.fresh("acc")
    m = new_mem(name, inner.shape, dtype, "acc")
    low.emit(f"{name} = pallas_mgpu.alloc_acc : {m.type}")
    return m
  if type(dtype).__name__ in ("BarrierType", "ClusterBarrierType"):
    attrs = ""
    if type(dtype).__name__ == "ClusterBarrierType":
      # plgpu.ClusterBarrier: an arrive reaches the barrier of every block
      # of the cluster along its axis.
      axes = tuple(dtype.collective_axes)
      if len(axes) != 1 or not isinstance(axes[0], str):
        raise low.error(f"a cluster barrier over collective_axes={axes} is "
                        "not supported: pallasc-export takes one cluster "
                        "axis")
      if getattr(dtype, "leader_tracked", False):
        raise low.error("a leader-tracked cluster barrier "
                        "(plgpu.ClusterBarrier(leader_tracked=True)) is not "
                        "supported by pallasc-export")
      if axes[0] not in low.mesh["cluster_names"]:
        raise low.error(f"cluster barrier axis '{axes[0]}' is not a cluster "
                        "axis of the kernel "
                        f"({', '.join(low.mesh['cluster_names']) or 'none'})")
      attrs = f" {{collective_axes = [{M.quote(axes[0])}]}}"
    b = BarV(low.fn.fresh("bar"), int(np.prod(inner.shape)),
             int(dtype.num_arrivals))
    low.emit(f"{b.name} = pallas_mgpu.alloc_barriers{attrs} : {b.type}")
    return b
  if "tmem" in space:
    r = Refused("TMEM (plgpu.TMEM) is Blackwell-only: pallasc translates the "
                "Hopper subset of Mosaic GPU (sm_90a)", low.here)
    low.refused.append(r)
    return r
  if "semaphore" in type(dtype).__name__.lower() or "sem" in str(dtype):
    r = Refused("semaphores (plgpu.SemaphoreType) synchronize across blocks "
                "or devices through global memory: not supported by pallasc",
                low.here)
    low.refused.append(r)
    return r
  if space not in ("smem", "memoryspace.smem"):
    raise low.error(f"a scoped allocation in memory space '{space}' is not "
                    "supported (SMEM, ACC and Barrier are)")
  shape = tuple(int(d) for d in inner.shape)
  tiling, swizzle = (), 0
  for t in transforms:
    c = type(t).__name__
    if c == "UnswizzleRef":
      swizzle = int(t.swizzle)
    elif c == "UntilingTransform":
      tiling = tuple(int(x) for x in t.tiling)
      k = len(tiling)
      if shape[-k:] != tiling:
        raise low.error(f"tiled buffer of shape {shape} does not end in its "
                        f"tiling {tiling}")
      body = shape[:-k]
      shape = body[:-k] + tuple(b * t_ for b, t_ in zip(body[-k:], tiling))
    else:
      raise low.error(f"shared-memory transform {c} is not supported by "
                      "pallasc-export (tiling and swizzle are)")
  name = low.fn.fresh("smem")
  m = new_mem(name, shape, dtype, "smem", tiling, swizzle)
  low.emit(f"{name} = pallas_mgpu.alloc_smem : {m.type}")
  return m


@mrule("run_scoped")
def _run_scoped(low, eqn):
  j = eqn.params["jaxpr"]
  j = j.jaxpr if isinstance(j, jax_core.ClosedJaxpr) else j
  rts = eqn.params.get("ref_transforms") or ()
  consts = [low.read(a) for a in eqn.invars]
  if len(j.constvars) != len(consts):
    raise low.error("internal error: run_scoped operands")
  for var, c in zip(j.constvars, consts):
    low.bind(var, c)
  allocs = []
  for i, v in enumerate(j.invars):
    allocs.append(_alloc(low, v, rts[i] if i < len(rts) else ()))
  return low.lower_jaxpr(j, allocs)


# -- barriers ---------------------------------------------------------------

def _barrier_op(op):
  def build(low, eqn):
    bar = _ref(low, eqn.invars[0])
    ts, _ = _transforms(low, eqn, "transforms_treedef", eqn.invars[1:])
    i = _barrier(low, bar, ts)
    low.emit(f"pallas_mgpu.{op} {bar.name}[{i}] : {bar.type}")
    return []
  return build


mrule("barrier_arrive")(_barrier_op("barrier_arrive"))
mrule("barrier_wait")(_barrier_op("barrier_wait"))


# -- TMA copies -------------------------------------------------------------

@mrule("copy_gmem_to_smem")
def _copy_g2s(low, eqn):
  p = eqn.params
  src, dst, bar = (_ref(low, a) for a in eqn.invars[:3])
  leaves = list(eqn.invars[3:])
  st, leaves = _transforms(low, eqn, "src_transforms_treedef", leaves)
  dt, leaves = _transforms(low, eqn, "dst_transforms_treedef", leaves)
  bt, leaves = _transforms(low, eqn, "barrier_transforms_treedef", leaves)
  attrs = ""
  axes = p.get("collective_axes")
  if axes:
    # A TMA multicast to the blocks of the cluster along these axes.
    axes = (axes,) if isinstance(axes, str) else tuple(axes)
    if p.get("leader_tracked") is not None:
      raise low.error(f"copy_gmem_to_smem with leader_tracked="
                      f"{p['leader_tracked']} (a partitioned or "
                      "leader-tracked multicast) is not supported by "
                      "pallasc-export")
    for a in axes:
      if not isinstance(a, str) or a not in low.mesh["cluster_names"]:
        raise low.error(f"copy_gmem_to_smem's collective axis {a!r} is not "
                        "a cluster axis of the kernel "
                        f"({', '.join(low.mesh['cluster_names']) or 'none'})")
    attrs = (" {collective_axes = ["
             + ", ".join(M.quote(a) for a in axes) + "]}")
  s, d = view(low, src, st), view(low, dst, dt)
  if s.space != "gmem" or d.space != "smem":
    raise low.error("copy_gmem_to_smem copies a GMEM ref into an SMEM ref")
  i = _barrier(low, bar, bt)
  low.emit(f"pallas_mgpu.copy_gmem_to_smem {s.name}, {d.name}, "
           f"{bar.name}[{i}]{attrs} : {s.type}, {d.type}, {bar.type}")
  return []


@mrule("copy_smem_to_gmem")
def _copy_s2g(low, eqn):
  p = eqn.params
  if p.get("has_user_predicate"):
    raise low.error("copy_smem_to_gmem with a predicate is not supported by "
                    "pallasc-export")
  if p.get("reduction_op") is not None:
    raise low.error(f"copy_smem_to_gmem with reduction_op="
                    f"{p['reduction_op']} is not supported by pallasc-export")
  src, dst = (_ref(low, a) for a in eqn.invars[:2])
  leaves = list(eqn.invars[2:])
  st, leaves = _transforms(low, eqn, "src_transforms_treedef", leaves)
  dt, leaves = _transforms(low, eqn, "dst_transforms_treedef", leaves)
  s, d = view(low, src, st), view(low, dst, dt)
  if s.space != "smem" or d.space != "gmem":
    raise low.error("copy_smem_to_gmem copies an SMEM ref into a GMEM ref")
  attr = "" if p.get("commit_group", True) else " {commit_group = false}"
  low.emit(f"pallas_mgpu.copy_smem_to_gmem {s.name}, {d.name}{attr} : "
           f"{s.type}, {d.type}")
  return []


@mrule("commit_smem")
def _commit_smem(low, eqn):
  low.emit("pallas_mgpu.commit_smem")
  return []


@mrule("commit_group")
def _commit_group(low, eqn):
  low.emit("pallas_mgpu.commit_group")
  return []


@mrule("wait_smem_to_gmem")
def _wait_s2g(low, eqn):
  n = _lit_int(low, eqn.invars[0], "wait_smem_to_gmem's count")
  ro = " {read_only}" if eqn.params.get("wait_read_only") else ""
  low.emit(f"pallas_mgpu.wait_smem_to_gmem {n}{ro}")
  return []


# -- wgmma ------------------------------------------------------------------

@mrule("wgmma_ref")
def _wgmma(low, eqn):
  p = eqn.params
  acc = _ref(low, eqn.invars[0])
  a_atom, b_atom = eqn.invars[1], eqn.invars[2]
  leaves = list(eqn.invars[3:])
  ct, leaves = _transforms(low, eqn, "acc_transforms_tree", leaves)
  at, leaves = _transforms(low, eqn, "a_transforms_tree", leaves)
  bt, leaves = _transforms(low, eqn, "b_transforms_tree", leaves)
  acc = view(low, acc, ct)
  a, b = low.read(a_atom), _ref(low, b_atom)
  if isinstance(a, MemV):
    a = view(low, a, at)
  elif isinstance(a, V):
    if at:
      raise low.error("wgmma: a transformed register operand is not "
                      "supported by pallasc-export")
    a = low.as_tensor(a, a_atom.aval.shape)
  else:
    raise low.error("wgmma: the left operand is neither an SMEM ref nor an "
                    "array")
  b = view(low, b, bt)
  for what, x in (("a", a), ("b", b)):
    if isinstance(x, MemV) and not x.swizzle:
      raise low.error(f"wgmma operand {what} is an SMEM ref without tiling "
                      "and swizzle transforms (Mosaic GPU infers them under "
                      "warpgroup semantics; pallasc-export needs them on "
                      "the plgpu.SMEM allocation)")
  low.emit(f"pallas_mgpu.wgmma {acc.name}, {a.name}, {b.name} : {acc.type}, "
           f"{a.type}, {b.type}")
  return []


@mrule("wgmma_wait")
def _wgmma_wait(low, eqn):
  n = _lit_int(low, eqn.invars[0], "wgmma_wait's count")
  low.emit(f"pallas_mgpu.wgmma_wait {n}")
  return []


@mrule("wgmma_accumulator_deref_p")
def _acc_deref(low, eqn):
  acc = _ref(low, eqn.invars[0])
  n = eqn.params.get("wait_n")
  if n is not None:
    low.emit(f"pallas_mgpu.wgmma_wait {int(n)}")
  t = M.tensor_type(acc.shape, acc.dtype)
  return low.op(f"pallas_mgpu.acc_read {acc.name} : {acc.type} -> {t}",
                acc.shape, acc.dtype, False)


# -- SMEM reads and writes --------------------------------------------------

class ValRef:
  """A ref that `pl.run_state` makes of an array input: read-only here, so
  it stands for the array itself."""

  def __init__(self, value):
    self.value = value


def _whole(ts, shape) -> bool:
  from jax._src.state import indexing
  for t in ts:
    if not isinstance(t, indexing.NDIndexer) or len(t.indices) != len(shape):
      return False
    for e, d in zip(t.indices, shape):
      if not (isinstance(e, indexing.Slice) and _static(e.start) == 0 and
              int(e.size) == d and int(e.stride) == 1):
        return False
  return True


def _smem_view(low, eqn, ref_atom, leaves):
  tree = eqn.params["tree"]
  ts = tree_util.tree_unflatten(tree, leaves) if tree is not None else ()
  ref = low.read(ref_atom)
  if isinstance(ref, ValRef):
    if eqn.primitive.name != "get" or not _whole(
        ts, tuple(ref_atom.aval.inner_aval.shape)):
      raise low.error(f"'{eqn.primitive.name}' of a part of a pl.run_state "
                      "array ref (only whole reads are supported)")
    return ref
  ref = _ref(low, ref_atom)
  v = view(low, ref, ts)
  if not isinstance(v, MemV) or v.space != "smem":
    raise low.error(f"'{eqn.primitive.name}' of a {getattr(v, 'space', '?')}"
                    " ref: only SMEM refs are read and written directly "
                    "(GMEM through TMA copies, ACC through wgmma)")
  return v


@mrule("get")
def _get(low, eqn):
  v = _smem_view(low, eqn, eqn.invars[0], eqn.invars[1:])
  if isinstance(v, ValRef):
    return v.value
  t = M.tensor_type(v.shape, v.dtype)
  r = low.op(f"pallas_mgpu.load {v.name} : {v.type} -> {t}", v.shape,
             v.dtype, False)
  if v.shape == ():
    return low.as_scalar(r)
  return r


@mrule("swap")
def _swap(low, eqn):
  ref_atom, val_atom = eqn.invars[:2]
  v = _smem_view(low, eqn, ref_atom, eqn.invars[2:])
  old = None
  if eqn.outvars[0] in low.used:
    t = M.tensor_type(v.shape, v.dtype)
    old = low.op(f"pallas_mgpu.load {v.name} : {v.type} -> {t}", v.shape,
                 v.dtype, False)
  if isinstance(val_atom, jax_core.Literal):
    val = low.constant(np.asarray(val_atom.val), v.shape, v.dtype,
                       scalar=False)
  else:
    val = low.convert(low.as_tensor(low.read(val_atom), v.shape), v.dtype)
  low.emit(f"pallas_mgpu.store {val.name}, {v.name} : {val.type}, {v.type}")
  return old


@mrule("run_state")
def _run_state(low, eqn):
  """`pl.run_state(f)(inits)`: refs stay refs, an `ACC.init(x)` is an
  accumulator initialized with x (read back with wgmma_wait 0 + acc_read),
  other arrays are read-only refs holding them."""
  j = eqn.params["jaxpr"]
  j = j.jaxpr if isinstance(j, jax_core.ClosedJaxpr) else j
  if not all(eqn.params.get("is_initialized", ())):
    raise low.error("pl.run_state with uninitialized refs is not supported "
                    "by pallasc-export")
  binds = []
  for atom, var in zip(eqn.invars, j.invars):
    v = low.read(atom)
    if isinstance(v, (MemV, BarV, Refused)):
      binds.append(v)
    elif "Accumulator" in type(var.aval).__name__:
      inner = var.aval.inner_aval
      x = low.convert(low.as_tensor(v, tuple(inner.shape)), inner.dtype)
      m = new_mem(low.fn.fresh("acc"), inner.shape, inner.dtype, "acc")
      low.emit(f"{m.name} = pallas_mgpu.alloc_acc init({x.name} : {x.type}) "
               f": {m.type}")
      binds.append(m)
    else:
      binds.append(ValRef(v))
  low.lower_jaxpr(j, binds)
  outs = []
  for b in binds:
    if isinstance(b, MemV) and b.space == "acc":
      low.emit("pallas_mgpu.wgmma_wait 0")
      t = M.tensor_type(b.shape, b.dtype)
      outs.append(low.op(f"pallas_mgpu.acc_read {b.name} : {b.type} -> {t}",
                         b.shape, b.dtype, False))
    elif isinstance(b, ValRef):
      outs.append(b.value)
    else:
      outs.append(b)
  return outs


# -- registers --------------------------------------------------------------

def _layout_attr(low, layout) -> str:
  reduced = ()
  if type(layout).__name__ == "ReducedLayout":
    reduced = tuple(int(a) for a in layout.axes)
    layout = layout.layout
  name = getattr(layout, "name", str(layout)).lower()
  if name not in ("wgmma", "wgmma_row", "wgmma_col", "wgmma_transposed",
                  "wg_splat", "wg_strided", "tiled"):
    raise low.error(f"register layout {layout} is not supported by "
                    "pallasc-export")
  r = f", reduced = [{', '.join(map(str, reduced))}]" if reduced else ""
  return f"#pallas_mgpu.layout<{M.quote(name)}{r}>"


@mrule("layout_cast")
def _layout_cast(low, eqn):
  x = low.as_tensor(low.read(eqn.invars[0]), eqn.invars[0].aval.shape)
  attr = _layout_attr(low, eqn.params["new_layout"])
  return low.op(f"pallas_mgpu.layout_cast {x.name} : {x.type} to {attr}",
                x.shape, x.dtype, False)


@mrule("optimization_barrier")
def _optimization_barrier(low, eqn):
  # A scheduling hint with no value semantics: the values pass through.
  return [low.read(a) for a in eqn.invars]


# ---------------------------------------------------------------------------
# One kernel
# ---------------------------------------------------------------------------

def _mesh(low_here, mesh):
  cls = type(mesh).__name__
  if cls != "Mesh" or not hasattr(mesh, "num_threads"):
    raise ExportError(f"a kernel over a {cls} is not supported by pallasc "
                      "(plgpu.Mesh is)", low_here)
  grid = tuple(int(g) for g in mesh.grid)
  cluster = tuple(int(c) for c in mesh.cluster) or (1,)
  gn = tuple(str(n) for n in (mesh.grid_names or ()))
  cn = tuple(str(n) for n in (mesh.cluster_names or ()))
  nt = int(mesh.num_threads or 1)
  tn = mesh.thread_name
  axes = list(gn) + list(cn) + ([str(tn)] if tn else [])
  return {"grid": grid or (1,), "grid_names": gn, "cluster": cluster,
          "cluster_names": cn, "num_threads": nt, "thread_name": tn,
          "axes": axes}


def _body_src(j) -> str:
  """`NAME at FILE:LINE` of the user's kernel function: plgpu.kernel wraps it
  in a function of its own (in jax/_src/pallas), whose first run_scoped
  calls it."""
  src = getattr(getattr(j, "debug_info", None), "func_src_info", None) or ""
  if "/jax/_src/" not in src.replace("\\", "/"):
    return src
  for e in j.eqns:
    if e.primitive.name == "run_scoped":
      inner = getattr(e.params["jaxpr"], "debug_info", None)
      s = getattr(inner, "func_src_info", None)
      if s:
        return s
  return src


def export_kernel(eqn, name_hint, locs: Locations):
  """The `pallas_mgpu.kernel` text and a spec for one `mpmd_map` equation."""
  from .export import _array, _ident
  p = eqn.params
  here = where(eqn.source_info)
  meshes, jaxprs = p["meshes"], p["jaxprs"]
  if len(meshes) != 1 or len(jaxprs) != 1:
    raise ExportError(f"a kernel over {len(meshes)} meshes (MPMD) is not "
                      "supported by pallasc", here)
  if p.get("external_meshes"):
    raise ExportError("a kernel with external meshes (multi-device) is not "
                      "supported by pallasc", here)
  if p.get("input_output_aliases"):
    raise ExportError("input_output_aliases in a Mosaic GPU kernel are not "
                      "supported by pallasc-export yet", here)
  mesh = _mesh(here, meshes[0])
  j = jaxprs[0]
  consts = list(j.consts) if isinstance(j, jax_core.ClosedJaxpr) else []
  j = j.jaxpr if isinstance(j, jax_core.ClosedJaxpr) else j
  if consts or j.constvars:
    raise ExportError("a Mosaic GPU kernel that closes over arrays is not "
                      "supported by pallasc-export", here)
  in_avals = [v.aval for v in eqn.invars]
  out_avals = list(p["out_avals"])
  if len(j.invars) != len(in_avals) + len(out_avals):
    raise ExportError(f"kernel takes {len(j.invars)} refs for "
                      f"{len(in_avals)} inputs and {len(out_avals)} outputs",
                      here)
  src = _body_src(j)
  kname = src.split(" at ")[0] if src else "kernel"
  kname = kname.split(".")[-1]
  m = re.match(r".* at (.*):(\d+)$", src)
  kloc = locs.file_loc(m.group(1), int(m.group(2)), 1) if m else (
      locs.file_loc(here.rsplit(":", 2)[0], int(here.rsplit(":", 2)[1]), 1)
      if here else locs.alias("loc(unknown)"))
  kernel_sym = _ident(kname, "kernel")
  pname = p.get("name")
  call_name = _ident(name_hint or (pname if pname and pname != "anonymous"
                                   else None) or kname, kernel_sym)
  counter = [0]
  fn = Function(counter)
  low = MgpuLowering(fn, locs, mesh)
  low.loc = kloc
  args, sig = [], []
  roles = ["in"] * len(in_avals) + ["out"] * len(out_avals)
  for i, (v, role) in enumerate(zip(j.invars, roles)):
    inner = v.aval.inner_aval
    nm = f"%{role}{i}"
    r = new_mem(nm, inner.shape, inner.dtype, "gmem")
    args.append(r)
    sig.append(f"{nm}: {r.type} loc({kloc})")
  if m:
    low.here = f"{m.group(1)}:{m.group(2)}:1"
  low.lower_jaxpr(j, args)
  if low.refused:
    raise ExportError(low.refused[0].message, low.refused[0].where)

  def arr(xs):
    return f"[{', '.join(M.quote(x) for x in xs)}]"
  attrs = [f"grid = array<i64: {', '.join(map(str, mesh['grid']))}>",
           f"grid_names = {arr(mesh['grid_names'])}",
           f"cluster = array<i64: {', '.join(map(str, mesh['cluster']))}>",
           f"cluster_names = {arr(mesh['cluster_names'])}",
           f"num_threads = {mesh['num_threads']}",
           f"num_outputs = {len(out_avals)}"]
  if mesh["thread_name"]:
    attrs.append(f"thread_name = {M.quote(str(mesh['thread_name']))}")
  lines = ([f"pallas_mgpu.kernel @{kernel_sym}({', '.join(sig)}) attributes "
            f"{{{', '.join(attrs)}}} {{"] + fn.lines + [f"}} loc({kloc})"])
  at = (f"{locs.display(here.rsplit(':', 2)[0])}:{here.rsplit(':', 2)[1]}"
        if here else (f"{locs.display(m.group(1))}:{m.group(2)}" if m else
                      "?"))
  header = [f"// Exported by pallasc-export from the Mosaic GPU kernel "
            f"(plgpu.kernel) @{kernel_sym} at {at}.", ""]
  text = "\n".join(header + locs.header() + [""] + lines) + "\n"
  spec = {"schema": "pallasc.gridspec/v1", "kernel": kernel_sym,
          "name": call_name, "grid": list(mesh["grid"]),
          "inputs": [_array(a, here) for a in in_avals],
          "outputs": [_array(a, here) for a in out_avals],
          "in_specs": [{"memory_space": "any"} for _ in in_avals],
          "out_specs": [{"memory_space": "any"} for _ in out_avals]}
  return text, spec, call_name
