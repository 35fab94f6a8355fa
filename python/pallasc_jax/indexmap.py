"""Index maps: an affine expression when the map is affine in the grid
indices, else a `func.func` of the kernel module (which may read the
scalar-prefetch refs)."""

from __future__ import annotations

import numpy as np

from jax._src import core as jax_core

from . import mlir as M
from .lowering import Function, Lowering, RefV, V


class NotAffine(Exception):
  pass


class Aff:
  """An affine expression over d0..dn: text, and whether it is provably
  non-negative (so that JAX's truncating div/rem equal floordiv/mod)."""

  def __init__(self, text, nonneg, const=None):
    self.text, self.nonneg, self.const = text, nonneg, const

  @staticmethod
  def of_const(c):
    c = int(c)
    return Aff(str(c) if c >= 0 else f"-{-c}", c >= 0, c)


def _paren(a: Aff) -> str:
  return a.text if a.const is not None or a.text.isidentifier() else (
      f"({a.text})")


def _affine_eval(jaxpr, env):
  for eqn in jaxpr.eqns:
    name = eqn.primitive.name

    def get(atom):
      if isinstance(atom, jax_core.Literal):
        v = np.asarray(atom.val)
        if v.shape != () or not np.issubdtype(v.dtype, np.integer):
          raise NotAffine()
        return Aff.of_const(int(v))
      if atom not in env:
        raise NotAffine()
      return env[atom]
    if name in ("pjit", "jit", "closed_call"):
      sub = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
      sj = sub.jaxpr if isinstance(sub, jax_core.ClosedJaxpr) else sub
      if isinstance(sub, jax_core.ClosedJaxpr) and sub.consts:
        raise NotAffine()
      inner = {v: get(a) for v, a in zip(sj.invars, eqn.invars)}
      outs = _affine_eval(sj, inner)
      for o, r in zip(eqn.outvars, outs):
        env[o] = r
      continue
    if len(eqn.outvars) != 1:
      raise NotAffine()
    out = eqn.outvars[0]
    if tuple(out.aval.shape) != () or not np.issubdtype(out.aval.dtype,
                                                        np.integer):
      raise NotAffine()
    args = [get(a) for a in eqn.invars]
    if name == "convert_element_type":
      if not np.issubdtype(eqn.params["new_dtype"], np.signedinteger):
        raise NotAffine()
      env[out] = args[0]
    elif name in ("add", "sub"):
      a, b = args
      if a.const is not None and b.const is not None:
        env[out] = Aff.of_const(a.const + b.const if name == "add" else
                                a.const - b.const)
      elif b.const == 0:
        env[out] = a
      elif a.const == 0 and name == "add":
        env[out] = b
      else:
        op = "+" if name == "add" else "-"
        env[out] = Aff(f"{a.text} {op} {_paren(b)}",
                       a.nonneg and b.nonneg and name == "add")
    elif name == "mul":
      a, b = args
      if a.const is None and b.const is None:
        raise NotAffine()
      if a.const is not None and b.const is not None:
        env[out] = Aff.of_const(a.const * b.const)
        continue
      c, x = (a, b) if a.const is not None else (b, a)
      if c.const == 1:
        env[out] = x
      elif c.const == 0:
        env[out] = Aff.of_const(0)
      else:
        env[out] = Aff(f"{_paren(x)} * {c.text if c.const >= 0 else '(' + c.text + ')'}",
                       x.nonneg and c.const >= 0)
    elif name in ("div", "rem"):
      a, b = args
      if b.const is None or b.const <= 0 or not a.nonneg:
        raise NotAffine()
      if a.const is not None:
        env[out] = Aff.of_const(a.const // b.const if name == "div" else
                                a.const % b.const)
      else:
        op = "floordiv" if name == "div" else "mod"
        env[out] = Aff(f"{_paren(a)} {op} {b.const}", True)
    elif name == "neg":
      (a,) = args
      if a.const is None:
        raise NotAffine()
      env[out] = Aff.of_const(-a.const)
    else:
      raise NotAffine()
  return [env[o] if not isinstance(o, jax_core.Literal) else
          Aff.of_const(int(np.asarray(o.val))) for o in jaxpr.outvars]


def affine_map(closed, num_grid: int):
  """The index map as `(d0, d1, ...) -> (e0, ...)`, or None if it is not
  affine in the grid indices (or reads scalar-prefetch refs)."""
  jaxpr = closed.jaxpr
  if closed.consts:
    return None
  env = {}
  names = [f"d{i}" for i in range(num_grid)]
  for i, v in enumerate(jaxpr.invars[:num_grid]):
    env[v] = Aff(names[i], True)
  try:
    outs = _affine_eval(jaxpr, env)
  except NotAffine:
    return None
  return f"({', '.join(names)}) -> ({', '.join(o.text for o in outs)})"


def index_map_func(closed, name: str, num_grid: int, prefetch_types,
                   counter, locs, where_loc: str) -> list[str]:
  """A `func.func` computing the index map (grid indices i32, then the
  scalar-prefetch refs) -> one i32 per array dimension."""
  jaxpr = closed.jaxpr
  fn = Function(counter)
  low = Lowering(fn, locs, kernel_axes=None)
  low.loc = where_loc
  args = []
  sig = []
  for i, v in enumerate(jaxpr.invars):
    nm = f"%g{i}" if i < num_grid else f"%s{i - num_grid}"
    if i < num_grid:
      a = V(nm, (), np.dtype(np.int32), True)
      sig.append(f"{nm}: i32 loc({where_loc})")
    else:
      shape, dtype, space = prefetch_types[i - num_grid]
      a = RefV(nm, tuple(shape), np.dtype(dtype), space)
      sig.append(f"{nm}: {a.type} loc({where_loc})")
    args.append(a)
  outs = low.lower_jaxpr(closed, args)
  rets = []
  for o in outs:
    o = low.as_scalar(o)
    rets.append(low.convert(o, np.int32))
  low.loc = where_loc
  low.emit(f"return {', '.join(r.name for r in rets)} : "
           f"{', '.join('i32' for _ in rets)}")
  head = (f"func.func @{name}({', '.join(sig)}) -> "
          f"({', '.join('i32' for _ in rets)}) {{")
  return [head] + fn.lines + [f"}} loc({where_loc})"]
