"""Kernel jaxpr -> `pallas` dialect MLIR text, one JAX equation at a time.

A `Lowering` walks a jaxpr and writes MLIR lines into a `Function`. Values:
  - `V`: an SSA value of a JAX array: an MLIR scalar (rank 0 only) or a ranked
    tensor (rank 0 included: the result of a full reduction stays a
    `tensor<f32>`, as in the hand-written kernels);
  - `RefV`: a `!pallas.ref` (a kernel argument).
Every line carries the location of the JAX equation that produced it
(`loc(#locN)`, the Python file:line:col of its user frame).

Rules are registered per primitive name in `RULES`; a primitive without a rule
(or a parameter a rule cannot express) raises `ExportError` naming it and the
Python line.
"""

from __future__ import annotations

import dataclasses
import os
import math
from typing import Any, Callable

import numpy as np

from jax._src import core as jax_core
from jax._src import source_info_util
from jax._src import tree_util

from . import mlir as M
from .errors import ExportError


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class V:
  name: str
  shape: tuple
  dtype: Any
  scalar: bool  # an MLIR scalar (shape must be ())

  @property
  def type(self) -> str:
    return M.value_type(self.shape, self.dtype, self.scalar)


@dataclasses.dataclass(frozen=True)
class RefV:
  name: str
  shape: tuple
  dtype: Any
  space: str

  @property
  def type(self) -> str:
    return M.ref_type(self.shape, self.dtype, self.space)


@dataclasses.dataclass(frozen=True)
class Lin:
  """An integer array known to be `base + sum_k strides[k] * index_k` over
  its shape (an iota pattern): how contiguous and strided index vectors
  (`x_ref.at[i * bs + jnp.arange(bs)]`) become slices."""
  base: Any  # int, or a scalar i32 V
  strides: tuple  # one int per dimension of the array


class Locations:
  """The module's location aliases (`#locN = loc("file":line:col)`)."""

  def __init__(self, source_root: str | None = None):
    self.aliases: dict[str, str] = {}
    self.source_root = source_root

  def alias(self, text: str) -> str:
    if text not in self.aliases:
      self.aliases[text] = f"#loc{len(self.aliases)}"
    return self.aliases[text]

  def file_loc(self, file: str, line: int, col: int) -> str:
    return self.alias(f"loc({M.quote(self.display(file))}:{line}:{col})")

  def display(self, file: str) -> str:
    import os
    root = self.source_root if self.source_root is not None else os.getcwd()
    try:
      rel = os.path.relpath(file, root)
    except ValueError:
      return file
    return file if rel.startswith("..") else rel

  def header(self) -> list[str]:
    return [f"{a} = {t}" for t, a in self.aliases.items()]


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_frame(traceback):
  """The innermost frame of `traceback` that is neither JAX's nor this
  package's (the exporter's own frames show while it traces)."""
  return next((f for f in source_info_util.user_frames(traceback)
               if not f.file_name.startswith(_PACKAGE)), None)


def frame_of(source_info):
  """The user's Python frame of an equation (None when unknown)."""
  if source_info is None:
    return None
  try:
    return user_frame(source_info.traceback)
  except Exception:  # pragma: no cover - defensive
    return None


def where(source_info) -> str:
  f = frame_of(source_info)
  if f is None:
    return ""
  return f"{f.file_name}:{f.start_line}:{f.start_column + 1}"


# ---------------------------------------------------------------------------
# Text builder
# ---------------------------------------------------------------------------

class Function:
  """Lines of one function-like op; names are unique in the module."""

  def __init__(self, counter: list[int]):
    self.lines: list[str] = []
    self.depth = 1
    self.counter = counter

  def fresh(self, hint: str = "") -> str:
    self.counter[0] += 1
    return f"%{hint}{self.counter[0]}" if hint else f"%{self.counter[0]}"

  def line(self, text: str):
    self.lines.append("  " * self.depth + text)


# ---------------------------------------------------------------------------
# The lowering
# ---------------------------------------------------------------------------

RULES: dict[str, Callable] = {}


def registrar(table):
  """A decorator factory: `@reg("a", "b")` enters the function in `table`
  under each name."""
  def reg(*names):
    def deco(fn):
      for n in names:
        table[n] = fn
      return fn
    return deco
  return reg


rule = registrar(RULES)


class Lowering:
  """Translates the equations of a jaxpr into a `Function`."""

  def __init__(self, fn: Function, locs: Locations, kernel_axes=None):
    self.fn = fn
    self.locs = locs
    self.loc = None  # the current equation's location alias
    self.here = ""   # ... and its file:line:col (for errors)
    self.eqn = None
    self.env: dict[Any, Any] = {}
    self.lin: dict[Any, Lin] = {}      # var -> iota pattern
    self.bool_src: dict[Any, V] = {}   # int var converted from a bool V
    self.used: set = set()             # vars some equation reads
    # program_id axis -> grid axis (vmapped grid axes are skipped)
    self.kernel_axes = kernel_axes
    # aval -> a new scratch ref of the kernel (set by the exporter for
    # kernel bodies; None where run_scoped cannot allocate, e.g. index maps)
    self.scoped_scratch = None
    # the jax.sharding.Mesh of the shard_map around the pallas_call (None
    # outside one): lax.axis_index and device ids read its shape
    self.mesh = None

  # -- errors and emission --------------------------------------------------

  def error(self, message: str) -> ExportError:
    return ExportError(message, self.here)

  def emit(self, text: str, loc: bool = True):
    if loc and self.loc:
      text = f"{text} loc({self.loc})"
    self.fn.line(text)

  def op(self, text: str, shape, dtype, scalar: bool, hint="") -> V:
    name = self.fn.fresh(hint)
    self.emit(f"{name} = {text}")
    return V(name, tuple(shape), np.dtype(dtype), scalar)

  def like(self, x: V, text: str, dtype=None) -> V:
    """`text` (an op and its operands, typed by `x`'s type) as a value of
    `x`'s shape and `dtype` (default `x`'s)."""
    return self.op(f"{text} : {x.type}", x.shape,
                   x.dtype if dtype is None else dtype, x.scalar)

  # -- reading atoms ----------------------------------------------------------

  def read(self, atom):
    if isinstance(atom, jax_core.Literal):
      val = atom.val
      aval = atom.aval
      arr = np.asarray(val)
      return self.constant(arr, tuple(aval.shape), aval.dtype)
    try:
      return self.env[atom]
    except KeyError:
      raise self.error(f"internal error: {atom} has no value") from None

  def constant(self, arr, shape, dtype, scalar=None) -> V:
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if scalar is None:
      scalar = shape == ()
    arr = np.asarray(arr)
    if scalar:
      lit = M.scalar_literal(arr.reshape(()).item() if not M.is_float(dtype)
                             else arr.reshape(()), dtype)
      if M.is_bool(dtype):
        return self.op(f"arith.constant {lit}", (), dtype, True)
      return self.op(f"arith.constant {lit} : {M.elem_type(dtype)}", (),
                     dtype, True)
    if arr.shape != shape:
      arr = np.broadcast_to(arr, shape)
    return self.op(f"arith.constant {M.dense_literal(arr, dtype)} : "
                   f"{M.tensor_type(shape, dtype)}", shape, dtype, False)

  def int_const(self, value: int, dtype="int32") -> V:
    return self.constant(np.array(value), (), dtype)

  def index_const(self, value: int) -> str:
    name = self.fn.fresh()
    self.emit(f"{name} = arith.constant {value} : index")
    return name

  # -- representation changes -------------------------------------------------

  def as_scalar(self, v: V) -> V:
    if v.scalar:
      return v
    if v.shape != ():
      raise self.error(f"expected a scalar, got an array of shape {v.shape}")
    return self.op(f"tensor.extract {v.name}[] : {v.type}", (), v.dtype, True)

  def as_tensor(self, v: V, shape) -> V:
    """`v` as a tensor of `shape` (broadcasting a scalar or size-1 dims)."""
    shape = tuple(shape)
    if not v.scalar and v.shape == shape:
      return v
    if v.scalar or v.shape == ():
      dims = []
    else:
      r, vr = len(shape), len(v.shape)
      if vr > r:
        raise self.error(f"cannot broadcast shape {v.shape} to {shape}")
      dims = list(range(r - vr, r))
      for d, s in zip(dims, v.shape):
        if s != 1 and s != shape[d]:
          raise self.error(f"cannot broadcast shape {v.shape} to {shape}")
    return self.op(
        f"pallas.broadcast_in_dim {v.name} dims [{', '.join(map(str, dims))}]"
        f" : {v.type} -> {M.tensor_type(shape, v.dtype)}", shape, v.dtype,
        False)

  def operand(self, atom, shape, tensor0=False) -> V:
    """An elementwise operand in the representation of the result `shape`."""
    shape = tuple(shape)
    if isinstance(atom, jax_core.Literal):
      arr = np.asarray(atom.val)
      scalar = shape == () and not tensor0
      return self.constant(arr, shape, atom.aval.dtype, scalar=scalar)
    v = self.read(atom)
    if shape == ():
      return self.as_tensor(v, ()) if tensor0 else v
    return self.as_tensor(v, shape)

  def operands(self, atoms, shape):
    """Elementwise operands: rank-0 ones are scalars unless one is a tensor."""
    shape = tuple(shape)
    tensor0 = shape == () and any(
        not isinstance(a, jax_core.Literal) and not self.read(a).scalar
        for a in atoms)
    return [self.operand(a, shape, tensor0) for a in atoms]

  def convert(self, v: V, dtype) -> V:
    """`convert_element_type` of a value (JAX's semantics)."""
    src, dst = np.dtype(v.dtype), np.dtype(dtype)
    if src == dst:
      return v
    sb, db = M.bitwidth(src), M.bitwidth(dst)
    st, dt = M.elem_type(src), M.elem_type(dst)
    res_t = M.value_type(v.shape, dst, v.scalar)

    def cast(opname, x=v):
      return self.op(f"{opname} {x.name} : {x.type} to {res_t}", v.shape,
                     dst, v.scalar)
    if M.is_bool(dst):
      zero = self.constant(np.zeros((), src), v.shape, src, v.scalar)
      if M.is_float(src):
        return self.op(f"arith.cmpf une, {v.name}, {zero.name} : {v.type}",
                       v.shape, dst, v.scalar)
      return self.op(f"arith.cmpi ne, {v.name}, {zero.name} : {v.type}",
                     v.shape, dst, v.scalar)
    if M.is_float8(src) and M.is_float8(dst) or (
        (M.is_float8(src) or M.is_float8(dst)) and
        not (M.is_float(src) and M.is_float(dst))):
      # Between two fp8 types, or between fp8 and an integer: through f32
      # (exact from fp8; to fp8 one rounding, pallas-expand-fp8).
      return self.convert(self.convert(v, np.float32), dst)
    if M.is_float(src) and M.is_float(dst):
      if st == dt:
        return V(v.name, v.shape, dst, v.scalar)
      if {st, dt} == {"f16", "bf16"}:
        return self.convert(self.convert(v, np.float32), dst)
      return cast("arith.extf" if db > sb else "arith.truncf")
    if M.is_float(src):
      if st == "bf16":  # hosts convert bf16 through f32
        return self.convert(self.convert(v, np.float32), dst)
      return cast("arith.fptoui" if M.is_unsigned(dst) else "arith.fptosi")
    if M.is_float(dst):
      if dt == "bf16":
        return self.convert(self.convert(v, np.float32), dst)
      unsigned = M.is_unsigned(src) or M.is_bool(src)
      return cast("arith.uitofp" if unsigned else "arith.sitofp")
    # integer -> integer
    if sb == db:
      return V(v.name, v.shape, dst, v.scalar)
    if db < sb:
      return cast("arith.trunci")
    unsigned = M.is_unsigned(src) or M.is_bool(src)
    return cast("arith.extui" if unsigned else "arith.extsi")

  def index_i32(self, v: V) -> V:
    """A scalar index as the i32 a dynamic start needs."""
    v = self.as_scalar(v)
    if not (M.is_int(v.dtype) or M.is_bool(v.dtype)):
      raise self.error(f"index of dtype {v.dtype} is not an integer")
    return self.convert(v, np.int32)

  def to_index(self, v: V) -> str:
    v = self.as_scalar(v)
    name = self.fn.fresh()
    self.emit(f"{name} = arith.index_cast {v.name} : {v.type} to index")
    return name

  # -- jaxpr walking ----------------------------------------------------------

  def bind(self, var, value):
    if isinstance(var, jax_core.DropVar):
      return
    self.env[var] = value

  def lower_jaxpr(self, jaxpr, args, consts=()):
    """Lowers `jaxpr` (open or closed) with `args` bound to its invars;
    returns the values of its outvars (read lazily by the caller)."""
    if isinstance(jaxpr, jax_core.ClosedJaxpr):
      consts = list(jaxpr.consts)
      jaxpr = jaxpr.jaxpr
    for var, c in zip(jaxpr.constvars, consts):
      self.bind(var, self.const_value(c, var.aval))
    for var, a in zip(jaxpr.invars, args):
      self.bind(var, a)
    for eqn in jaxpr.eqns:
      for a in eqn.invars:
        if isinstance(a, jax_core.Var):
          self.used.add(a)
    for o in jaxpr.outvars:
      if isinstance(o, jax_core.Var):
        self.used.add(o)
    for eqn in jaxpr.eqns:
      self.lower_eqn(eqn)
    return [self.read(o) for o in jaxpr.outvars]

  def const_value(self, c, aval):
    if isinstance(c, RefV) or isinstance(c, V):
      return c
    arr = np.asarray(c)
    if arr.size > 65536:
      raise self.error(f"a constant of {arr.size} elements captured by the "
                       "kernel is too large to inline (limit 65536)")
    return self.constant(arr, tuple(arr.shape), arr.dtype)

  def rule_for(self, name):
    """The rule that lowers primitive `name`; a located error where there is
    none."""
    fn = RULES.get(name)
    if fn is None:
      raise self.error(f"primitive '{name}' is not supported by pallasc-export"
                       " (see docs/jax.md for the supported primitives)")
    return fn

  def lower_eqn(self, eqn):
    saved = (self.eqn, self.loc, self.here)
    self.eqn = eqn
    # Equations of a jaxpr JAX traced on its own (jnp functions under jit)
    # have no user frame: they keep the location of the equation that
    # calls them.
    f = frame_of(eqn.source_info)
    if f is not None:
      self.loc = self.locs.file_loc(f.file_name, f.start_line,
                                    f.start_column + 1)
      self.here = where(eqn.source_info)
    name = eqn.primitive.name
    fn = self.rule_for(name)
    outs = fn(self, eqn)
    if eqn.primitive.multiple_results:
      outs = list(outs)
    else:
      outs = [outs]
    if len(outs) != len(eqn.outvars):
      raise self.error(f"internal error: rule for '{name}' returned "
                       f"{len(outs)} values for {len(eqn.outvars)} results")
    for var, val in zip(eqn.outvars, outs):
      if val is None:
        continue
      self.bind(var, val)
    self.eqn, self.loc, self.here = saved


def out_aval(eqn, i=0):
  return eqn.outvars[i].aval


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------

def _kind(dtype):
  if M.is_float(dtype):
    return "f"
  if M.is_bool(dtype) or M.is_unsigned(dtype):
    return "u"
  return "s"


def _track_lin(low: Lowering, eqn):
  """Follows iota patterns through add/sub/mul of integer arrays."""
  aval = out_aval(eqn)
  name = eqn.primitive.name
  if not M.is_int(aval.dtype) or tuple(aval.shape) == () or name not in (
      "add", "sub", "mul"):
    return
  rank = len(aval.shape)
  parts = []
  for a in eqn.invars:
    if isinstance(a, jax_core.Var) and a in low.lin:
      parts.append(low.lin[a])
    elif isinstance(a, jax_core.Literal) and np.asarray(a.val).shape == ():
      parts.append(Lin(("const", int(np.asarray(a.val))), (0,) * rank))
    elif tuple(a.aval.shape) == ():
      parts.append(Lin(("val", a), (0,) * rank))
    else:
      return
  x, y = parts
  if len(x.strides) != rank or len(y.strides) != rank:
    return
  if name == "add":
    low.lin[eqn.outvars[0]] = Lin(("add", x.base, y.base),
                                  tuple(p + q for p, q in zip(x.strides,
                                                              y.strides)))
  elif name == "sub":
    if any(y.strides):
      return
    low.lin[eqn.outvars[0]] = Lin(("sub", x.base, y.base), x.strides)
  else:
    for u, w in ((x, y), (y, x)):
      if w.base[0] == "const" and not any(w.strides):
        k = w.base[1]
        low.lin[eqn.outvars[0]] = Lin(("mul", u.base, k),
                                      tuple(s * k for s in u.strides))
        return


def _binary(low: Lowering, eqn, ops: dict):
  _track_lin(low, eqn)
  aval = out_aval(eqn)
  shape, dtype = tuple(aval.shape), aval.dtype
  a, b = low.operands(eqn.invars, shape)
  # out_dtype (mixed precision) or operands of another dtype: compute in the
  # result dtype, as the operands would be promoted.
  if a.dtype != dtype and not ops.get("cmp"):
    a = low.convert(a, dtype)
  if b.dtype != dtype and not ops.get("cmp"):
    b = low.convert(b, dtype)
  k = _kind(a.dtype)
  name = ops.get(k)
  if name is None:
    raise low.error(f"'{eqn.primitive.name}' is not supported on {a.dtype}")
  if callable(name):
    return name(low, a, b, shape, dtype)
  return low.op(f"{name} {a.name}, {b.name} : {a.type}", shape, dtype,
                a.scalar)


def _mk_binary(f=None, s=None, u=None):
  ops = {"f": f, "s": s, "u": u if u is not None else s}
  return lambda low, eqn: _binary(low, eqn, ops)


RULES["add"] = _mk_binary("arith.addf", "arith.addi")
RULES["sub"] = _mk_binary("arith.subf", "arith.subi")
RULES["mul"] = _mk_binary("arith.mulf", "arith.muli")
RULES["div"] = _mk_binary("arith.divf", "arith.divsi", "arith.divui")
RULES["rem"] = _mk_binary("arith.remf", "arith.remsi", "arith.remui")
RULES["max"] = _mk_binary("arith.maximumf", "arith.maxsi", "arith.maxui")
RULES["min"] = _mk_binary("arith.minimumf", "arith.minsi", "arith.minui")
RULES["and"] = _mk_binary(None, "arith.andi")
RULES["or"] = _mk_binary(None, "arith.ori")
RULES["xor"] = _mk_binary(None, "arith.xori")
RULES["pow"] = _mk_binary("math.powf")
RULES["atan2"] = _mk_binary("math.atan2")
RULES["add_any"] = RULES["add"]  # what jax.grad's cotangent sums trace to


def _shift(kind):
  def build(low, a, b, shape, dtype):
    # XLA's shifts: an amount >= the bit width (as unsigned) gives 0 (or the
    # sign for arithmetic right shifts); MLIR's are poison there.
    bits = M.bitwidth(dtype)
    width = low.constant(np.array(bits), shape, dtype, a.scalar)
    big = low.op(f"arith.cmpi uge, {b.name}, {width.name} : {a.type}", shape,
                 np.bool_, a.scalar)
    if kind == "arith.shrsi":
      top = low.constant(np.array(bits - 1), shape, dtype, a.scalar)
      amt = low.op(f"arith.select {big.name}, {top.name}, {b.name} : "
                   f"{M.value_type(shape, np.bool_, a.scalar)}, {a.type}"
                   if not a.scalar else
                   f"arith.select {big.name}, {top.name}, {b.name} : {a.type}",
                   shape, dtype, a.scalar)
      return low.op(f"arith.shrsi {a.name}, {amt.name} : {a.type}", shape,
                    dtype, a.scalar)
    r = low.op(f"{kind} {a.name}, {b.name} : {a.type}", shape, dtype,
               a.scalar)
    zero = low.constant(np.array(0), shape, dtype, a.scalar)
    return _select(low, big, zero, r)
  return build


def _select(low, c: V, t: V, f: V) -> V:
  if t.scalar and c.scalar:
    return low.op(f"arith.select {c.name}, {t.name}, {f.name} : {t.type}",
                  t.shape, t.dtype, True)
  return low.op(f"pallas.select {c.name}, {t.name}, {f.name} : {c.type}, "
                f"{t.type}", t.shape, t.dtype, False)


RULES["shift_left"] = _mk_binary(None, _shift("arith.shli"))
RULES["shift_right_logical"] = _mk_binary(None, _shift("arith.shrui"))
RULES["shift_right_arithmetic"] = _mk_binary(None, _shift("arith.shrsi"))


_CMP = {
    "eq": ("oeq", "eq", "eq"), "ne": ("une", "ne", "ne"),
    "lt": ("olt", "slt", "ult"), "le": ("ole", "sle", "ule"),
    "gt": ("ogt", "sgt", "ugt"), "ge": ("oge", "sge", "uge"),
}


def _compare(low: Lowering, eqn):
  f, s, u = _CMP[eqn.primitive.name]
  aval = out_aval(eqn)
  shape = tuple(aval.shape)
  a, b = low.operands(eqn.invars, shape)
  k = _kind(a.dtype)
  if k == "f":
    text = f"arith.cmpf {f}, {a.name}, {b.name} : {a.type}"
  else:
    text = f"arith.cmpi {s if k == 's' else u}, {a.name}, {b.name} : {a.type}"
  return low.op(text, shape, np.bool_, a.scalar)


for _n in _CMP:
  RULES[_n] = _compare


def _unary(low: Lowering, eqn, fop=None, iop=None):
  aval = out_aval(eqn)
  shape, dtype = tuple(aval.shape), aval.dtype
  (x,) = low.operands(eqn.invars[:1], shape)
  name = fop if M.is_float(dtype) else iop
  if name is None:
    raise low.error(f"'{eqn.primitive.name}' is not supported on {dtype}")
  if callable(name):
    return name(low, x)
  return low.op(f"{name} {x.name} : {x.type}", shape, dtype, x.scalar)


def _mk_unary(fop=None, iop=None):
  return lambda low, eqn: _unary(low, eqn, fop, iop)


for _jax, _math in [
    ("exp", "math.exp"), ("exp2", "math.exp2"), ("log", "math.log"),
    ("log1p", "math.log1p"), ("expm1", "math.expm1"), ("sqrt", "math.sqrt"),
    ("rsqrt", "math.rsqrt"), ("cbrt", "math.cbrt"), ("tanh", "math.tanh"),
    ("sin", "math.sin"), ("cos", "math.cos"), ("tan", "math.tan"),
    ("atan", "math.atan"), ("asin", "math.asin"), ("acos", "math.acos"),
    ("sinh", "math.sinh"), ("cosh", "math.cosh"), ("asinh", "math.asinh"),
    ("acosh", "math.acosh"), ("atanh", "math.atanh"), ("erf", "math.erf"),
    ("erfc", "math.erfc"), ("floor", "math.floor"), ("ceil", "math.ceil")]:
  RULES[_jax] = _mk_unary(_math)


def _neg_int(low, x):
  zero = low.constant(np.array(0), x.shape, x.dtype, x.scalar)
  return low.op(f"arith.subi {zero.name}, {x.name} : {x.type}", x.shape,
                x.dtype, x.scalar)


RULES["neg"] = _mk_unary("arith.negf", _neg_int)
RULES["abs"] = _mk_unary("math.absf", "math.absi")


def _not(low, x):
  ones = low.constant(np.array(-1 if not M.is_bool(x.dtype) else True),
                      x.shape, x.dtype, x.scalar)
  return low.op(f"arith.xori {x.name}, {ones.name} : {x.type}", x.shape,
                x.dtype, x.scalar)


RULES["not"] = _mk_unary(None, _not)


@rule("round")
def _round(low, eqn):
  method = int(getattr(eqn.params.get("rounding_method", 0), "value",
                       eqn.params.get("rounding_method", 0)))
  return _unary(low, eqn, "math.roundeven" if method == 1 else "math.round")


@rule("is_finite")
def _is_finite(low, eqn):
  (x,) = low.operands(eqn.invars, tuple(out_aval(eqn).shape))
  return low.like(x, f"math.isfinite {x.name}", np.bool_)


@rule("sign")
def _sign(low, eqn):
  (x,) = low.operands(eqn.invars, tuple(out_aval(eqn).shape))
  zero = low.constant(np.array(0), x.shape, x.dtype, x.scalar)
  one = low.constant(np.array(1), x.shape, x.dtype, x.scalar)
  if M.is_float(x.dtype):
    # sign(x): -1, 0 or 1, keeping -0.0, 0.0 and NaN.
    cp = low.like(x, f"math.copysign {one.name}, {x.name}")
    nz = low.like(x, f"arith.cmpf one, {x.name}, {zero.name}", np.bool_)
    return _select(low, nz, cp, x)
  if M.is_unsigned(x.dtype):
    nz = low.like(x, f"arith.cmpi ne, {x.name}, {zero.name}", np.bool_)
    return low.convert(nz, x.dtype)
  pos = low.like(x, f"arith.cmpi sgt, {x.name}, {zero.name}", np.bool_)
  neg = low.like(x, f"arith.cmpi slt, {x.name}, {zero.name}", np.bool_)
  return low.like(x, f"arith.subi {low.convert(pos, x.dtype).name}, "
                  f"{low.convert(neg, x.dtype).name}")


@rule("logistic")
def _logistic(low, eqn):
  (x,) = low.operands(eqn.invars, tuple(out_aval(eqn).shape))
  if not M.is_float(x.dtype):
    raise low.error(f"'logistic' is not supported on {x.dtype}")
  one = low.constant(np.array(1.0), x.shape, x.dtype, x.scalar)
  n = low.like(x, f"arith.negf {x.name}")
  e = low.like(x, f"math.exp {n.name}")
  d = low.like(x, f"arith.addf {one.name}, {e.name}")
  return low.like(x, f"arith.divf {one.name}, {d.name}")


@rule("square")
def _square(low, eqn):
  (x,) = low.operands(eqn.invars, tuple(out_aval(eqn).shape))
  op = "arith.mulf" if M.is_float(x.dtype) else "arith.muli"
  return low.like(x, f"{op} {x.name}, {x.name}")


@rule("integer_pow")
def _integer_pow(low, eqn):
  (x,) = low.operands(eqn.invars, tuple(out_aval(eqn).shape))
  y = int(eqn.params["y"])
  fl = M.is_float(x.dtype)
  mul = "arith.mulf" if fl else "arith.muli"

  def m(a, b):
    return low.like(x, f"{mul} {a.name}, {b.name}")
  # Binary exponentiation, as lax.integer_pow expands it.
  acc, base, n = None, x, abs(y)
  if n == 0:
    acc = low.constant(np.array(1), x.shape, x.dtype, x.scalar)
  while n:
    if n & 1:
      acc = base if acc is None else m(acc, base)
    n >>= 1
    if n:
      base = m(base, base)
  if y < 0:
    if not fl:
      raise low.error("'integer_pow' with a negative exponent needs a float")
    one = low.constant(np.array(1.0), x.shape, x.dtype, x.scalar)
    acc = low.like(x, f"arith.divf {one.name}, {acc.name}")
  return acc


@rule("convert_element_type")
def _convert(low, eqn):
  (a,) = eqn.invars
  dst = eqn.params["new_dtype"]
  v = low.read(a)
  if M.is_bool(v.dtype) and not isinstance(a, jax_core.Literal):
    low.bool_src[eqn.outvars[0]] = v
  if isinstance(a, jax_core.Var) and a in low.lin and M.is_int(dst):
    low.lin[eqn.outvars[0]] = low.lin[a]
  return low.convert(v, dst)


@rule("reduce_precision")
def _reduce_precision(low, eqn):
  v = low.read(eqn.invars[0])
  info = np.finfo(v.dtype) if M.is_float(v.dtype) else None
  if info is not None and (eqn.params["exponent_bits"], eqn.params[
      "mantissa_bits"]) == (info.nexp, info.nmant):
    return v
  raise low.error("'reduce_precision' to a narrower format is not supported")


@rule("copy", "copy_p", "optimization_barrier", "stop_gradient")
def _identity(low, eqn):
  vals = [low.read(a) for a in eqn.invars]
  return vals if eqn.primitive.multiple_results else vals[0]


@rule("select_n")
def _select_n(low, eqn):
  aval = out_aval(eqn)
  shape = tuple(aval.shape)
  pred_atom, *cases = eqn.invars
  vals = low.operands(cases, shape)
  pv = low.read(pred_atom)
  scalar_vals = vals[0].scalar
  if pv.shape == () and not scalar_vals:
    pv = low.as_scalar(pv)
  elif shape != () or not scalar_vals:
    pv = low.as_tensor(pv, shape) if shape != () else pv
  if M.is_bool(pv.dtype):
    if len(vals) != 2:
      raise low.error("'select_n' with a bool predicate takes 2 cases")
    return _select(low, pv, vals[1], vals[0])
  # An integer predicate picks cases[p]: a chain of selects.
  res = vals[-1]
  for i in range(len(vals) - 2, -1, -1):
    ci = low.constant(np.array(i), pv.shape, pv.dtype, pv.scalar)
    c = low.op(f"arith.cmpi eq, {pv.name}, {ci.name} : {pv.type}", pv.shape,
               np.bool_, pv.scalar)
    res = _select(low, c, vals[i], res)
  return res


@rule("clamp")
def _clamp(low, eqn):
  aval = out_aval(eqn)
  shape, dtype = tuple(aval.shape), aval.dtype
  lo, x, hi = low.operands(eqn.invars, shape)
  k = _kind(dtype)
  mx = {"f": "arith.maximumf", "s": "arith.maxsi", "u": "arith.maxui"}[k]
  mn = {"f": "arith.minimumf", "s": "arith.minsi", "u": "arith.minui"}[k]
  t = low.op(f"{mx} {x.name}, {lo.name} : {x.type}", shape, dtype, x.scalar)
  return low.op(f"{mn} {t.name}, {hi.name} : {x.type}", shape, dtype,
                x.scalar)


# ---------------------------------------------------------------------------
# Bit-level and special functions: clz, population_count,
# bitcast_convert_type, nextafter, erf_inv
# ---------------------------------------------------------------------------

class _Ew:
  """Elementwise emission in one shape and representation: `c(k)` makes a
  constant, `f(op, *xs)` one op of the result type, `cmp`/`sel` compare and
  select. Keeps the multi-op rules below short."""

  def __init__(self, low, like: V):
    self.low, self.shape, self.scalar = low, like.shape, like.scalar

  def c(self, value, dtype) -> V:
    return self.low.constant(np.array(value, dtype=np.dtype(dtype)),
                             self.shape, dtype, self.scalar)

  def f(self, op, *xs) -> V:
    x = xs[0]
    return self.low.op(f"{op} {', '.join(v.name for v in xs)} : {x.type}",
                       self.shape, x.dtype, self.scalar)

  def cmp(self, op, pred, a, b) -> V:
    return self.low.op(f"{op} {pred}, {a.name}, {b.name} : {a.type}",
                       self.shape, np.bool_, self.scalar)

  def sel(self, c, t, f) -> V:
    return _select(self.low, c, t, f)

  def bitcast(self, x, dtype) -> V:
    return self.low.op(f"arith.bitcast {x.name} : {x.type} to "
                       f"{M.value_type(self.shape, dtype, self.scalar)}",
                       self.shape, dtype, self.scalar)


def _int_unary(math_op):
  def build(low, x):
    if M.is_bool(x.dtype):
      raise low.error(f"'{low.eqn.primitive.name}' is not supported on bool")
    return low.op(f"{math_op} {x.name} : {x.type}", x.shape, x.dtype,
                  x.scalar)
  return build


RULES["clz"] = _mk_unary(None, _int_unary("math.ctlz"))
RULES["population_count"] = _mk_unary(None, _int_unary("math.ctpop"))


def _same_width_int(dtype):
  return np.dtype(f"int{M.bitwidth(dtype)}")


@rule("bitcast_convert_type")
def _bitcast_convert(low, eqn):
  a = eqn.invars[0]
  dst = np.dtype(eqn.params["new_dtype"])
  src = np.dtype(a.aval.dtype)
  if M.is_bool(src) or M.is_bool(dst):
    raise low.error("'bitcast_convert_type' of bool is not supported")
  if M.bitwidth(src) != M.bitwidth(dst):
    raise low.error(
        f"'bitcast_convert_type' from {src} to {dst} changes the element "
        "width (and so the shape); pallasc supports same-width bitcasts only")
  shape = tuple(out_aval(eqn).shape)
  (x,) = low.operands([a], shape)
  if M.elem_type(src) == M.elem_type(dst):  # int32 <-> uint32: signless
    return V(x.name, x.shape, dst, x.scalar)
  return _Ew(low, x).bitcast(x, dst)


@rule("nextafter")
def _nextafter(low, eqn):
  # XLA's NextAfter (what interpret mode runs), on the integer image of the
  # floats: step the magnitude of x by one ulp towards y; x == y gives y;
  # x == +-0 gives the smallest subnormal with y's sign; NaN in, NaN out.
  shape = tuple(out_aval(eqn).shape)
  x, y = low.operands(eqn.invars, shape)
  if not M.is_float(x.dtype):
    raise low.error(f"'nextafter' is not supported on {x.dtype}")
  e = _Ew(low, x)
  it = _same_width_int(x.dtype)
  bits = M.bitwidth(x.dtype)
  xi, yi = e.bitcast(x, it), e.bitcast(y, it)
  sign = e.c(-(1 << (bits - 1)), it)
  mag = e.c((1 << (bits - 1)) - 1, it)
  one, zero = e.c(1, it), e.c(0, it)
  xabs, yabs = e.f("arith.andi", xi, mag), e.f("arith.andi", yi, mag)
  xs, ys = e.f("arith.andi", xi, sign), e.f("arith.andi", yi, sign)
  smaller = e.f("arith.ori", e.cmp("arith.cmpi", "ugt", xabs, yabs),
                e.cmp("arith.cmpi", "ne", xs, ys))
  step = e.sel(smaller, e.c(-1, it), one)
  r = e.f("arith.addi", xi, step)
  r = e.sel(e.cmp("arith.cmpi", "eq", xabs, zero), e.f("arith.ori", ys, one),
            r)
  r = e.sel(e.cmp("arith.cmpf", "oeq", x, y), yi, r)
  r = e.bitcast(r, x.dtype)
  nan = e.cmp("arith.cmpf", "uno", x, y)
  return e.sel(nan, e.f("arith.addf", x, y), r)


@rule("threefry2x32")
def _threefry2x32(low, eqn):
  # Threefry-2x32 with 20 rounds, as JAX's own lowering of the primitive
  # writes it: 32-bit adds, rotates and xors, keys injected every 4 rounds.
  shape = tuple(out_aval(eqn).shape)
  k1, k2, x1, x2 = [low.convert(v, np.uint32) for v in
                    low.operands(eqn.invars, shape)]
  e = _Ew(low, x1)
  u32 = np.uint32
  add = lambda a, b: e.f("arith.addi", a, b)

  def rotl(x, d):
    return e.f("arith.ori", e.f("arith.shli", x, e.c(d, u32)),
               e.f("arith.shrui", x, e.c(32 - d, u32)))
  ks = [k1, k2, e.f("arith.xori", e.f("arith.xori", k1, k2),
                    e.c(0x1BD11BDA, u32))]
  rotations = [(13, 15, 26, 6), (17, 29, 16, 24)]
  x = [add(x1, ks[0]), add(x2, ks[1])]
  for i in range(5):
    for r in rotations[i % 2]:
      x[0] = add(x[0], x[1])
      x[1] = e.f("arith.xori", x[0], rotl(x[1], r))
    x = [add(x[0], ks[(i + 1) % 3]),
         add(x[1], add(ks[(i + 2) % 3], e.c(i + 1, u32)))]
  return x


# M. Giles, "Approximating the erfinv function" (single precision), the
# polynomials XLA's ErfInv uses for f32 (and for f16/bf16 through f32).
_ERFINV_SMALL = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
                 -4.39150654e-06, 0.00021858087, -0.00125372503,
                 -0.00417768164, 0.246640727, 1.50140941]
_ERFINV_LARGE = [-0.000200214257, 0.000100950558, 0.00134934322,
                 -0.00367342844, 0.00573950773, -0.0076224613,
                 0.00943887047, 1.00167406, 2.83297682]


@rule("erf_inv")
def _erf_inv(low, eqn):
  shape, dtype = tuple(out_aval(eqn).shape), np.dtype(out_aval(eqn).dtype)
  (x0,) = low.operands(eqn.invars, shape)
  if not M.is_float(dtype) or M.bitwidth(dtype) > 32:
    raise low.error(f"'erf_inv' is not supported on {dtype}")
  x = low.convert(x0, np.float32)
  e = _Ew(low, x)
  f32 = np.float32
  # w = -log(1 - x^2), as log1p(-x*x).
  w = e.f("arith.negf", e.f("math.log1p", e.f("arith.negf",
                                               e.f("arith.mulf", x, x))))
  small = e.cmp("arith.cmpf", "olt", w, e.c(5.0, f32))
  w = e.sel(small, e.f("arith.subf", w, e.c(2.5, f32)),
            e.f("arith.subf", e.f("math.sqrt", w), e.c(3.0, f32)))
  p = None
  for cs, cl in zip(_ERFINV_SMALL, _ERFINV_LARGE):
    coef = e.sel(small, e.c(cs, f32), e.c(cl, f32))
    p = coef if p is None else e.f("arith.addf", coef,
                                   e.f("arith.mulf", p, w))
  r = e.f("arith.mulf", p, x)
  # erf_inv(+-1) = +-inf.
  at_one = e.cmp("arith.cmpf", "oeq", e.f("math.absf", x), e.c(1.0, f32))
  r = e.sel(at_one, e.f("arith.mulf", x, e.c(np.inf, f32)), r)
  return low.convert(r, dtype)


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------

@rule("broadcast_in_dim")
def _broadcast_in_dim(low, eqn):
  (a,) = eqn.invars[:1]
  shape = tuple(eqn.params["shape"])
  dims = tuple(eqn.params["broadcast_dimensions"])
  if len(eqn.invars) > 1:
    raise low.error("'broadcast_in_dim' with dynamic shapes is not supported")
  if isinstance(a, jax_core.Literal):
    return low.constant(np.asarray(a.val), shape, a.aval.dtype, scalar=False)
  v = low.read(a)
  if a in low.lin and len(a.aval.shape) == len(dims):
    l = low.lin[a]
    strides = [0] * len(shape)
    for d, s, n in zip(dims, l.strides, a.aval.shape):
      strides[d] = s if n == shape[d] else 0
    low.lin[eqn.outvars[0]] = Lin(l.base, tuple(strides))
  elif (not isinstance(a, jax_core.Literal) and a.aval.shape == () and
        M.is_int(a.aval.dtype)):
    low.lin[eqn.outvars[0]] = Lin(("val", a), (0,) * len(shape))
  if v.shape == shape and not v.scalar:
    return v
  return low.op(
      f"pallas.broadcast_in_dim {v.name} dims [{', '.join(map(str, dims))}] "
      f": {v.type} -> {M.tensor_type(shape, v.dtype)}", shape, v.dtype, False)


@rule("broadcast_to")
def _broadcast_to(low, eqn):
  (a,) = eqn.invars
  shape = tuple(eqn.params["shape"])
  v = low.read(a)
  if isinstance(a, jax_core.Var) and a in low.lin:
    l = low.lin[a]
    r = len(shape) - len(l.strides)
    low.lin[eqn.outvars[0]] = Lin(l.base, (0,) * r + tuple(
        s if n == shape[r + i] else 0
        for i, (s, n) in enumerate(zip(l.strides, a.aval.shape))))
  elif a.aval.shape == () and M.is_int(a.aval.dtype):
    low.lin[eqn.outvars[0]] = Lin(("val", a), (0,) * len(shape))
  return low.as_tensor(v, shape)


@rule("reshape")
def _reshape(low, eqn):
  (a,) = eqn.invars[:1]
  shape = tuple(eqn.params["new_sizes"])
  if eqn.params.get("dimensions") not in (None, ()):
    raise low.error("'reshape' with dimensions is not supported")
  v = low.read(a)
  if v.scalar:
    return low.as_tensor(v, shape) if shape != () else v
  if v.shape == shape:
    return v
  return low.op(f"pallas.reshape {v.name} : {v.type} -> "
                f"{M.tensor_type(shape, v.dtype)}", shape, v.dtype, False)


def _extract_slice(low, v: V, offsets, sizes, strides=None) -> V:
  """tensor.extract_slice of the tensor `v` at `offsets` (integers or index
  values' names) of `sizes`, with `strides` (default 1)."""
  def dims(xs):
    return ", ".join(map(str, xs))
  strides = [1] * len(sizes) if strides is None else strides
  return low.op(f"tensor.extract_slice {v.name}[{dims(offsets)}] "
                f"[{dims(sizes)}] [{dims(strides)}] : {v.type} to "
                f"{M.tensor_type(sizes, v.dtype)}", sizes, v.dtype, False)


@rule("slice")
def _slice(low, eqn):
  a = eqn.invars[0]
  v = low.as_tensor(low.read(a), a.aval.shape)
  starts = [int(x) for x in eqn.params["start_indices"]]
  limits = [int(x) for x in eqn.params["limit_indices"]]
  strides = [int(x) for x in (eqn.params.get("strides") or
                              [1] * len(starts))]
  shape = tuple(out_aval(eqn).shape)
  if tuple(starts) == (0,) * len(starts) and shape == v.shape:
    return v
  return _extract_slice(low, v, starts, shape, strides)


@rule("tile")
def _tile(low, eqn):
  # jnp.tile: the operand repeated along each axis, one concatenation per
  # axis with repeats (as JAX's Mosaic lowering does).
  a = eqn.invars[0]
  v = low.as_tensor(low.read(a), a.aval.shape)
  for axis, reps in enumerate(int(r) for r in eqn.params["reps"]):
    if reps == 1:
      continue
    shape = list(v.shape)
    shape[axis] *= reps
    v = _concat(low, [v] * reps, axis, tuple(shape), v.dtype)
  return v


@rule("split")
def _split(low, eqn):
  a = eqn.invars[0]
  v = low.as_tensor(low.read(a), a.aval.shape)
  axis = int(eqn.params["axis"])
  outs, off = [], 0
  for o in eqn.outvars:
    shape = tuple(o.aval.shape)
    starts = [0] * len(shape)
    starts[axis] = off
    off += shape[axis]
    outs.append(_extract_slice(low, v, starts, shape))
  return outs


@rule("pad")
def _pad(low, eqn):
  # The padding value broadcast to the result, the operand inserted at the
  # low edges with stride interior + 1; negative edges slice the operand
  # first (lax.pad's order when there is no interior padding).
  a, pv = eqn.invars
  shape = tuple(out_aval(eqn).shape)
  cfg = [tuple(int(c) for c in d) for d in eqn.params["padding_config"]]
  v = low.as_tensor(low.read(a), a.aval.shape)
  if any(i < 0 for _, _, i in cfg):
    raise low.error("'pad' with negative interior padding is not valid")
  if any((lo < 0 or hi < 0) and i for lo, hi, i in cfg):
    raise low.error("'pad' with both negative edge padding and interior "
                    "padding on one dimension is not supported")
  if any(lo < 0 or hi < 0 for lo, hi, _ in cfg):
    starts = [max(-lo, 0) for lo, _, _ in cfg]
    sizes = [n - max(-lo, 0) - max(-hi, 0) for n, (lo, hi, _) in
             zip(v.shape, cfg)]
    v = _extract_slice(low, v, starts, sizes)
    cfg = [(max(lo, 0), max(hi, 0), i) for lo, hi, i in cfg]
  if tuple(v.shape) == shape:
    return v
  fill = low.as_tensor(low.read(pv), shape)
  if 0 in v.shape:
    return fill
  rt = M.tensor_type(shape, v.dtype)
  return low.op(
      f"tensor.insert_slice {v.name} into {fill.name}"
      f"[{', '.join(str(lo) for lo, _, _ in cfg)}] "
      f"[{', '.join(map(str, v.shape))}] "
      f"[{', '.join(str(i + 1) for _, _, i in cfg)}] : {v.type} into {rt}",
      shape, v.dtype, False)


def _clamped_starts(low, eqn, starts, shape, sizes):
  """lax.dynamic_slice's starts as index values, clamped to [0, dim - size]
  as JAX clamps them."""
  out = []
  for a, n, k in zip(starts, shape, sizes):
    if isinstance(a, jax_core.Literal):
      out.append(low.index_const(min(max(int(np.asarray(a.val)), 0), n - k)))
      continue
    v = low.convert(low.as_scalar(low.read(a)), np.int32)
    e = _Ew(low, v)
    v = e.f("arith.maxsi", v, e.c(0, np.int32))
    v = e.f("arith.minsi", v, e.c(n - k, np.int32))
    out.append(low.to_index(v))
  return out


@rule("dynamic_slice")
def _dynamic_slice(low, eqn):
  a, *starts = eqn.invars
  sizes = tuple(int(k) for k in eqn.params["slice_sizes"])
  v = low.as_tensor(low.read(a), a.aval.shape)
  offs = _clamped_starts(low, eqn, starts, v.shape, sizes)
  return _extract_slice(low, v, offs, sizes)


@rule("dynamic_update_slice")
def _dynamic_update_slice(low, eqn):
  a, u, *starts = eqn.invars
  v = low.as_tensor(low.read(a), a.aval.shape)
  w = low.as_tensor(low.read(u), u.aval.shape)
  if w.dtype != v.dtype:
    w = low.convert(w, v.dtype)
  offs = _clamped_starts(low, eqn, starts, v.shape, w.shape)
  return low.op(f"tensor.insert_slice {w.name} into {v.name}"
                f"[{', '.join(offs)}] [{', '.join(map(str, w.shape))}] "
                f"[{', '.join(['1'] * len(w.shape))}] : {w.type} into {v.type}",
                v.shape, v.dtype, False)


@rule("squeeze")
def _squeeze(low, eqn):
  v = low.read(eqn.invars[0])
  shape = tuple(out_aval(eqn).shape)
  if v.scalar or v.shape == shape:
    return v
  return low.op(f"pallas.reshape {v.name} : {v.type} -> "
                f"{M.tensor_type(shape, v.dtype)}", shape, v.dtype, False)


@rule("expand_dims")
def _expand_dims(low, eqn):
  return _squeeze(low, eqn)


@rule("transpose")
def _transpose(low, eqn):
  v = low.read(eqn.invars[0])
  return _transpose_value(low, v, tuple(int(p) for p in
                                        eqn.params["permutation"]))


@rule("iota")
def _iota(low, eqn):
  shape = tuple(eqn.params["shape"])
  dim = int(eqn.params["dimension"])
  dtype = np.dtype(eqn.params["dtype"])
  it = np.int32 if not M.is_int(dtype) or M.bitwidth(dtype) < 32 else dtype
  v = low.op(f"pallas.iota {dim} : {M.tensor_type(shape, it)}", shape, it,
             False)
  if M.is_int(dtype):
    strides = [0] * len(shape)
    strides[dim] = 1
    low.lin[eqn.outvars[0]] = Lin(("const", 0), tuple(strides))
  return low.convert(v, dtype)


@rule("concatenate")
def _concatenate(low, eqn):
  aval = out_aval(eqn)
  shape, dtype = tuple(aval.shape), aval.dtype
  dim = int(eqn.params["dimension"])
  vals = [low.as_tensor(low.read(a), a.aval.shape) for a in eqn.invars]
  return _concat(low, vals, dim, shape, dtype)


def _concat(low, vals, dim, shape, dtype):
  # tensor.empty + one insert_slice per operand (what tensor.concat
  # decomposes into; the GPU lowering handles insert_slice).
  rt = M.tensor_type(shape, dtype)
  acc = low.op(f"tensor.empty() : {rt}", shape, dtype, False)
  off = 0
  for v in vals:
    offs = [0] * len(shape)
    offs[dim] = off
    strides = [1] * len(shape)
    acc = low.op(f"tensor.insert_slice {v.name} into {acc.name}"
                 f"[{', '.join(map(str, offs))}] [{', '.join(map(str, v.shape))}]"
                 f" [{', '.join(map(str, strides))}] : {v.type} into {rt}",
                 shape, dtype, False)
    off += v.shape[dim]
  return acc


# ---------------------------------------------------------------------------
# Reductions, dots
# ---------------------------------------------------------------------------

def _flip_sign(low, v: V) -> V:
  """`v` xor the sign bit: unsigned order becomes signed order (and back),
  so the signed max/min/argmax/argmin of every target serve unsigned types."""
  top = -(1 << (M.bitwidth(v.dtype) - 1))
  e = _Ew(low, v)
  return e.f("arith.xori", v, e.c(top, _same_width_int(v.dtype)))


def _reduce(kind):
  def build(low, eqn):
    aval = out_aval(eqn)
    (a,) = eqn.invars
    v = low.read(a)
    axes = tuple(eqn.params["axes"])
    if not axes:
      return v
    v = low.as_tensor(v, a.aval.shape)
    shape = tuple(aval.shape)
    dtype = v.dtype
    k = kind
    if M.is_bool(dtype):
      # any/all: max/min over the bools as i32.
      k = {"or": "max", "and": "min"}[kind]
      v = low.convert(v, np.int32)
    elif kind in ("or", "and"):
      raise low.error(f"'reduce_{kind}' is only supported on bool")
    flip = k in ("max", "min") and M.is_unsigned(dtype)
    if flip:
      v = _flip_sign(low, v)
    r = low.op(f"pallas.reduce {k} {v.name} dims [{', '.join(map(str, axes))}]"
               f" : {v.type} -> {M.tensor_type(shape, v.dtype)}", shape,
               v.dtype, False)
    if flip:
      r = _flip_sign(low, r)
    if M.is_bool(dtype):
      r = low.convert(r, np.bool_)
    return r
  return build


RULES["reduce_sum"] = _reduce("sum")
RULES["reduce_max"] = _reduce("max")
RULES["reduce_min"] = _reduce("min")
RULES["reduce_or"] = _reduce("or")
RULES["reduce_and"] = _reduce("and")


def _arg(kind):
  def build(low, eqn):
    aval = out_aval(eqn)
    (a,) = eqn.invars
    axes = tuple(eqn.params["axes"])
    if len(axes) != 1:
      raise low.error(f"'{eqn.primitive.name}' over {len(axes)} axes")
    v = low.as_tensor(low.read(a), a.aval.shape)
    if M.is_unsigned(v.dtype):
      v = _flip_sign(low, v)  # same order, as signed integers
    shape = tuple(aval.shape)
    dt = np.dtype(eqn.params["index_dtype"])
    return low.op(f"pallas.reduce {kind} {v.name} dims [{axes[0]}] : {v.type}"
                  f" -> {M.tensor_type(shape, dt)}", shape, dt, False)
  return build


RULES["argmax"] = _arg("argmax")
RULES["argmin"] = _arg("argmin")


# ---------------------------------------------------------------------------
# Sort and rev: permutations along one axis, by ranks
# ---------------------------------------------------------------------------

# Sorting by ranks compares every pair: n^2 elements per row.
_SORT_LIMIT = 256


def _to_last_axis(low, v: V, dim):
  """`v` (a tensor) with axis `dim` moved last, and the permutation back."""
  r = len(v.shape)
  perm = tuple(d for d in range(r) if d != dim) + (dim,)
  back = tuple(int(i) for i in np.argsort(perm))
  return _transpose_value(low, v, perm), back


def _square(low, v: V, axis) -> V:
  """`v` of shape [rest..., n] broadcast to [rest..., n, n], its last axis
  placed at `axis` (-2 or -1) of the square."""
  rest, n = v.shape[:-1], v.shape[-1]
  sq = tuple(rest) + (n, n)
  dims = list(range(len(rest))) + [len(rest) + (0 if axis == -2 else 1)]
  return low.op(f"pallas.broadcast_in_dim {v.name} dims "
                f"[{', '.join(map(str, dims))}] : {v.type} -> "
                f"{M.tensor_type(sq, v.dtype)}", sq, v.dtype, False)


def _permute_last(low, vals, dest: V):
  """Each of `vals` ([rest..., n]) with element i moved to position dest[i]
  (a permutation, i32): out[k] = the sum over i of its bits where dest[i]
  is k (one term each, so exact for every value: NaN payloads, -0)."""
  rest, n = dest.shape[:-1], dest.shape[-1]
  sq = tuple(rest) + (n, n)
  k = low.op(f"pallas.iota {len(rest)} : {M.tensor_type(sq, np.int32)}", sq,
             np.int32, False)
  hit = _Ew(low, k).cmp("arith.cmpi", "eq", _square(low, dest, -1), k)
  return [_sum_bits(low, v, hit, sq, dest.shape) for v in vals]


def _sum_bits(low, v: V, pick: V, sq, shape) -> V:
  """The element of `v` ([..., n], broadcast along the square's
  second-to-last axis) that `pick` ([..., m, n], one true per row) selects,
  for each row: a sum over its bits, so exact for every value."""
  dtype = np.dtype(v.dtype)
  bits_t = np.dtype(np.int8) if M.is_bool(dtype) else _same_width_int(dtype)
  bits = (low.convert(v, np.int8) if M.is_bool(dtype) else
          v if M.elem_type(dtype) == M.elem_type(bits_t) else
          _Ew(low, v).bitcast(v, bits_t))
  rest = len(sq) - 2
  b = _bcast(low, bits, sq, tuple(range(rest)) + (rest + 1,))
  zero = low.constant(np.zeros((), bits_t), sq, bits_t, False)
  picked = _select(low, pick, b, zero)
  o = low.op(f"pallas.reduce sum {picked.name} dims [{rest + 1}] : "
             f"{picked.type} -> {M.tensor_type(shape, bits_t)}", tuple(shape),
             bits_t, False)
  if M.is_bool(dtype):
    return low.convert(o, np.bool_)
  if M.elem_type(dtype) == M.elem_type(bits_t):
    return V(o.name, o.shape, dtype, False)
  return _Ew(low, o).bitcast(o, dtype)


def _sort_key(low, v: V, standardize=True):
  """`v` as integers in sort order and whether to compare them unsigned:
  floats as JAX's _float_to_int_for_sort orders them (-0 == 0, every NaN
  last and equal; narrower floats through f32, exactly), unsigned integers
  and bools unsigned. Without `standardize`, floats keep their bits' total
  order (-0 < 0, NaNs by sign and payload): XLA's TopK order."""
  dtype = np.dtype(v.dtype)
  if M.is_bool(dtype):
    return low.convert(v, np.int8), True
  if not M.is_float(dtype):
    return v, M.is_unsigned(dtype)
  if M.bitwidth(dtype) < 32:
    v = low.convert(v, np.float32)
  it = _same_width_int(v.dtype)
  e = _Ew(low, v)
  signed = e.bitcast(v, it)
  top = np.iinfo(it).max
  if standardize:
    signed = e.sel(e.cmp("arith.cmpf", "oeq", v, e.c(0, v.dtype)),
                   e.c(0, it), signed)
    signed = e.sel(e.cmp("arith.cmpf", "uno", v, v), e.c(top, it), signed)
  flipped = e.f("arith.subi", e.c(top, it), e.bitcast(v, it))
  neg = e.cmp("arith.cmpi", "slt", signed, e.c(0, it))
  return e.sel(neg, flipped, signed), False


def _ranks(low, keys, descending=False) -> V:
  """Each element's rank along the last axis of the (key, unsigned) pairs
  `keys` ([rest..., n] each): how many elements come before it, the keys
  compared in order (ascending or descending), then the position (stable).
  """
  shape = keys[0][0].shape
  rest, n = shape[:-1], shape[-1]
  sq = tuple(rest) + (n, n)
  # before[i, j]: element j comes before element i.
  i_idx = low.op(f"pallas.iota {len(rest)} : {M.tensor_type(sq, np.int32)}",
                 sq, np.int32, False)
  j_idx = low.op(f"pallas.iota {len(rest) + 1} : "
                 f"{M.tensor_type(sq, np.int32)}", sq, np.int32, False)
  e = _Ew(low, i_idx)
  before = e.cmp("arith.cmpi", "slt", j_idx, i_idx)
  for key, unsigned in reversed(keys):
    ki, kj = _square(low, key, -2), _square(low, key, -1)
    pred = ("u" if unsigned else "s") + ("gt" if descending else "lt")
    first = e.cmp("arith.cmpi", pred, kj, ki)
    eq = e.cmp("arith.cmpi", "eq", kj, ki)
    before = e.f("arith.ori", first, e.f("arith.andi", eq, before))
  count = low.convert(before, np.int32)
  return low.op(f"pallas.reduce sum {count.name} dims [{len(rest) + 1}] : "
                f"{count.type} -> {M.tensor_type(shape, np.int32)}", shape,
                np.int32, False)


@rule("sort")
def _sort(low, eqn):
  dim = int(eqn.params["dimension"])
  num_keys = int(eqn.params["num_keys"])
  shape = tuple(eqn.invars[0].aval.shape)
  n = shape[dim]
  if n > _SORT_LIMIT:
    raise low.error(f"'sort' along an axis of {n} elements: pallasc sorts by "
                    f"ranks (every pair compared), up to {_SORT_LIMIT} "
                    "elements per row")
  vals = [low.as_tensor(low.read(a), shape) for a in eqn.invars]
  if n <= 1:
    return vals
  moved = [_to_last_axis(low, v, dim) for v in vals]
  back = moved[0][1]
  vals = [m[0] for m in moved]
  rank = _ranks(low, [_sort_key(low, v) for v in vals[:num_keys]])
  return [_transpose_value(low, o, back)
          for o in _permute_last(low, vals, rank)]


@rule("top_k")
def _top_k(low, eqn):
  (a,) = eqn.invars
  shape = tuple(a.aval.shape)
  axis = int(eqn.params.get("axis", len(shape) - 1)) % len(shape)
  k = int(eqn.params["k"])
  n = shape[axis]
  if n > _SORT_LIMIT:
    raise low.error(f"'top_k' along an axis of {n} elements: pallasc ranks "
                    f"every pair, up to {_SORT_LIMIT} elements per row")
  v, back = _to_last_axis(low, low.as_tensor(low.read(a), shape), axis)
  rest = v.shape[:-1]
  # Larger first in XLA's TopK order (the bits' total order: NaN first, 0
  # before -0), equal values by position.
  rank = _ranks(low, [_sort_key(low, v, standardize=False)], descending=True)
  pos = low.op(f"pallas.iota {len(rest)} : "
               f"{M.tensor_type(rest + (n,), np.int32)}", rest + (n,),
               np.int32, False)
  outs = []
  for o in _permute_last(low, [v, pos], rank):
    if k != n:
      part = tuple(rest) + (k,)
      o = _extract_slice(low, o, [0] * len(part), part)
    outs.append(_transpose_value(low, o, back))
  return outs


@rule("rev")
def _rev(low, eqn):
  (a,) = eqn.invars
  shape = tuple(a.aval.shape)
  v = low.as_tensor(low.read(a), shape)
  for dim in eqn.params["dimensions"]:
    n = shape[dim]
    if n <= 1:
      continue
    if n > _SORT_LIMIT:
      raise low.error(f"'rev' along an axis of {n} elements: pallasc "
                      f"reverses by a permutation of every pair, up to "
                      f"{_SORT_LIMIT} elements")
    moved, back = _to_last_axis(low, v, int(dim))
    iota = low.op(f"pallas.iota {len(shape) - 1} : "
                  f"{M.tensor_type(moved.shape, np.int32)}", moved.shape,
                  np.int32, False)
    e = _Ew(low, iota)
    dest = e.f("arith.subi", e.c(n - 1, np.int32), iota)
    v = _transpose_value(low, _permute_last(low, [moved], dest)[0], back)
  return v


@rule("cumsum")
def _cumsum(low, eqn):
  v = low.read(eqn.invars[0])
  v = low.as_tensor(v, eqn.invars[0].aval.shape)
  rev = " reverse" if eqn.params.get("reverse") else ""
  return low.op(f"pallas.cumsum {v.name} dim {int(eqn.params['axis'])}{rev} :"
                f" {v.type}", v.shape, v.dtype, False)


# cumprod/cummax/cummin/cumlogsumexp have no dialect op: along an axis of at most
# _MAX_UNROLLED_CUM elements they are unrolled, one slice of the axis per
# step, and the steps concatenated (sequential order, as a scan).
_MAX_UNROLLED_CUM = 128


def _logaddexp(low, a: V, b: V) -> V:
  """log(exp(a) + exp(b)) as jnp.logaddexp computes it: max + log1p(exp(
  -|a - b|)), and a + b where the difference is NaN (a NaN, or infinities
  of the same sign)."""
  e = _Ew(low, a)
  delta = e.f("arith.subf", a, b)
  big = e.f("arith.maximumf", a, b)
  tail = e.f("math.log1p", e.f("math.exp", e.f("arith.negf",
                                                e.f("math.absf", delta))))
  return e.sel(e.cmp("arith.cmpf", "uno", delta, delta), e.f("arith.addf", a, b),
               e.f("arith.addf", big, tail))


def _cumulative(kind):
  ops = {"cumprod": ("arith.mulf", "arith.muli", "arith.muli"),
         "cummax": ("arith.maximumf", "arith.maxsi", "arith.maxui"),
         "cummin": ("arith.minimumf", "arith.minsi", "arith.minui"),
         "cumlogsumexp": (_logaddexp, None, None)}[kind]

  def build(low, eqn):
    v = low.as_tensor(low.read(eqn.invars[0]), eqn.invars[0].aval.shape)
    axis = int(eqn.params["axis"])
    n = v.shape[axis]
    if n > _MAX_UNROLLED_CUM:
      raise low.error(
          f"'{kind}' along an axis of {n} elements: pallasc unrolls it, up to "
          f"{_MAX_UNROLLED_CUM} elements")
    if M.is_bool(v.dtype):
      raise low.error(f"'{kind}' of bool is not supported")
    op = ops[0 if M.is_float(v.dtype) else 2 if M.is_unsigned(v.dtype)
             else 1]
    if op is None:
      raise low.error(f"'{kind}' of {np.dtype(v.dtype)} is not supported "
                      "(floats only)")
    piece = list(v.shape)
    piece[axis] = 1
    piece = tuple(piece)
    pt = M.tensor_type(piece, v.dtype)
    steps = [None] * n
    order = range(n - 1, -1, -1) if eqn.params.get("reverse") else range(n)
    acc = None
    for i in order:
      starts = [0] * len(piece)
      starts[axis] = i
      x = _extract_slice(low, v, starts, piece)
      acc = x if acc is None else op(low, acc, x) if callable(op) else (
          low.op(f"{op} {acc.name}, {x.name} : {pt}", piece, v.dtype, False))
      steps[i] = acc
    return _concat(low, steps, axis, v.shape, v.dtype)
  return build


for _k in ("cumprod", "cummax", "cummin", "cumlogsumexp"):
  RULES[_k] = _cumulative(_k)


@rule("reduce_prod")
def _reduce_prod(low, eqn):
  # No dialect op: the axes are reduced one by one, each unrolled as the
  # cumulative ops are (a product of its slices in sequence).
  aval = out_aval(eqn)
  a = eqn.invars[0]
  v = low.as_tensor(low.read(a), a.aval.shape)
  if M.is_bool(v.dtype):
    raise low.error("'reduce_prod' of bool is not supported")
  op = "arith.mulf" if M.is_float(v.dtype) else "arith.muli"
  for axis in sorted((int(x) for x in eqn.params["axes"]), reverse=True):
    n = v.shape[axis]
    if n > _MAX_UNROLLED_CUM:
      raise low.error(
          f"'reduce_prod' along an axis of {n} elements: pallasc unrolls it, "
          f"up to {_MAX_UNROLLED_CUM} elements")
    piece = list(v.shape)
    piece[axis] = 1
    pt = M.tensor_type(piece, v.dtype)
    acc = None
    for i in range(n):
      starts = [0] * len(piece)
      starts[axis] = i
      x = _extract_slice(low, v, starts, piece)
      acc = x if acc is None else low.op(f"{op} {acc.name}, {x.name} : {pt}",
                                         tuple(piece), v.dtype, False)
    if acc is None:  # an empty axis: the product is 1
      acc = low.constant(np.ones((), v.dtype), tuple(piece), v.dtype, False)
    new = tuple(d for k, d in enumerate(v.shape) if k != axis)
    v = _reshape_value(low, acc, new)
    if new != ():
      v = low.as_tensor(v, new)
  return v if tuple(aval.shape) != () else low.as_scalar(v)


def _precision_name(p):
  if p is None:
    return "default"
  if isinstance(p, (tuple, list)):
    names = [_precision_name(x) for x in p]
    order = ["default", "high", "highest"]
    return max(names, key=order.index)
  s = str(getattr(p, "name", p)).lower()
  if s in ("default", "bfloat16", "fastest"):
    return "default"
  if s in ("high", "bfloat16_3x", "tensorfloat32"):
    return "high"
  if s in ("highest", "float32"):
    return "highest"
  raise ExportError(f"unknown dot precision {p!r}")


@rule("dot_general")
def _dot_general(low, eqn):
  aval = out_aval(eqn)
  (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
  lc, rc, lb, rb = map(tuple, (lc, rc, lb, rb))
  la, ra = eqn.invars
  lhs = low.as_tensor(low.read(la), la.aval.shape)
  rhs = low.as_tensor(low.read(ra), ra.aval.shape)
  out_dtype = np.dtype(aval.dtype)
  # fp8 operands are multiplied in f32 (each fp8 value is exact in f32).
  if M.is_float8(lhs.dtype) or M.is_float8(rhs.dtype):
    lhs, rhs = low.convert(lhs, np.float32), low.convert(rhs, np.float32)
  if lhs.dtype != rhs.dtype:
    lhs, rhs = low.convert(lhs, out_dtype), low.convert(rhs, out_dtype)
  if len(lb) != len(rb) or len(lc) != len(rc):
    raise low.error("'dot_general' batch or contracting dimensions differ in "
                    "count")

  def n_free(shape, contract, batch):
    return len(shape) - len(contract) - len(batch)
  if (len(lc) != 1 or len(lb) > 1 or lb != rb and len(lb) or
      lb and lb != (0,) or rb and rb != (0,) or
      n_free(lhs.shape, lc, lb) > 1 or n_free(rhs.shape, rc, rb) > 1):
    # Several contracting, batch or free dimensions, or batch dimensions
    # that are not leading: one [batch, M, K] x [batch, K, N] dot of the
    # operands transposed and merged, reshaped to JAX's result layout.
    return _dot_general_merged(low, eqn, lhs, rhs, (lc, rc, lb, rb),
                               out_dtype)

  def canon(v, contract, batch, is_lhs):
    """Transposes/reshapes an operand to [batch] x M x K (lhs) or
    [batch] x K x N (rhs); returns (value, free size, 1-D?)."""
    r = len(v.shape)
    free = [d for d in range(r) if d != contract and d not in batch]
    vec = not free
    if vec:  # a vector: add a unit free dimension
      shape = tuple(v.shape[d] for d in batch) + (
          (1, v.shape[contract]) if is_lhs else (v.shape[contract], 1))
      v = low.op(f"pallas.reshape {v.name} : {v.type} -> "
                 f"{M.tensor_type(shape, v.dtype)}", shape, v.dtype, False)
      return v, False, True
    order = list(batch) + ([free[0], contract] if is_lhs else
                           [contract, free[0]])
    if order == list(range(r)):
      return v, False, False
    alt = list(batch) + ([contract, free[0]] if is_lhs else
                         [free[0], contract])
    if alt == list(range(r)):
      return v, True, False  # the dot's transpose flag does it
    shape = tuple(v.shape[d] for d in order)
    v = low.op(f"pallas.transpose {v.name} [{', '.join(map(str, order))}] : "
               f"{v.type} -> {M.tensor_type(shape, v.dtype)}", shape,
               v.dtype, False)
    return v, False, False

  lhs, tl, lvec = canon(lhs, lc[0], lb, True)
  rhs, tr, rvec = canon(rhs, rc[0], rb, False)
  return _emit_dot(low, eqn, lhs, rhs, tl, tr, bool(lb), out_dtype)


def _emit_dot(low, eqn, lhs, rhs, tl, tr, batched, out_dtype):
  """pallas.dot of canonical operands ([batch,] M x K or K x M with `tl`;
  [batch,] K x N or N x K with `tr`), converted and reshaped to JAX's
  result."""
  aval = out_aval(eqn)
  b = (lhs.shape[0],) if batched else ()
  m = lhs.shape[-1] if tl else lhs.shape[-2]
  n = rhs.shape[-2] if tr else rhs.shape[-1]
  res_shape = b + (m, n)
  attrs = []
  if tl:
    attrs.append("transpose_lhs")
  if tr:
    attrs.append("transpose_rhs")
  prec = _precision_name(eqn.params.get("precision"))
  if prec != "default":
    attrs.append(f"precision = #pallas.precision<{prec}>")
  attr = f" {{{', '.join(attrs)}}}" if attrs else ""
  # A 16-bit float result is accumulated in f32 and rounded once, as XLA
  # (and Pallas' Triton lowering) compute it.
  acc_dtype = np.dtype(np.float32) if M.elem_type(out_dtype) in (
      "f16", "bf16") or M.is_float8(out_dtype) else out_dtype
  r = low.op(f"pallas.dot {lhs.name}, {rhs.name}{attr} : {lhs.type}, "
             f"{rhs.type} -> {M.tensor_type(res_shape, acc_dtype)}",
             res_shape, acc_dtype, False)
  r = low.convert(r, out_dtype)
  shape = tuple(aval.shape)
  if shape != res_shape:
    r = low.op(f"pallas.reshape {r.name} : {r.type} -> "
               f"{M.tensor_type(shape, out_dtype)}", shape, out_dtype, False)
  return r


def _dot_general_merged(low, eqn, lhs, rhs, dims, out_dtype):
  """dot_general in general form: each operand transposed to [batch...,
  free..., contracting...] (lhs) or [batch..., contracting..., free...]
  (rhs) and reshaped to [B, M, K] / [B, K, N] (no B without batch
  dimensions; M or N 1 without free ones), so lhs contracting dim i meets
  rhs contracting dim i."""
  lc, rc, lb, rb = dims

  def merged(v, contract, batch, is_lhs):
    r = len(v.shape)
    free = [d for d in range(r) if d not in contract and d not in batch]
    order = list(batch) + (free + list(contract) if is_lhs else
                           list(contract) + free)
    dims = tuple(v.shape)
    size = lambda ds: int(np.prod([dims[d] for d in ds], dtype=np.int64))
    if order != list(range(r)):
      v = _transpose_value(low, low.as_tensor(v, v.shape), tuple(order))
    shape = ((size(batch),) if batch else ()) + (
        (size(free), size(contract)) if is_lhs else
        (size(contract), size(free)))
    return _reshape_value(low, low.as_tensor(v, v.shape), shape)

  lhs = merged(lhs, lc, lb, True)
  rhs = merged(rhs, rc, rb, False)
  return _emit_dot(low, eqn, lhs, rhs, False, False, bool(lb), out_dtype)


# ---------------------------------------------------------------------------
# Pallas primitives
# ---------------------------------------------------------------------------

@rule("program_id", "num_programs")
def _program_id(low, eqn):
  axis = int(eqn.params["axis"])
  if low.kernel_axes is None:
    raise low.error(f"'{eqn.primitive.name}' outside a kernel")
  if not 0 <= axis < len(low.kernel_axes):
    raise low.error(f"'{eqn.primitive.name}' axis {axis} is outside the grid "
                    f"of {len(low.kernel_axes)} kernel axes")
  op = "pallas.program_id" if eqn.primitive.name == "program_id" else (
      "pallas.num_programs")
  return low.op(f"{op} {low.kernel_axes[axis]} : i32", (), np.int32, True)


# The platform names pallas.platform_index accepts (JAX's canonical names and
# `mosaic`, which JAX's TPU kernel lowering matches).
_PLATFORM_NAMES = ("cpu", "cuda", "rocm", "tpu", "mosaic")


@rule("platform_index")
def _platform_index(low, eqn):
  # lax.platform_dependent: the groups in order, None for the default (JAX
  # appends it last). Each target's pipeline resolves the index
  # (pallas-resolve-platform).
  groups, has_default = [], False
  for ps in eqn.params["platforms"]:
    if ps is None:
      has_default = True
      continue
    for p in ps:
      if p not in _PLATFORM_NAMES:
        raise low.error(f"lax.platform_dependent branch for platform '{p}': "
                        f"pallasc knows the platforms "
                        f"{', '.join(_PLATFORM_NAMES)}")
    groups.append("[" + ", ".join(f'"{p}"' for p in ps) + "]")
  text = "[" + ", ".join(groups) + "]" + (" default" if has_default else "")
  return low.op(f"pallas.platform_index {text} : i32", (), np.int32, True)


@rule("multiple_of")
def _multiple_of(low, eqn):
  v = low.read(eqn.invars[0])
  n = eqn.params["values"]
  n = int(n[0] if isinstance(n, (tuple, list)) else n)
  if isinstance(eqn.invars[0], jax_core.Var) and eqn.invars[0] in low.lin:
    low.lin[eqn.outvars[0]] = low.lin[eqn.invars[0]]
  return low.op(f"pallas.multiple_of {v.name}, {n} : {v.type}", v.shape,
                v.dtype, v.scalar)


@rule("max_contiguous")
def _max_contiguous(low, eqn):
  a = eqn.invars[0]
  v = low.as_tensor(low.read(a), a.aval.shape)
  vals = eqn.params["values"]
  vals = list(vals) if isinstance(vals, (tuple, list)) else [vals]
  if isinstance(a, jax_core.Var) and a in low.lin:
    low.lin[eqn.outvars[0]] = low.lin[a]
  if len(vals) != len(v.shape):
    vals = vals + [1] * (len(v.shape) - len(vals))
  return low.op(f"pallas.max_contiguous {v.name}, [{', '.join(map(str, vals))}"
                f"] : {v.type}", v.shape, v.dtype, False)


@rule("debug_print")
def _debug_print(low, eqn):
  fmt = eqn.params["fmt"]
  vals = [_printed_value(low, low.read(a)) for a in eqn.invars]
  if vals:
    names = ", ".join(v.name for v in vals)
    tys = ", ".join(v.type for v in vals)
    low.emit(f"pallas.debug_print {M.quote(fmt)} {names} : {tys}")
  else:
    low.emit(f"pallas.debug_print {M.quote(fmt)}")
  return []


def _printed_value(low, v):
  """What `jax.debug.print` of `v` prints: a ref's whole contents, loaded
  where the print is (`pallas.debug_print` takes values, not refs)."""
  if not isinstance(v, RefV):
    return v
  if v.space == "semaphore" or not (M.is_float(v.dtype) or M.is_int(v.dtype)
                                    or M.is_bool(v.dtype)):
    raise low.error(f"jax.debug.print of a ref in memory space '{v.space}' "
                    f"({v.type}): its contents cannot be loaded; print "
                    "values loaded from a data ref instead")
  return _load(low, v, (), v.shape)


# ---------------------------------------------------------------------------
# Refs
# ---------------------------------------------------------------------------

class Entry:
  """One dimension of the base ref in an indexer."""
  __slots__ = ("start", "size", "stride", "point")

  def __init__(self, start, size, stride=1, point=False):
    self.start, self.size, self.stride, self.point = start, size, stride, point


def _add_start(low, a, b):
  """a + b for starts that are ints or scalar i32 Vs."""
  if isinstance(a, int) and isinstance(b, int):
    return a + b
  if isinstance(a, int) and a == 0:
    return b
  if isinstance(b, int) and b == 0:
    return a
  va = a if isinstance(a, V) else low.int_const(a)
  vb = b if isinstance(b, V) else low.int_const(b)
  return low.op(f"arith.addi {va.name}, {vb.name} : i32", (), np.int32, True)


def _mul_start(low, a, k: int):
  if isinstance(a, int):
    return a * k
  if k == 1:
    return a
  vk = low.int_const(k)
  return low.op(f"arith.muli {a.name}, {vk.name} : i32", (), np.int32, True)


def _start_of(low, atom):
  """A start/index atom as an int or a scalar i32 V."""
  if isinstance(atom, (int, np.integer)):
    return int(atom)
  if isinstance(atom, jax_core.Literal):
    return int(np.asarray(atom.val))
  return low.index_i32(low.read(atom))


def _lin_base(low, b):
  """Materializes a symbolic iota-pattern base as an int or an i32 V."""
  kind = b[0]
  if kind == "const":
    return int(b[1])
  if kind == "val":
    a = b[1]
    if isinstance(a, jax_core.Literal):
      return int(np.asarray(a.val))
    return low.index_i32(low.read(a))
  if kind == "v":
    return low.index_i32(b[1])
  x = _lin_base(low, b[1])
  if kind == "add":
    return _add_start(low, x, _lin_base(low, b[2]))
  if kind == "sub":
    y = _lin_base(low, b[2])
    if isinstance(y, int):
      return _add_start(low, x, -y)
    xv = x if isinstance(x, V) else low.int_const(x)
    return low.op(f"arith.subi {xv.name}, {y.name} : i32", (), np.int32, True)
  if kind == "mul":
    return _mul_start(low, x, int(b[2]))
  raise low.error(f"internal error: iota base {b}")


def _lin_of(low, atom):
  if isinstance(atom, jax_core.Literal):
    return Lin(int(np.asarray(atom.val)), (0,) * len(atom.aval.shape))
  l = low.lin.get(atom)
  if l is None:
    return None
  return Lin(_lin_base(low, l.base), l.strides)


class _Gather(Exception):
  """index_ref found index vectors that are no iota pattern: a gather."""

  def __init__(self, indexer):
    super().__init__()
    self.indexer = indexer


def index_ref(low: Lowering, ref: RefV, transforms, result_shape,
              gather_ok=False):
  """The `[...]` indexer text (and its value shape) that selects what JAX's
  NDIndexer transforms select from `ref`. With `gather_ok`, index vectors
  that are no iota pattern raise `_Gather` (the caller emits pallas.gather)."""
  from jax._src.state import indexing
  entries = [Entry(0, d) for d in ref.shape]
  view = list(range(len(ref.shape)))  # base dims still visible, in order
  touched = False
  for t in transforms or ():
    if not isinstance(t, indexing.NDIndexer):
      raise low.error(f"ref transform {type(t).__name__} is not supported "
                      "(only indexing: .at[], pl.ds, slices, integers)")
    touched = True
    if len(t.indices) != len(view):
      raise low.error("internal error: indexer rank does not match the ref")
    vec = [i for i, idx in enumerate(t.indices)
           if not isinstance(idx, indexing.Slice) and
           tuple(getattr(getattr(idx, "aval", None), "shape", ()) or ())]
    new_view = []
    gathered = {}
    if vec:
      # Index vectors: each must be an iota pattern base + sum_k s_k * i_k,
      # every index dimension k owned by one ref dimension.
      ishape = tuple(t.int_indexer_shape)
      owners = {}
      for i, idx in enumerate(t.indices):
        if isinstance(idx, indexing.Slice):
          continue
        l = _lin_of(low, idx) if i in vec else Lin(_start_of(low, idx),
                                                    (0,) * len(ishape))
        if l is None and gather_ok and len(transforms) == 1 and all(
            not isinstance(x, indexing.Slice) for x in t.indices):
          raise _Gather(t)
        if l is None or len(l.strides) != len(ishape):
          if gather_ok:
            raise low.error(
                "gather indexing that mixes slices with an index vector that "
                "is not start + stride * iota (jnp.arange / lax.iota) is not "
                "supported (index every dimension with an array for a "
                "pallas.gather)")
          raise low.error(
              "a store or atomic through an index vector that is not start + "
              "stride * iota (jnp.arange / lax.iota), i.e. a scatter, is not "
              "supported")
        nz = [k for k, s in enumerate(l.strides) if s != 0]
        if len(nz) > 1 or any(s < 0 for s in l.strides):
          raise low.error("gather indexing whose index vector is not a "
                          "positive-stride slice along one dimension is not "
                          "supported")
        for k in nz:
          if k in owners:
            raise low.error("gather indexing with two ref dimensions along "
                            "one index dimension is not supported")
          owners[k] = i
        gathered[i] = (l, nz[0] if nz else None)
      if len(owners) != len([s for s in ishape if True]) and any(
          k not in owners and ishape[k] != 1 for k in range(len(ishape))):
        raise low.error("gather indexing with a broadcast index dimension is "
                        "not supported")
    for i, idx in enumerate(t.indices):
      e = entries[view[i]]
      if isinstance(idx, indexing.Slice):
        if jax_core.is_symbolic_dim(idx.size):
          raise _whole_dynamic_dim(low, ref, view[i])
        if not isinstance(idx.size, (int, np.integer)):
          raise low.error("a slice of dynamic size (pl.ds with a traced size)"
                          " is not supported")
        st = _start_of(low, idx.start)
        e.start = _add_start(low, e.start, _mul_start(low, st, e.stride)
                             if isinstance(st, V) else st * e.stride)
        e.size = int(idx.size)
        e.stride = e.stride * int(idx.stride)
        new_view.append(view[i])
      elif i in gathered:
        l, k = gathered[i]
        base = l.base
        e.start = _add_start(low, e.start, _mul_start(low, base, e.stride)
                             if isinstance(base, V) else base * e.stride)
        if k is None:
          e.point = True
        else:
          e.size = int(t.int_indexer_shape[k])
          e.stride = e.stride * l.strides[k]
          new_view.append(view[i])
      else:
        st = _start_of(low, idx)
        e.start = _add_start(low, e.start, _mul_start(low, st, e.stride)
                             if isinstance(st, V) else st * e.stride)
        e.point = True
    view = new_view
  value_shape = tuple(entries[d].size for d in view)
  if result_shape is not None and tuple(result_shape) != value_shape:
    raise low.error(f"indexing gives shape {tuple(result_shape)} in JAX but "
                    f"the slices select {value_shape} (the gathered dimensions"
                    " come in another order); not supported")
  for d, n in enumerate(ref.shape):
    if not isinstance(n, (int, np.integer)) and (
        not touched or (entries[d].size is n and not entries[d].point)):
      raise _whole_dynamic_dim(low, ref, d)
  if not touched:
    return "[]", tuple(ref.shape)
  whole = all(not e.point and e.start == 0 and e.size == d and e.stride == 1
              for e, d in zip(entries, ref.shape))
  if whole:
    return "[]", value_shape
  parts = []
  for e, d in zip(entries, ref.shape):
    start = e.start
    if isinstance(start, int) and not isinstance(d, (int, np.integer)):
      # A dimension known at launch (a pl.ANY ref over a symbolic array):
      # pallasc checks every start on it at run time.
      pass
    elif isinstance(start, int):
      last = start + (max(e.size, 1) - 1) * e.stride
      if start < 0 or (last >= d and not e.point):
        # A static slice past the block's end (pl.ds past the edge, masked):
        # a dynamic start, which pallasc (like JAX) clamps and masks.
        start = low.int_const(start)
      elif e.point and start >= d:
        start = low.int_const(start)
    s = start.name if isinstance(start, V) else str(start)
    if e.point:
      parts.append(s)
    elif e.stride != 1:
      parts.append(f"{s} : {e.size} : {e.stride}")
    else:
      parts.append(f"{s} : {e.size}")
  return "[" + ", ".join(parts) + "]", value_shape


def _whole_dynamic_dim(low, ref: RefV, d):
  name = ref.name.lstrip("%")
  return low.error(
      f"reads the whole of dimension {d} of the pl.ANY ref '{name}', "
      f"whose size '{ref.shape[d]}' is symbolic: a block needs a static "
      "shape; read the ref in slices of a static size (pl.ds(start, size))")


def _value_of(v: V, shape):
  return v


def _ref(low, atom) -> RefV:
  r = low.read(atom)
  if not isinstance(r, RefV):
    raise low.error("expected a ref")
  return r


def _mask_for(low, mask_atom, shape):
  if mask_atom is None:
    return None
  m = low.read(mask_atom)
  if shape == ():
    return low.as_scalar(m)
  return low.as_tensor(m, shape)


def _mask_and_other(low, ref, mask, other, shape, scalar):
  """The ` mask %m other %o` part of a masked read of `ref` of `shape`
  (`scalar`: one element), empty without a mask; `other` is converted to
  `ref`'s element type."""
  if mask is None:
    return ""
  text = f" mask {_mask_for(low, mask, shape).name}"
  if other is not None:
    o = low.read(other)
    o = low.convert(low.as_scalar(o) if o.shape == () else o, ref.dtype)
    o = o if scalar else low.as_tensor(o, shape)
    text += f" other {o.name}"
  return text


def _gather(low, ref: RefV, indexer, shape, mask=None, other=None):
  """pallas.gather: one i32 index tensor per ref dimension (JAX wraps
  negative indices, pallasc clamps the rest)."""
  shape = tuple(shape)
  names, tys = [], []
  for d, idx in enumerate(indexer.indices):
    if isinstance(idx, jax_core.Literal):
      v = low.constant(np.asarray(idx.val), shape, np.int32, scalar=False)
    else:
      v = low.convert(low.read(idx), np.int32)
      v = low.as_tensor(v, shape)
    zero = low.constant(np.array(0), shape, np.int32, False)
    dim = low.constant(np.array(ref.shape[d]), shape, np.int32, False)
    neg = low.op(f"arith.cmpi slt, {v.name}, {zero.name} : {v.type}", shape,
                 np.bool_, False)
    wrapped = low.op(f"arith.addi {v.name}, {dim.name} : {v.type}", shape,
                     np.int32, False)
    v = _select(low, neg, wrapped, v)
    names.append(v.name)
    tys.append(v.type)
  text = (f"pallas.gather {ref.name}[{', '.join(names)}]" +
          _mask_and_other(low, ref, mask, other, shape, False))
  return low.op(f"{text} : {ref.type}, {', '.join(tys)} -> "
                f"{M.tensor_type(shape, ref.dtype)}", shape, ref.dtype, False)


def _fit(idx: str, fit: bool) -> str:
  """` fit` for a get/swap (not masked_load/masked_swap) with a dynamic start.

  JAX discharges `x_ref[pl.ds(s, n)]` with `lax.dynamic_slice`, which moves an
  out-of-range start so the slice fits; masked_load/masked_swap pad the ref
  first (docs/dialect.md, "Dynamic starts"). Static starts are in bounds.
  """
  return " {fit}" if fit and "%" in idx else ""


_EVICTION_POLICIES = ("evict_first", "evict_last", "evict_normal")


# A gather that mixes slices with one index vector is unrolled: at most
# this many indices.
_MAX_UNROLLED_GATHER = 64


def _slice_gather(low, transforms):
  """(the NDIndexer, its index-vector dimension) of a load that mixes slices
  with one 1-D index vector that is no iota pattern (paged attention's
  `k_pages_ref[block_tables]`), or None."""
  from jax._src.state import indexing
  ts = list(transforms or ())
  if len(ts) != 1 or not isinstance(ts[0], indexing.NDIndexer):
    return None
  t = ts[0]
  vec = [d for d, i in enumerate(t.indices)
         if not isinstance(i, indexing.Slice)]
  if len(vec) != 1 or len(vec) == len(t.indices):
    return None
  idx = t.indices[vec[0]]
  shape = tuple(getattr(getattr(idx, "aval", None), "shape", ()) or ())
  if len(shape) != 1 or _lin_of(low, idx) is not None:
    return None
  return t, vec[0]


def _unrolled_gather(low, ref: RefV, t, dim):
  """ref[..., idx, ...] with slices elsewhere: one load per index (a dynamic
  start along `dim`: wrapped once when negative, then clamped, as JAX's
  gather clamps), the pieces concatenated along `dim`."""
  idx = t.indices[dim]
  count = int(idx.aval.shape[0])
  if count > _MAX_UNROLLED_GATHER:
    raise low.error(
        f"a load that mixes slices with an index vector of {count} entries: "
        f"pallasc unrolls it, one load per entry, up to "
        f"{_MAX_UNROLLED_GATHER}")
  vec = low.as_tensor(low.convert(low.read(idx), np.int32), (count,))
  parts, sizes = [], []
  for d, i in enumerate(t.indices):
    if d == dim:
      parts.append(None)
      continue
    st = _start_of(low, i.start)
    if not isinstance(i.size, (int, np.integer)):
      raise low.error("a slice of dynamic size (pl.ds with a traced size)"
                      " is not supported")
    text = f"{st.name if isinstance(st, V) else st} : {int(i.size)}"
    if int(i.stride) != 1:
      text += f" : {int(i.stride)}"
    parts.append(text)
    sizes.append(int(i.size))
  piece = list(sizes)
  piece.insert(dim, 1)
  pieces = []
  for k in range(count):
    at = low.index_const(k)
    s = low.op(f"tensor.extract {vec.name}[{at}] : {vec.type}", (), np.int32,
               True)
    text = ", ".join(s.name if p is None else p for p in parts)
    v = low.op(f"pallas.load {ref.name}[{text}] {{fit}} : {ref.type} -> "
               f"{M.tensor_type(sizes, ref.dtype)}", tuple(sizes), ref.dtype,
               False)
    pieces.append(_reshape_value(low, v, tuple(piece)))
  full = list(sizes)
  full.insert(dim, count)
  return _concat(low, pieces, dim, tuple(full), ref.dtype)


def _load(low, ref: RefV, transforms, shape, mask=None, other=None,
          fit=False, eviction_policy=None):
  if mask is None and _slice_gather(low, transforms) is not None:
    return _unrolled_gather(low, ref, *_slice_gather(low, transforms))
  try:
    idx, vshape = index_ref(low, ref, transforms, shape, gather_ok=True)
  except _Gather as g:
    return _gather(low, ref, g.indexer, shape, mask, other)
  scalar = vshape == ()
  rtype = M.value_type(vshape, ref.dtype, scalar)
  text = (f"pallas.load {ref.name}{idx}" +
          _mask_and_other(low, ref, mask, other, vshape, scalar))
  text += _fit(idx, fit)
  if eviction_policy is not None:
    # plgpu.load's cache hint: carried into the PTX (docs/dialect.md).
    if eviction_policy not in _EVICTION_POLICIES:
      raise low.error(f"eviction_policy '{eviction_policy}' is not one of "
                      + ", ".join(f"'{p}'" for p in _EVICTION_POLICIES))
    attr = f'eviction_policy = "{eviction_policy}"'
    text = (text[:-1] + f", {attr}}}" if text.endswith("{fit}") else
            text + f" {{{attr}}}")
  return low.op(f"{text} : {ref.type} -> {rtype}", vshape, ref.dtype, scalar)


def _store_value(low, val_atom, ref: RefV, vshape):
  v = low.read(val_atom)
  if v.dtype != ref.dtype:
    v = low.convert(v, ref.dtype)
  if vshape == ():
    return v if v.shape == () else low.as_scalar(v)
  return low.as_tensor(v, vshape)


def _swap(low, ref: RefV, transforms, val_atom, out_var, mask=None,
          kind=None, fit=False):
  idx, vshape = index_ref(low, ref, transforms, val_atom.aval.shape)
  v = _store_value(low, val_atom, ref, vshape)
  mtext = ""
  if mask is not None:
    m = _mask_for(low, mask, vshape)
    mtext = f" mask {m.name}"
  if kind is None:
    mtext += _fit(idx, fit)
  if kind is not None:
    return low.op(f"pallas.atomic_rmw {kind} {ref.name}{idx}, {v.name}{mtext}"
                  f" : {ref.type}, {v.type}", v.shape, v.dtype, v.scalar)
  if isinstance(out_var, jax_core.DropVar) or out_var not in low.used:
    low.emit(f"pallas.store {ref.name}{idx}, {v.name}{mtext} : {ref.type}, "
             f"{v.type}")
    return None
  return low.op(f"pallas.swap {ref.name}{idx}, {v.name}{mtext} : {ref.type}, "
                f"{v.type}", v.shape, v.dtype, v.scalar)


_VIEW_NAMES = {"ReshapeTransform": "reshape", "BitcastTransform": "bitcast",
               "TransposeTransform": "transpose"}


def _split_views(transforms):
  """JAX's ref transforms as (the indexers before the first view transform,
  the rest: a reshape, bitcast or transpose view and what follows it)."""
  from jax._src.state import indexing
  ts = list(transforms or ())
  for i, t in enumerate(ts):
    if not isinstance(t, indexing.NDIndexer):
      return ts[:i], ts[i:]
  return ts, []


def _refuse_views(low, transforms, what):
  """A located error when `transforms` hold a view transform (`what`: the
  access, "a store")."""
  _, views = _split_views(transforms)
  if views:
    name = type(views[0]).__name__
    raise low.error(
        f"{what} through a {_VIEW_NAMES.get(name, name)} ref view ({name}) is "
        "not supported: pallasc reads and writes through reshape, bitcast "
        "and transpose views (x_ref.reshape(...)[...]) but masked and atomic "
        "accesses need plain indexing")


def _indexer_slice(low, v: V, t):
  """Where JAX's NDIndexer `t` selects in the value `v` (an indexer after a
  view transform, as JAX's interpret mode applies it: lax.dynamic_slice,
  starts clamped to [0, dim - size], then integer indices squeezed): the
  offsets (index SSA names), the sizes, and the sizes kept."""
  from jax._src.state import indexing
  offs, sizes, kept = [], [], []
  for idx, n in zip(t.indices, v.shape):
    if isinstance(idx, indexing.Slice):
      if not isinstance(idx.size, (int, np.integer)):
        raise low.error("a slice of dynamic size (pl.ds with a traced size)"
                        " is not supported")
      if int(idx.stride) != 1:
        raise low.error("a strided slice after a ref view (reshape, bitcast, "
                        "transpose) is not supported; slice before the view")
      size, start = int(idx.size), idx.start
      kept.append(size)
    else:
      if tuple(getattr(getattr(idx, "aval", None), "shape", ()) or ()):
        raise low.error("an index vector after a ref view (reshape, bitcast, "
                        "transpose) is not supported; index before the view")
      size, start = 1, idx
    sizes.append(size)
    st = _start_of(low, start)
    if isinstance(st, int):
      offs.append(low.index_const(min(max(st, 0), n - size)))
      continue
    e = _Ew(low, st)
    st = e.f("arith.maxsi", st, e.c(0, np.int32))
    st = e.f("arith.minsi", st, e.c(n - size, np.int32))
    offs.append(low.to_index(st))
  return offs, tuple(sizes), tuple(kept)


def _reshape_value(low, v: V, shape) -> V:
  """`v` (a tensor or a scalar) as a tensor of `shape` (same element
  count); a scalar for shape ()."""
  shape = tuple(shape)
  if tuple(v.shape) == shape:
    return v
  v = low.as_tensor(v, v.shape)
  r = low.op(f"pallas.reshape {v.name} : {v.type} -> "
             f"{M.tensor_type(shape, v.dtype)}", shape, v.dtype, False)
  return low.as_scalar(r) if shape == () else r


def _index_value(low, v: V, t) -> V:
  """What JAX's NDIndexer `t` selects from the value `v` (_indexer_slice)."""
  offs, sizes, kept = _indexer_slice(low, v, t)
  if sizes != tuple(v.shape):
    v = _extract_slice(low, v, offs, sizes)
  return _reshape_value(low, v, kept)


def _unindex_value(low, whole: V, t, part: V) -> V:
  """`whole` with what JAX's NDIndexer `t` selects replaced by `part` (the
  inverse of _index_value, for a store through a view)."""
  offs, sizes, _ = _indexer_slice(low, whole, t)
  part = _reshape_value(low, part, sizes)
  if sizes == tuple(whole.shape):
    return part
  whole = low.as_tensor(whole, whole.shape)
  return low.op(f"tensor.insert_slice {part.name} into {whole.name}"
                f"[{', '.join(offs)}] [{', '.join(map(str, sizes))}] "
                f"[{', '.join(['1'] * len(sizes))}] : {part.type} into "
                f"{whole.type}", whole.shape, whole.dtype, False)


def _apply_view(low, v: V, t) -> V:
  """The value `v` through one of JAX's view transforms or indexers (as
  jax/_src/state/discharge.py transform_array applies it, whose results
  interpret mode gives)."""
  from jax._src.state import indexing
  from jax._src.state import types as state_types
  if isinstance(t, indexing.NDIndexer):
    return _index_value(low, low.as_tensor(v, v.shape), t)
  if isinstance(t, state_types.ReshapeTransform):
    return _reshape_value(low, v, tuple(int(d) for d in t.shape))
  if isinstance(t, state_types.BitcastTransform):
    dst = np.dtype(t.dtype)
    if M.is_bool(dst) or M.is_bool(v.dtype):
      raise low.error("a bitcast ref view of bool is not supported")
    if M.bitwidth(dst) != M.bitwidth(v.dtype):
      raise low.error(
          f"a bitcast ref view from {np.dtype(v.dtype)} to {dst} changes "
          "the element width (TPU packing along the second-minor "
          "dimension); pallasc supports same-width bitcast views only")
    return (V(v.name, v.shape, dst, v.scalar)
            if M.elem_type(v.dtype) == M.elem_type(dst) else
            _Ew(low, v).bitcast(v, dst))
  if isinstance(t, state_types.TransposeTransform):
    return _transpose_value(low, v, tuple(int(p) for p in t.permutation))
  raise low.error(f"ref transform {type(t).__name__} is not supported "
                  "(indexing and reshape, bitcast and transpose views are)")


def _transpose_value(low, v: V, perm) -> V:
  if perm == tuple(range(len(perm))):
    return v
  new = tuple(v.shape[p] for p in perm)
  return low.op(f"pallas.transpose {v.name} [{', '.join(map(str, perm))}] "
                f": {v.type} -> {M.tensor_type(new, v.dtype)}", new, v.dtype,
                False)


def _unapply_view(low, before: V, t, after: V) -> V:
  """The value that `before` becomes when `after`, its view through `t`,
  is written (the inverse of _apply_view)."""
  from jax._src.state import indexing
  from jax._src.state import types as state_types
  if isinstance(t, indexing.NDIndexer):
    return _unindex_value(low, before, t, after)
  if isinstance(t, state_types.ReshapeTransform):
    return _reshape_value(low, after, before.shape)
  if isinstance(t, state_types.BitcastTransform):
    return (V(after.name, after.shape, before.dtype, after.scalar)
            if M.elem_type(after.dtype) == M.elem_type(before.dtype) else
            _Ew(low, after).bitcast(after, before.dtype))
  perm = tuple(int(p) for p in t.permutation)
  return _transpose_value(low, after, tuple(int(i) for i in np.argsort(perm)))


def _apply_views(low, v: V, views, shape):
  """The loaded value `v` through JAX's view transforms and the indexers
  after them, in order; returns the result and the value before each step
  (what a store through the views writes back into)."""
  befores = []
  for t in views:
    befores.append(v)
    v = _apply_view(low, v, t)
  if tuple(v.shape) != tuple(shape):
    raise low.error(f"internal error: a ref view gives shape {v.shape}, JAX "
                    f"{tuple(shape)}")
  return v, befores


def _write_through_views(low, ref: RefV, transforms, val_atom, out_var,
                         accumulate=False):
  """A store (or `+=`) through view transforms: read what the indexers
  before the first view select, write the value into its view (the
  inverse of each view, last first), and store the region back whole.
  Returns the old view for a swap whose result is used."""
  head, views = _split_views(transforms)
  region = _load(low, ref, head, None, fit=True)
  shape = tuple(val_atom.aval.shape)
  old, befores = _apply_views(low, region, views, shape)
  new = low.read(val_atom)
  if new.dtype != old.dtype:
    new = low.convert(new, old.dtype)
  new = low.as_scalar(new) if shape == () else low.as_tensor(new, shape)
  if accumulate:
    op = "arith.addf" if M.is_float(old.dtype) else "arith.addi"
    new = low.op(f"{op} {old.name}, {new.name} : {old.type}", old.shape,
                 old.dtype, old.scalar)
  for t, before in zip(reversed(views), reversed(befores)):
    new = _unapply_view(low, before, t, new)
  # Only the elements the view selects are written (a masked store): other
  # programs may write the rest of the region at the same time.
  from jax._src.state import indexing
  from jax._src.state import types as state_types
  mtext = ""
  if any(isinstance(t, indexing.NDIndexer) for t in views):
    mask = low.constant(np.ones((), np.bool_), shape, np.bool_, shape == ())
    for t, before in zip(reversed(views), reversed(befores)):
      if isinstance(t, indexing.NDIndexer):
        zeros = low.constant(np.zeros((), np.bool_), before.shape, np.bool_,
                             before.shape == ())
        mask = _unindex_value(low, zeros, t, mask)
      elif not isinstance(t, state_types.BitcastTransform):
        # A reshape or transpose moves the mask as it moves the value.
        mask = _unapply_view(low, before, t, mask)
    mtext = f" mask {mask.name}"
  idx, _ = index_ref(low, ref, head, region.shape)
  low.emit(f"pallas.store {ref.name}{idx}, {new.name}{mtext}"
           f"{_fit(idx, True)} : {ref.type}, {new.type}")
  if accumulate or isinstance(out_var, jax_core.DropVar) or (
      out_var not in low.used):
    return None
  return old


@rule("get")
def _get(low, eqn):
  ref_atom, *flat = eqn.invars
  transforms = tree_util.tree_unflatten(eqn.params["tree"], flat)
  ref = _ref(low, ref_atom)
  shape = tuple(out_aval(eqn).shape)
  head, views = _split_views(transforms)
  if views:
    # Load what the indexers before the view select, then apply the view
    # and what follows it to the value.
    return _apply_views(low, _load(low, ref, head, None, fit=True), views,
                        shape)[0]
  return _load(low, ref, transforms, shape, fit=True)


@rule("swap")
def _swap_rule(low, eqn):
  ref_atom, val, *flat = eqn.invars
  transforms = tree_util.tree_unflatten(eqn.params["tree"], flat)
  if _split_views(transforms)[1]:
    return _write_through_views(low, _ref(low, ref_atom), transforms, val,
                                eqn.outvars[0])
  indexer = _scatter_indexer(low, transforms)
  if indexer is not None:
    return _scatter(low, _ref(low, ref_atom), indexer, val, eqn.outvars[0])
  return _swap(low, _ref(low, ref_atom), transforms, val, eqn.outvars[0],
               fit=True)


# A scatter compares every ref element with every index: at most this many
# pairs.
_SCATTER_LIMIT = 1 << 16


def _scatter_indexer(low, transforms):
  """The NDIndexer of a store through index vectors that are not start +
  stride * iota (a scatter: every dimension indexed by an array or an
  integer), or None."""
  from jax._src.state import indexing
  ts = list(transforms or ())
  if len(ts) != 1 or not isinstance(ts[0], indexing.NDIndexer):
    return None
  t = ts[0]
  if any(isinstance(i, indexing.Slice) for i in t.indices):
    return None
  arrays = [i for i in t.indices
            if tuple(getattr(getattr(i, "aval", None), "shape", ()) or ())]
  if not arrays or all(_lin_of(low, i) is not None for i in arrays):
    return None
  return t


def _scatter(low, ref: RefV, indexer, val_atom, out_var):
  """`ref[idx_0, idx_1, ...] = val` with arbitrary index arrays: each ref
  element takes the value of the last position that names it (XLA applies
  a scatter's updates in order), indices wrap once when negative (as JAX's
  indexing does), updates out of bounds are dropped and a swap's old values
  are read at clamped indices (what interpret mode gives). Every ref element
  is compared with every position; the ref is stored back masked to the
  elements written, so other programs' writes to the rest survive."""
  ishape = tuple(int(d) for d in indexer.int_indexer_shape)
  n = int(np.prod(ref.shape, dtype=np.int64))
  p = int(np.prod(ishape, dtype=np.int64))
  if n * p > _SCATTER_LIMIT:
    raise low.error(
        f"a store through index vectors (a scatter) of {p} positions into a "
        f"ref of {n} elements: pallasc compares every pair, up to "
        f"{_SCATTER_LIMIT} pairs")
  # The flat position each update names, -1 where out of bounds.
  e = _Ew(low, V("", ishape, np.int32, ishape == ()))
  flat, valid, clamped, stride = None, None, None, 1
  for d in reversed(range(len(ref.shape))):
    idx = indexer.indices[d]
    if isinstance(idx, jax_core.Literal):
      v = low.constant(np.asarray(idx.val), ishape, np.int32, ishape == ())
    else:
      v = low.convert(low.read(idx), np.int32)
      v = low.as_scalar(v) if ishape == () else low.as_tensor(v, ishape)
    dim = ref.shape[d]
    v = e.sel(e.cmp("arith.cmpi", "slt", v, e.c(0, np.int32)),
              e.f("arith.addi", v, e.c(dim, np.int32)), v)
    ok = e.f("arith.andi", e.cmp("arith.cmpi", "sge", v, e.c(0, np.int32)),
             e.cmp("arith.cmpi", "slt", v, e.c(dim, np.int32)))
    term = e.f("arith.muli", v, e.c(stride, np.int32))
    flat = term if flat is None else e.f("arith.addi", flat, term)
    # (A swap's old values are read as JAX's gather reads: clamped.)
    c = e.f("arith.minsi", e.f("arith.maxsi", v, e.c(0, np.int32)),
            e.c(dim - 1, np.int32))
    c = e.f("arith.muli", c, e.c(stride, np.int32))
    clamped = c if clamped is None else e.f("arith.addi", clamped, c)
    valid = ok if valid is None else e.f("arith.andi", valid, ok)
    stride *= dim
  flat = e.sel(valid, flat, e.c(-1, np.int32))
  flat = _reshape_value(low, low.as_tensor(flat, ishape), (p,))
  # hit[k, i]: position i writes element k; last[k]: the last such i.
  sq = (n, p)
  k_idx = low.op(f"pallas.iota 0 : {M.tensor_type(sq, np.int32)}", sq,
                 np.int32, False)
  i_idx = low.op(f"pallas.iota 1 : {M.tensor_type(sq, np.int32)}", sq,
                 np.int32, False)
  es = _Ew(low, k_idx)
  hit = es.cmp("arith.cmpi", "eq", _bcast(low, flat, sq, (1,)), k_idx)
  last = low.op(f"pallas.reduce max "
                f"{es.sel(hit, i_idx, es.c(-1, np.int32)).name} dims [1] : "
                f"{M.tensor_type(sq, np.int32)} -> "
                f"{M.tensor_type((n,), np.int32)}", (n,), np.int32, False)
  # Each written element's new value: the update at `last`, moved by
  # _permute_last's select + sum over the bits.
  vals = low.read(val_atom)
  if vals.dtype != ref.dtype:
    vals = low.convert(vals, ref.dtype)
  vals = _reshape_value(low, low.as_tensor(vals, ishape), (p,))
  src = _bcast(low, low.op(f"pallas.iota 0 : "
                           f"{M.tensor_type((p,), np.int32)}", (p,),
                           np.int32, False), sq, (1,))
  pick = es.cmp("arith.cmpi", "eq", src, _bcast(low, last, sq, (0,)))
  new = _sum_bits(low, vals, pick, sq, (n,))
  el = _Ew(low, last)
  written = el.cmp("arith.cmpi", "sge", last, el.c(0, np.int32))
  shape = tuple(ref.shape)
  old = None
  if not isinstance(out_var, jax_core.DropVar) and out_var in low.used:
    # A swap's old values: each position's element, by the same select +
    # sum.
    whole = _reshape_value(low, _load(low, ref, (), None), (n,))
    ps = (p, n)
    at = low.op(f"pallas.iota 1 : {M.tensor_type(ps, np.int32)}", ps,
                np.int32, False)
    clamped = _reshape_value(low, low.as_tensor(clamped, ishape), (p,))
    hit_old = _Ew(low, at).cmp("arith.cmpi", "eq",
                               _bcast(low, clamped, ps, (0,)), at)
    old = _reshape_value(low, _sum_bits(low, whole, hit_old, ps, (p,)), ishape)
  new = _reshape_value(low, new, shape)
  written = _reshape_value(low, written, shape)
  low.emit(f"pallas.store {ref.name}[], {new.name} mask {written.name} : "
           f"{ref.type}, {new.type}")
  return old


def _bcast(low, v: V, shape, dims):
  """`v` broadcast to `shape`, its dimensions at `dims`."""
  return low.op(f"pallas.broadcast_in_dim {v.name} dims "
                f"[{', '.join(map(str, dims))}] : {v.type} -> "
                f"{M.tensor_type(shape, v.dtype)}", tuple(shape), v.dtype,
                False)


@rule("addupdate")
def _addupdate(low, eqn):
  ref_atom, val, *flat = eqn.invars
  transforms = tree_util.tree_unflatten(eqn.params["tree"], flat)
  if _split_views(transforms)[1]:
    _write_through_views(low, _ref(low, ref_atom), transforms, val, None,
                         accumulate=True)
    return []
  ref = _ref(low, ref_atom)
  old = _load(low, ref, transforms, tuple(val.aval.shape), fit=True)
  v = low.as_tensor(low.read(val), old.shape) if old.shape != () else (
      low.as_scalar(low.read(val)))
  op = "arith.addf" if M.is_float(ref.dtype) else "arith.addi"
  new = low.op(f"{op} {old.name}, {v.name} : {old.type}", old.shape,
               old.dtype, old.scalar)
  idx, _ = index_ref(low, ref, transforms, old.shape)
  low.emit(f"pallas.store {ref.name}{idx}, {new.name}{_fit(idx, True)} : "
           f"{ref.type}, {new.type}")
  return []


@rule("masked_load")
def _masked_load(low, eqn):
  ref_atom, transforms, mask, other = tree_util.tree_unflatten(
      eqn.params["args_tree"], eqn.invars)
  _refuse_views(low, transforms, "a masked load (pl.load)")
  return _load(low, _ref(low, ref_atom), transforms,
               tuple(out_aval(eqn).shape), mask, other,
               eviction_policy=eqn.params.get("eviction_policy"))


@rule("masked_swap")
def _masked_swap(low, eqn):
  ref_atom, transforms, val, mask = tree_util.tree_unflatten(
      eqn.params["args_tree"], eqn.invars)
  _refuse_views(low, transforms, "a masked store (pl.store)")
  return _swap(low, _ref(low, ref_atom), transforms, val, eqn.outvars[0],
               mask)


@rule("atomic_rmw")
def _atomic_rmw(low, eqn):
  ref_atom, transforms, val, mask = tree_util.tree_unflatten(
      eqn.params["args_tree"], eqn.invars)
  _refuse_views(low, transforms, "an atomic")
  kind = str(getattr(eqn.params["atomic_type"], "value",
                     eqn.params["atomic_type"])).lower()
  if kind not in ("add", "max", "min", "and", "or", "xor", "xchg"):
    raise low.error(f"atomic kind '{kind}' is not supported")
  return _swap(low, _ref(low, ref_atom), transforms, val, eqn.outvars[0],
               mask, kind=kind)


@rule("atomic_cas")
def _atomic_cas(low, eqn):
  ref_atom, cmp, val = eqn.invars
  ref = _ref(low, ref_atom)
  shape = tuple(ref.shape)
  c = _store_value(low, cmp, ref, shape)
  v = _store_value(low, val, ref, shape)
  return low.op(f"pallas.atomic_cas {ref.name}[], {c.name}, {v.name} : "
                f"{ref.type}, {v.type}", v.shape, v.dtype, v.scalar)


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------

def _sub_jaxpr(eqn):
  for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
    j = eqn.params.get(key)
    if isinstance(j, (jax_core.ClosedJaxpr, jax_core.Jaxpr)):
      return j
  return None


@rule("pjit", "jit", "closed_call", "core_call", "custom_jvp_call",
      "custom_vjp_call", "custom_vjp_call_jaxpr", "checkpoint", "remat",
      "remat2",
      "named_call", "custom_lin")
def _inline(low, eqn):
  j = _sub_jaxpr(eqn)
  if j is None:
    raise low.error(f"'{eqn.primitive.name}' without a jaxpr to inline")
  args = [low.read(a) for a in eqn.invars]
  n = len(j.jaxpr.invars if isinstance(j, jax_core.ClosedJaxpr) else
          j.invars)
  outs = low.lower_jaxpr(j, args[len(args) - n:] if n < len(args) else args)
  return outs


def _carry(low, v):
  """A value crossing a control-flow boundary: rank 0 as a scalar."""
  if isinstance(v, RefV):
    return v
  return low.as_scalar(v) if v.shape == () else v


def _end_loop_body(low, outs, init):
  """Yields a loop body's carried values `outs`, each of its initial value's
  type in `init`, and closes the body."""
  for o, v in zip(outs, init):
    if o.type != v.type:
      raise low.error(f"loop carry changes type from {v.type} to {o.type}")
  _yield(low, outs)
  low.fn.depth -= 1
  low.emit("}")


def _yield(low, vals):
  vals = [_carry(low, v) for v in vals]
  if vals:
    low.emit(f"scf.yield {', '.join(v.name for v in vals)} : "
             f"{', '.join(v.type for v in vals)}", loc=False)
  else:
    low.emit("scf.yield", loc=False)
  return vals


def _results(low, name, vals):
  if len(vals) == 1:
    return [V(name, vals[0].shape, vals[0].dtype, vals[0].scalar)]
  return [V(f"{name}#{i}", v.shape, v.dtype, v.scalar)
          for i, v in enumerate(vals)]


def _is_increment(jaxpr, out_index, in_var):
  """Whether jaxpr.outvars[out_index] is `in_var + 1`."""
  out = jaxpr.outvars[out_index]
  for e in jaxpr.eqns:
    if out in e.outvars and e.primitive.name == "add":
      a, b = e.invars
      for x, y in ((a, b), (b, a)):
        if x is in_var and isinstance(y, jax_core.Literal) and (
            np.asarray(y.val) == 1):
          return True
  return False


def _for_loop(low, lb: str, ub: str, carries, body, iv_hook=None):
  """scf.for from lb to ub (index values) with `carries` (Vs); `body(iv_i32,
  carried Vs)` lowers the body and returns the yielded values."""
  init = [_carry(low, c) for c in carries]
  iv = low.fn.fresh("iv")
  args = [low.fn.fresh("c") for _ in init]
  st = low.index_const(1)
  res = low.fn.fresh()
  head = f"scf.for {iv} = {lb} to {ub} step {st}"
  if init:
    head += " iter_args(" + ", ".join(
        f"{a} = {c.name}" for a, c in zip(args, init)) + ") -> (" + ", ".join(
            c.type for c in init) + ")"
    head = f"{res}{':' + str(len(init)) if len(init) > 1 else ''} = " + head
  low.emit(head + " {", loc=False)
  low.fn.depth += 1
  ivi = low.fn.fresh()
  low.emit(f"{ivi} = arith.index_cast {iv} : index to i32")
  ivv = V(ivi, (), np.dtype(np.int32), True)
  inner = [V(a, c.shape, c.dtype, c.scalar) for a, c in zip(args, init)]
  outs = body(ivv, inner)
  _end_loop_body(low, [_carry(low, o) for o in outs], init)
  return _results(low, res, init) if init else []


def _pass_lin(low, outer, inner):
  """Iota patterns of the operands a loop or branch closes over (its
  consts) hold for the body's variables too: indexing with them inside
  stays a strided slice instead of a gather."""
  for a, v in zip(outer, inner):
    if isinstance(a, jax_core.Var) and a in low.lin:
      low.lin[v] = low.lin[a]


@rule("scan")
def _scan(low, eqn):
  p = eqn.params
  nc, nk = p["num_consts"], p["num_carry"]
  body = p["jaxpr"]
  _pass_lin(low, eqn.invars[:nc], body.jaxpr.invars[:nc])
  consts = [low.read(a) for a in eqn.invars[:nc]]
  init = [low.read(a) for a in eqn.invars[nc:nc + nk]]
  xs = eqn.invars[nc + nk:]
  length = int(p["length"])
  if xs or len(eqn.outvars) != nk:
    return _unrolled_scan(low, eqn, consts, init, length)
  bj = body.jaxpr
  fori = nk >= 1 and tuple(bj.invars[nc].aval.shape) == () and M.is_int(
      bj.invars[nc].aval.dtype) and _is_increment(bj, 0, bj.invars[nc])
  lb, ub = low.index_const(0), low.index_const(length)
  start = init[0] if fori else None
  carried = init[1:] if fori else init

  def run(iv, inner):
    args = list(consts)
    if fori:
      s = low.convert(low.as_scalar(start), bj.invars[nc].aval.dtype)
      ivc = low.convert(iv, s.dtype)
      cur = low.op(f"arith.addi {s.name}, {ivc.name} : {s.type}", (),
                   s.dtype, True)
      low.lin.pop(bj.invars[nc], None)
      args.append(cur)
    args += inner
    outs = low.lower_jaxpr(body, args)
    return outs[1:] if fori else outs
  res = _for_loop(low, lb, ub, carried, run)
  if fori:
    s = low.as_scalar(start)
    n = low.constant(np.array(length), (), s.dtype)
    final = low.op(f"arith.addi {s.name}, {n.name} : {s.type}", (), s.dtype,
                   True)
    return [final] + res
  return res


# A scan over arrays is unrolled (static slices of xs, the ys stacked): the
# kernel IR's loops carry values, not per-iteration slices of them.
_MAX_UNROLLED_SCAN = 64


def _unrolled_scan(low, eqn, consts, init, length):
  p = eqn.params
  nc, nk = p["num_consts"], p["num_carry"]
  body = p["jaxpr"]
  if length > _MAX_UNROLLED_SCAN:
    raise low.error(
        f"'scan' over arrays of length {length}: pallasc unrolls scans with xs "
        f"or stacked outputs, up to {_MAX_UNROLLED_SCAN} iterations; use "
        "lax.fori_loop with ref indexing for longer ones")
  xs = [low.as_tensor(low.read(a), a.aval.shape) for a in eqn.invars[nc + nk:]]

  def row(v, i):
    """v[i] along the leading axis."""
    rest = v.shape[1:]
    if rest == ():
      idx = low.index_const(i)
      return low.op(f"tensor.extract {v.name}[{idx}] : {v.type}", (),
                    v.dtype, True)
    sl = _extract_slice(low, v, [i] + [0] * len(rest), (1,) + rest)
    return low.op(f"pallas.reshape {sl.name} : {sl.type} -> "
                  f"{M.tensor_type(rest, v.dtype)}", rest, v.dtype, False)
  carry = list(init)
  ys = [[None] * length for _ in eqn.outvars[nk:]]
  order = range(length - 1, -1, -1) if p.get("reverse") else range(length)
  for i in order:
    outs = low.lower_jaxpr(body, consts + carry + [row(x, i) for x in xs])
    carry = outs[:nk]
    for k, y in enumerate(outs[nk:]):
      ys[k][i] = y
  stacked = []
  for var, parts in zip(eqn.outvars[nk:], ys):
    shape, dtype = tuple(var.aval.shape), var.aval.dtype
    ones = [low.as_tensor(y, shape[1:]) for y in parts]
    ones = [low.op(f"pallas.reshape {y.name} : {y.type} -> "
                   f"{M.tensor_type((1,) + shape[1:], dtype)}", (1,) + shape[1:],
                   dtype, False) for y in ones]
    stacked.append(_concat(low, ones, 0, shape, dtype))
  return carry + stacked


@rule("while")
def _while(low, eqn):
  p = eqn.params
  cn, bn = p["cond_nconsts"], p["body_nconsts"]
  cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
  _pass_lin(low, eqn.invars[:cn], cj.jaxpr.invars[:cn])
  _pass_lin(low, eqn.invars[cn:cn + bn], bj.jaxpr.invars[:bn])
  cconsts = [low.read(a) for a in eqn.invars[:cn]]
  bconsts = [low.read(a) for a in eqn.invars[cn:cn + bn]]
  init = [low.read(a) for a in eqn.invars[cn + bn:]]
  cjj, bjj = cj.jaxpr, bj.jaxpr
  # fori_loop with traced bounds: carries (i, upper, ...), body i += 1,
  # cond i < upper -> scf.for from i to upper.
  if (len(init) >= 2 and not cn and len(cjj.eqns) == 1 and
      cjj.eqns[0].primitive.name == "lt" and
      tuple(cjj.eqns[0].invars) == (cjj.invars[0], cjj.invars[1]) and
      cjj.outvars[0] is cjj.eqns[0].outvars[0] and
      M.is_int(cjj.invars[0].aval.dtype) and
      tuple(cjj.invars[0].aval.shape) == () and
      _is_increment(bjj, 0, bjj.invars[bn]) and
      bjj.outvars[1] is bjj.invars[bn + 1]):
    i0, upper = low.as_scalar(init[0]), low.as_scalar(init[1])
    lb, ub = low.to_index(i0), low.to_index(upper)

    def run(iv, inner):
      args = list(bconsts) + [low.convert(iv, i0.dtype), upper] + inner
      outs = low.lower_jaxpr(bj, args)
      return outs[2:]
    res = _for_loop(low, lb, ub, init[2:], run)
    mx = "arith.maxui" if M.is_unsigned(i0.dtype) else "arith.maxsi"
    final = low.op(f"{mx} {i0.name}, {upper.name} : {i0.type}", (), i0.dtype,
                   True)
    return [final, upper] + res
  # A general while loop.
  init = [_carry(low, v) for v in init]
  res = low.fn.fresh()
  before = [low.fn.fresh("w") for _ in init]
  after = [low.fn.fresh("w") for _ in init]
  tys = ", ".join(v.type for v in init)
  head = (f"scf.while ({', '.join(f'{a} = {v.name}' for a, v in zip(before, init))})"
          f" : ({tys}) -> ({tys}) {{")
  if init:
    head = f"{res}{':' + str(len(init)) if len(init) > 1 else ''} = " + head
  low.emit(head, loc=False)
  low.fn.depth += 1
  inner = [V(a, v.shape, v.dtype, v.scalar) for a, v in zip(before, init)]
  (c,) = low.lower_jaxpr(cj, cconsts + inner)
  c = low.as_scalar(c)
  low.emit(f"scf.condition({c.name}) {', '.join(v.name for v in inner)} : "
           f"{tys}", loc=False)
  low.fn.depth -= 1
  low.emit("} do {", loc=False)
  low.emit(f"^bb0({', '.join(f'{a}: {v.type}' for a, v in zip(after, init))}):",
           loc=False)
  low.fn.depth += 1
  inner = [V(a, v.shape, v.dtype, v.scalar) for a, v in zip(after, init)]
  _end_loop_body(low, [_carry(low, o) for o in
                        low.lower_jaxpr(bj, bconsts + inner)], init)
  return _results(low, res, init)


@rule("dim_as_value")
def _dim_as_value(low, eqn):
  """A symbolic dimension used as a value inside the kernel (`col < n`,
  `pl.cdiv(n, 8)` as a loop bound): `pallas.symbol_value` of each symbol,
  combined with `arith` as the dimension expression says."""
  dim = eqn.params["dim"]
  if low.kernel_axes is None:
    raise low.error(
        f"the symbolic dimension '{dim}' is used as a value outside a kernel "
        "body (e.g. in an index map); only a kernel reads a symbol's value")
  dtype = np.dtype(eqn.outvars[0].aval.dtype)
  return _symbolic_value(low, dim, dtype)


def _symbolic_value(low, dim, dtype):
  """`dim` (an int or a JAX dimension expression) as a scalar of `dtype`:
  sums of products of symbols and of floordiv/mod/max/min of expressions
  (JAX's _DimExpr terms and factors), with JAX's floor semantics."""
  ty = M.elem_type(dtype)
  if not jax_core.is_symbolic_dim(dim):
    return low.int_const(int(dim), dtype)

  def binary(op, a, b):
    return low.op(f"arith.{op} {a.name}, {b.name} : {ty}", (), dtype, True)

  def factor(f):
    if f.var is not None:
      return low.op(f'pallas.symbol_value "{f.var}" : {ty}', (), dtype, True)
    ops = {"floordiv": "floordivsi", "max": "maxsi", "min": "minsi"}
    a, b = (_symbolic_value(low, o, dtype) for o in f.operands)
    if f.operation in ops:
      return binary(ops[f.operation], a, b)
    if f.operation == "mod":
      # JAX's mod has the divisor's sign: a - b * floordiv(a, b).
      q = binary("floordivsi", a, b)
      return binary("subi", a, binary("muli", b, q))
    raise low.error(f"the symbolic dimension '{dim}' uses "
                    f"'{f.operation}', which pallasc-export cannot compute "
                    "inside a kernel")

  acc = None
  for term, coeff in dim._sorted_terms:
    v = None
    for f, exp in term._factors:
      fv = factor(f)
      for _ in range(exp):
        v = fv if v is None else binary("muli", v, fv)
    if v is None:
      v = low.int_const(int(coeff), dtype)
    elif coeff != 1:
      v = binary("muli", v, low.int_const(int(coeff), dtype))
    acc = v if acc is None else binary("addi", acc, v)
  return acc


@rule("run_scoped")
def _run_scoped(low, eqn):
  p = eqn.params
  if p.get("collective_axes"):
    raise low.error("'run_scoped' with collective_axes (an allocation shared "
                    "across programs) is not supported")
  if any(p.get("ref_transforms") or ()):
    raise low.error("'run_scoped' of transformed refs is not supported")
  if low.scoped_scratch is None:
    raise low.error("'run_scoped' outside a kernel body is not supported")
  jaxpr = p["jaxpr"]
  refs = [low.scoped_scratch(v.aval) for v in jaxpr.invars]
  consts = [low.read(a) for a in eqn.invars]
  return low.lower_jaxpr(jaxpr, refs, consts)


@rule("cond")
def _cond(low, eqn):
  branches = eqn.params["branches"]
  idx_atom, *ops = eqn.invars
  for b in branches:
    _pass_lin(low, ops, b.jaxpr.invars)
  args = [low.read(a) for a in ops]
  avals = [v.aval for v in eqn.outvars]
  res = low.fn.fresh()

  def types_of(vals):
    return [v.type for v in vals]

  out_types = [M.value_type(a.shape, a.dtype, a.shape == ()) for a in avals]
  head_res = ""
  if avals:
    head_res = f"{res}{':' + str(len(avals)) if len(avals) > 1 else ''} = "
  rt = f" -> ({', '.join(out_types)})" if avals else ""

  def branch(j):
    low.fn.depth += 1
    outs = low.lower_jaxpr(j, args)
    ys = [_carry(low, o) for o in outs]
    for y, t in zip(ys, out_types):
      if y.type != t:
        raise low.error(f"cond branch yields {y.type}, expected {t}")
    _yield(low, ys)
    low.fn.depth -= 1

  if len(branches) == 2:
    if idx_atom in low.bool_src:
      c = low.as_scalar(low.bool_src[idx_atom])
    else:
      iv = low.as_scalar(low.read(idx_atom))
      zero = low.constant(np.array(0), (), iv.dtype)
      c = low.op(f"arith.cmpi sgt, {iv.name}, {zero.name} : {iv.type}", (),
                 np.bool_, True)
    low.emit(f"{head_res}scf.if {c.name}{rt} {{", loc=False)
    branch(branches[1])
    low.emit("} else {", loc=False)
    branch(branches[0])
    low.emit("}")
  elif len(branches) == 1:
    return low.lower_jaxpr(branches[0], args)
  else:
    # lax.switch: the index clamped into range, then a chain of scf.if
    # (the GPU lowering has no scf.index_switch).
    iv = low.as_scalar(low.read(idx_atom))
    lo = low.constant(np.array(0), (), iv.dtype)
    hi = low.constant(np.array(len(branches) - 1), (), iv.dtype)
    t = low.op(f"arith.maxsi {iv.name}, {lo.name} : {iv.type}", (), iv.dtype,
               True)
    t = low.op(f"arith.minsi {t.name}, {hi.name} : {iv.type}", (), iv.dtype,
               True)

    def chain(k, head):
      ck = low.constant(np.array(k), (), iv.dtype)
      c = low.op(f"arith.cmpi eq, {t.name}, {ck.name} : {iv.type}", (),
                 np.bool_, True)
      low.emit(f"{head}scf.if {c.name}{rt} {{", loc=False)
      branch(branches[k])
      low.emit("} else {", loc=False)
      if k + 1 == len(branches) - 1:
        branch(branches[k + 1])
        low.emit("}")
        return
      inner = low.fn.fresh()
      low.fn.depth += 1
      chain(k + 1, f"{inner}{':' + str(len(avals)) if len(avals) > 1 else ''} = "
            if avals else "")
      if avals:
        rs = _results(low, inner, [V("", a.shape, a.dtype, a.shape == ())
                                   for a in avals])
        _yield(low, rs)
      else:
        low.emit("scf.yield", loc=False)
      low.fn.depth -= 1
      low.emit("}")
    chain(0, head_res)
  if not avals:
    return []
  return _results(low, res, [V("", a.shape, a.dtype, a.shape == ())
                             for a in avals])


# ---------------------------------------------------------------------------
# TPU local semaphores
# ---------------------------------------------------------------------------

def _semaphore_operand(low, eqn, sem, transforms):
  """(ref, indexer text) of the one semaphore `sem.at[...]` picks."""
  name = eqn.primitive.name
  ref = _ref(low, sem)
  if ref.space != "semaphore":
    raise low.error(f"'{name}' needs a semaphore ref "
                    "(pltpu.SemaphoreType.REGULAR scratch), got a ref in "
                    f"memory space '{ref.space}'")
  idx, shape = index_ref(low, ref, transforms, None)
  if shape != ():
    raise low.error(f"'{name}' needs one semaphore (sem.at[i]), got a slice "
                    f"of shape {shape}")
  return ref, idx


@rule("semaphore_signal", "semaphore_wait", "semaphore_read")
def _semaphore(low, eqn):
  name = eqn.primitive.name
  args = tree_util.tree_unflatten(eqn.params["args_tree"], eqn.invars)
  if name == "semaphore_read":
    sem, transforms = args
    ref, idx = _semaphore_operand(low, eqn, sem, transforms)
    return low.op(f"pallas.semaphore_read {ref.name}{idx} : {ref.type} -> "
                  "i32", (), np.int32, True)
  if name == "semaphore_signal":
    sem, transforms, value, device_id, core_index = args
    if core_index is not None:
      raise low.error("'semaphore_signal' with core_index (a signal to "
                      "another core) is not supported; pallasc compiles "
                      "signals to this core or (with device_id) to another "
                      "device")
    if device_id is not None:
      dev = _logical_device(low, device_id, eqn.params["device_id_type"])
      ref, idx = _semaphore_operand(low, eqn, sem, transforms)
      v = low.as_scalar(low.convert(low.read(value), np.int32))
      low.emit(f"pallas.remote_semaphore_signal {ref.name}{idx}, {v.name}, "
               f"{dev.name} : {ref.type}")
      return []
  else:
    sem, transforms, value, decrement = args
    if isinstance(decrement, jax_core.Literal):
      decrement = decrement.val
    if not isinstance(decrement, (bool, np.bool_)):
      raise low.error("'semaphore_wait' with a traced decrement is not "
                      "supported")
    if not decrement:
      raise low.error("'semaphore_wait' with decrement=False is not "
                      "supported (Pallas' TPU lowering has no "
                      "non-decrementing wait)")
  ref, idx = _semaphore_operand(low, eqn, sem, transforms)
  v = low.as_scalar(low.convert(low.read(value), np.int32))
  op = "pallas.semaphore_signal" if name == "semaphore_signal" else (
      "pallas.semaphore_wait")
  low.emit(f"{op} {ref.name}{idx}, {v.name} : {ref.type}")
  return []


# ---------------------------------------------------------------------------
# TPU DMAs
# ---------------------------------------------------------------------------

def _dma_operand(low, x, what):
  """A DMA operand: a ref (or a TransformedRef of one) -> (ref, indexer)."""
  from jax._src.state.types import TransformedRef
  if isinstance(x, TransformedRef):
    ref, transforms = _ref(low, x.ref), x.transforms
  else:
    ref, transforms = _ref(low, x), ()
  idx, shape = index_ref(low, ref, transforms, None)
  return ref, idx, shape


@rule("dma_start", "dma_wait")
def _dma(low, eqn):
  args = tree_util.tree_unflatten(eqn.params["tree"], eqn.invars)
  if len(args) != 5:
    raise low.error(f"'{eqn.primitive.name}' with operands {args} is not "
                    "supported")
  src, dst, sem, src_sem, device_id = args
  if device_id is not None:
    return _remote_dma(low, eqn, src, dst, sem, src_sem, device_id)
  if src_sem is not None:
    raise low.error(f"'{eqn.primitive.name}' with a source semaphore and no "
                    "device id is not supported")
  if eqn.params.get("add"):
    raise low.error(f"'{eqn.primitive.name}' with add=True is not supported")
  if eqn.params.get("priority", 0):
    raise low.error(f"'{eqn.primitive.name}' with priority="
                    f"{eqn.params['priority']} is not supported")
  s, si, _ = _dma_operand(low, src, "source")
  d, di, _ = _dma_operand(low, dst, "destination")
  m, mi, mshape = _dma_operand(low, sem, "semaphore")
  if mshape != ():
    raise low.error(f"'{eqn.primitive.name}' needs one semaphore "
                    f"(sem.at[i]), got a slice of shape {mshape}")
  if m.space != "semaphore":
    raise low.error(f"'{eqn.primitive.name}' semaphore is in memory space "
                    f"'{m.space}', expected a semaphore")
  op = "pallas.dma_start" if eqn.primitive.name == "dma_start" else (
      "pallas.dma_wait")
  low.emit(f"{op} {s.name}{si}, {d.name}{di}, {m.name}{mi} : {s.type}, "
           f"{d.type}, {m.type}")
  return []


# ---------------------------------------------------------------------------
# Multi-device TPU kernels: this device's id, the barrier semaphore, remote
# signals and copies (under shard_map, on the mesh's axes)
# ---------------------------------------------------------------------------

def _mesh_axes(low, what):
  """(axis names, axis sizes) of the shard_map mesh around the kernel."""
  if low.mesh is None:
    raise low.error(f"{what} needs the kernel to run under jax.shard_map "
                    "(a mesh gives the device axes); this pallas_call is not "
                    "inside one")
  names = tuple(low.mesh.axis_names)
  return names, tuple(int(low.mesh.shape[n]) for n in names)


def _scalar_op(low, op, a, b):
  return low.op(f"{op} {a.name}, {b.name} : i32", (), np.int32, True)


@rule("axis_index")
def _axis_index(low, eqn):
  # As Pallas' TPU lowering: (device id / product of the minor axes' sizes)
  # % the axis' size.
  name = eqn.params["axis_name"]
  if isinstance(name, (tuple, list)):
    if len(name) != 1:
      raise low.error(f"'axis_index' over several axes {tuple(name)} is not "
                      "supported")
    name = name[0]
  names, sizes = _mesh_axes(low, f"'axis_index' of axis {name!r}")
  if name not in names:
    raise low.error(f"'axis_index' of axis {name!r}, which is not an axis of "
                    f"the shard_map mesh {names}")
  i = names.index(name)
  dev = low.op("pallas.device_id : i32", (), np.int32, True)
  q = _scalar_op(low, "arith.divsi", dev,
                 low.int_const(int(np.prod(sizes[i + 1:], dtype=np.int64))))
  return _scalar_op(low, "arith.remsi", q, low.int_const(sizes[i]))


def _logical_device(low, device_id, device_id_type):
  """The logical device id (an i32 scalar) of a device_id, as Pallas'
  device_id_to_logical: mesh coordinates times the mesh's row-major
  strides, or the id itself for DeviceIdType.LOGICAL."""
  kind = str(getattr(device_id_type, "name", device_id_type)).upper()
  if isinstance(device_id, dict):
    raise low.error("a device id given as a dict of mesh axes is not "
                    "supported; give the mesh coordinates as a tuple")
  leaves = tree_util.tree_leaves(device_id)
  read = lambda a: low.as_scalar(low.convert(low.read(a), np.int32))
  if kind == "LOGICAL":
    if len(leaves) != 1:
      raise low.error(f"a LOGICAL device id is one integer, got {len(leaves)}")
    return read(leaves[0])
  names, sizes = _mesh_axes(low, "a device id in mesh coordinates")
  if len(leaves) != len(sizes):
    raise low.error(f"a device id has {len(leaves)} mesh coordinates; the "
                    f"shard_map mesh {names} has {len(sizes)} axes")
  acc = low.int_const(0)
  for k, leaf in enumerate(leaves):
    stride = int(np.prod(sizes[k + 1:], dtype=np.int64))
    term = _scalar_op(low, "arith.muli", read(leaf), low.int_const(stride))
    acc = _scalar_op(low, "arith.addi", acc, term)
  return acc


@rule("get_barrier_semaphore")
def _barrier_semaphore(low, eqn):
  r = RefV(low.fn.fresh("barrier"), (), np.dtype(np.int32), "semaphore")
  low.emit(f"{r.name} = pallas.barrier_semaphore : {r.type}")
  return r


def _remote_dma(low, eqn, src, dst, sem, src_sem, device_id):
  """pltpu.make_async_remote_copy's start, and its wait_send / wait_recv."""
  name = eqn.primitive.name
  if eqn.params.get("add"):
    raise low.error(f"'{name}' with add=True is not supported")
  if eqn.params.get("priority", 0):
    raise low.error(f"'{name}' with priority={eqn.params['priority']} is not "
                    "supported")
  dev = _logical_device(low, device_id, eqn.params["device_id_type"])
  s, si, _ = _dma_operand(low, src, "source")
  d, di, _ = _dma_operand(low, dst, "destination")
  sems = [sem] + ([src_sem] if name == "dma_start" else [])
  ops = []
  for x in sems:
    m, mi, mshape = _dma_operand(low, x, "semaphore")
    if mshape != () or m.space != "semaphore":
      raise low.error(f"'{name}' needs one semaphore (sem.at[i]) of a "
                      "semaphore scratch ref")
    ops.append((m, mi))
  refs = ", ".join(f"{m.name}{mi}" for m, mi in ops)
  types = ", ".join(m.type for m, _ in ops)
  if name == "dma_start":
    low.emit(f"pallas.remote_dma_start {s.name}{si}, {d.name}{di}, {refs}, "
             f"{dev.name} : {s.type}, {d.type}, {types}")
  else:
    # wait_send swaps source and target and waits on the send semaphore.
    kind = "send " if eqn.params.get("insert_dummy_device") else ""
    low.emit(f"pallas.remote_dma_wait {kind}{s.name}{si}, {d.name}{di}, "
             f"{refs}, {dev.name} : {s.type}, {d.type}, {types}")
  return []
