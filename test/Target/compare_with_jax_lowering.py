#!/usr/bin/env python3
"""Compares pallasc's TPU modules with what JAX's own Pallas lowering writes.

For each kernel pallasc compiled (a <name>.tpu.mlirbc + <name>.tpu.json in
the directories given) that this script knows a JAX equivalent of (the
examples/ kernels and lit/Target/Inputs/ kernels, written with jax.experimental
.pallas below), it exports the JAX version for TPU (jax.export works without a
TPU), takes the Mosaic module and backend config out of JAX's tpu_custom_call
and checks that pallasc wrote the same:
  - Mosaic IR version,
  - kernel signature (grid indices, SMEM/VMEM memrefs, scratch),
  - kernel attributes (dimension_semantics, iteration_bounds, scalar_prefetch,
    scratch_operands, tpu.core_type, window_params),
  - transform function signatures,
  - backend config fields other than the body,
  - the custom call's extra operands where the manifest is beside the module:
    the dynamic grid bounds before the inputs and, for results with symbolic
    dimensions, the shape operands after them.
Dynamic iteration bounds (symbolic or "dynamic" grid entries) print as `?`.
Kernel bodies are compared as multisets of op names and only reported.

Prints "SKIP:" and exits 0 without jax.
"""

import argparse
import base64
import collections
import json
import os
import re
import sys


def jax_kernels():
  import jax
  import jax.numpy as jnp
  from jax import lax
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu

  S = jax.ShapeDtypeStruct
  f32, bf16, f16, i32 = jnp.float32, jnp.bfloat16, jnp.float16, jnp.int32
  kernels = {}

  def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]
  add_spec = pl.BlockSpec((32, 256), lambda i, j: (i, j))
  kernels["add"] = (lambda x, y: pl.pallas_call(
      add_kernel, grid=(32, 8), in_specs=[add_spec, add_spec],
      out_specs=add_spec,
      out_shape=S((1024, 2048), f32),
      cost_estimate=pl.CostEstimate(flops=2097152, bytes_accessed=25165824,
                                    transcendentals=0))(x, y),
      [S((1024, 2048), f32), S((1024, 2048), f32)])

  def matmul_kernel(a_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
      acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...],
                            preferred_element_type=jnp.float32)
    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
      o_ref[...] = acc_ref[...]
  kernels["matmul"] = (lambda a, b: pl.pallas_call(
      matmul_kernel, grid=(8, 8, 4),
      in_specs=[pl.BlockSpec((128, 128), lambda m, n, k: (m, k)),
                pl.BlockSpec((128, 128), lambda m, n, k: (k, n))],
      out_specs=pl.BlockSpec((128, 128), lambda m, n, k: (m, n)),
      scratch_shapes=[pltpu.VMEM((128, 128), f32)],
      compiler_params=pltpu.CompilerParams(
          dimension_semantics=("parallel", "parallel", "arbitrary")),
      cost_estimate=pl.CostEstimate(flops=1073741824, bytes_accessed=6291456,
                                    transcendentals=0),
      out_shape=S((1024, 1024), f32))(a, b),
      [S((1024, 512), bf16), S((512, 1024), bf16)])

  def layernorm_kernel(x_ref, w_ref, b_ref, o_ref, *, eps=1e-5):
    x = x_ref[...]
    mean = jnp.sum(x, axis=1) / 1024
    xc = x - mean[:, None]
    var = jnp.sum(xc * xc, axis=1) / 1024
    rstd = lax.rsqrt(var + eps)
    o_ref[...] = xc * rstd[:, None] * w_ref[...][None, :] + b_ref[...][None, :]
  kernels["layernorm"] = (lambda x, w, b: pl.pallas_call(
      layernorm_kernel, grid=(512,),
      in_specs=[pl.BlockSpec((8, 1024), lambda i: (i, 0)),
                pl.BlockSpec((1024,), lambda i: (0,)),
                pl.BlockSpec((1024,), lambda i: (0,))],
      out_specs=pl.BlockSpec((8, 1024), lambda i: (i, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
      cost_estimate=pl.CostEstimate(flops=33554432, bytes_accessed=33562624,
                                    transcendentals=4096),
      out_shape=S((4096, 1024), f32))(x, w, b),
      [S((4096, 1024), f32), S((1024,), f32), S((1024,), f32)])

  def mha_kernel(q_ref, k_ref, v_ref, o_ref, *, sm_scale=0.125, block_k=128):
    q = q_ref[...]
    m_i = jnp.full((128,), -jnp.inf, jnp.float32)
    l_i = jnp.zeros((128,), jnp.float32)
    acc = jnp.zeros((128, 64), jnp.float32)
    def body(kb, carry):
      acc, m_prev, l_prev = carry
      start = pl.multiple_of(kb * block_k, block_k)
      k = k_ref[pl.ds(start, block_k), :]
      v = v_ref[pl.ds(start, block_k), :]
      s = lax.dot_general(q, k, (((1,), (1,)), ((), ())),
                          preferred_element_type=jnp.float32) * sm_scale
      m_next = jnp.maximum(m_prev, jnp.max(s, axis=1))
      alpha = jnp.exp(m_prev - m_next)
      p = jnp.exp(s - m_next[:, None])
      l_next = alpha * l_prev + jnp.sum(p, axis=1)
      acc = acc * alpha[:, None] + jnp.dot(p.astype(v.dtype), v,
                                           preferred_element_type=jnp.float32)
      return acc, m_next, l_next
    acc, m_i, l_i = lax.fori_loop(0, 1024 // block_k, body, (acc, m_i, l_i))
    o_ref[...] = (acc / l_i[:, None]).astype(o_ref.dtype)
  kernels["flash_attention"] = (lambda q, k, v: pl.pallas_call(
      mha_kernel, grid=(8, 8),
      in_specs=[pl.BlockSpec((None, 128, 64), lambda b, i: (b, i, 0)),
                pl.BlockSpec((None, 1024, 64), lambda b, i: (b, 0, 0)),
                pl.BlockSpec((None, 1024, 64), lambda b, i: (b, 0, 0))],
      out_specs=pl.BlockSpec((None, 128, 64), lambda b, i: (b, i, 0)),
      compiler_params=pltpu.CompilerParams(
          dimension_semantics=("parallel", "parallel")),
      cost_estimate=pl.CostEstimate(flops=2147483648, bytes_accessed=4194304,
                                    transcendentals=8388608),
      out_shape=S((8, 1024, 64), f16))(q, k, v),
      [S((8, 1024, 64), f16)] * 3)

  def softmax_rows_kernel(x_ref, o_ref):
    cols = lax.broadcasted_iota(jnp.int32, (8, 1024), 1)
    mask = cols < 1000
    x = jnp.where(mask, x_ref[...], -jnp.inf)
    e = jnp.exp(x - jnp.max(x, axis=1)[:, None])
    pltpu.store(o_ref.at[pl.ds(0, 8), pl.ds(0, 1024)],
                e / jnp.sum(e, axis=1)[:, None], mask=mask)
  rows_spec = pl.BlockSpec((8, 1024), lambda i: (i, 0))
  kernels["softmax_rows"] = (lambda x: pl.pallas_call(
      softmax_rows_kernel, grid=(512,), in_specs=[rows_spec],
      out_specs=rows_spec,
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",),
                                           vmem_limit_bytes=33554432),
      cost_estimate=pl.CostEstimate(flops=16384000, bytes_accessed=32768000,
                                    transcendentals=4096000),
      out_shape=S((4096, 1000), f32))(x), [S((4096, 1000), f32)])

  def gather_blocks_kernel(idx_ref, rows_ref, o_ref):
    b = idx_ref[pl.program_id(0)]
    o_ref[...] = rows_ref[...] + b.astype(jnp.float32)
  gs = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1, grid=(16,),
      in_specs=[pl.BlockSpec((8, 512), lambda i, idx_ref: (idx_ref[i], 0))],
      out_specs=pl.BlockSpec((8, 512), lambda i, idx_ref: (i, 0)))
  kernels["gather_blocks"] = (lambda idx, t: pl.pallas_call(
      gather_blocks_kernel, grid_spec=gs,
      compiler_params=pltpu.CompilerParams(has_side_effects=True),
      out_shape=S((128, 512), f32))(idx, t),
      [S((16,), i32), S((256, 512), f32)])

  def scale_kernel(x_ref, o_ref):
    s = pl.program_id(0) + pl.num_programs(0)
    o_ref[...] = x_ref[...] * s.astype(jnp.float32)
  kernels["vmap_scale"] = (jax.vmap(lambda x: pl.pallas_call(
      scale_kernel, grid=(4,),
      in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
      out_shape=S((32, 128), f32))(x)), [S((3, 32, 128), f32)])

  def dma_rows_kernel(x_hbm, o_ref, buf, sem):
    i = pl.program_id(0)
    copy = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 8)], buf, sem.at[0])
    copy.start()
    copy.wait()
    o_ref[...] = buf[...] * 2
  kernels["dma_rows"] = (lambda x: pl.pallas_call(
      dma_rows_kernel, grid=(4,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
      scratch_shapes=[pltpu.VMEM((8, 128), f32),
                      pltpu.SemaphoreType.DMA((2,))],
      out_shape=S((32, 128), f32))(x), [S((32, 128), f32)])
  # Symbolic shapes (jax.export.symbolic_shape): dynamic iteration bounds
  # passed as the custom call's leading operands, the results' shapes as
  # trailing shape operands.
  from jax import export
  n, m = export.symbolic_shape("n, m")

  def rmsnorm_kernel(x_ref, w_ref, o_ref):
    x = x_ref[...]
    r = lax.rsqrt(jnp.sum(x * x, axis=1) / 128 + 1e-6)
    o_ref[...] = x * r[:, None] * w_ref[...][None, :]
  kernels["rmsnorm_sym"] = (lambda x, w: pl.pallas_call(
      rmsnorm_kernel, grid=(pl.cdiv(x.shape[0], 8),),
      in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0)),
                pl.BlockSpec((128,), lambda i: (0,))],
      out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
      out_shape=S(x.shape, f32))(x, w),
      [S((n, 128), f32), S((128,), f32)])

  def scale_sym_kernel(x_ref, o_ref):
    s = pl.program_id(0) + pl.num_programs(0) + pl.num_programs(1)
    o_ref[...] = x_ref[...] * s.astype(jnp.float32)
  kernels["scale_sym"] = (lambda x: pl.pallas_call(
      scale_sym_kernel, grid=(x.shape[0] // 8, pl.cdiv(x.shape[1], 128)),
      in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j))],
      out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, j)),
      compiler_params=pltpu.CompilerParams(
          dimension_semantics=("parallel", "arbitrary")),
      out_shape=S(x.shape, f32))(x), [S((n, m), f32)])
  return kernels


def jax_export_call(fn, args):
  """JAX's (Mosaic bytecode, backend config, custom call operands) for a
  pallas_call. The operands: {"dynamic_grid_bounds": the leading i32
  operands, "shape_operands": the trailing result shapes}."""
  import jax
  exported = jax.export.export(jax.jit(fn), platforms=["tpu"])(*args)
  text = exported.mlir_module()
  m = re.search(r'backend_config = "((?:[^"\\]|\\.)*)"', text)
  raw = re.sub(r"\\([0-9A-Fa-f]{2})", lambda h: chr(int(h.group(1), 16)),
               m.group(1))
  config = json.loads(raw)
  body = base64.b64decode(config["custom_call_config"].pop("body"))
  call = re.search(r"stablehlo\.custom_call @tpu_custom_call\(([^)]*)\)",
                   text)
  num_operands = len([o for o in call.group(1).split(",") if o.strip()])
  shapes = re.search(r"indices_of_shape_operands = dense<([^>]*)>", text)
  num_shapes = 0
  if shapes:
    num_shapes = len(json.loads("[" + shapes.group(1) + "]"))
  operands = {
      "dynamic_grid_bounds": num_operands - num_shapes - len(args),
      "shape_operands": num_shapes,
  }
  return body, config, operands


def jax_artifacts(fn, args):
  """JAX's (Mosaic bytecode, backend config) for a pallas_call."""
  body, config, _ = jax_export_call(fn, args)
  return body, config


def manifest_operands(launch):
  """The custom call operands pallasc's manifest describes, as
  jax_export_call counts them."""
  return {
      "dynamic_grid_bounds": launch["num_dynamic_grid_bounds"],
      "shape_operands": len(launch.get("result_shape_operands", [])),
  }


def describe(body):
  """The comparable parts of a serialized Mosaic module."""
  from jax._src.interpreters import mlir as jax_mlir
  from jax._src.lib.mlir import ir, passmanager
  from jaxlib.mosaic.python import tpu
  ctx = jax_mlir.make_ir_context()
  tpu.register_dialect(ctx)
  ctx.allow_unregistered_dialects = True
  with ctx:
    module = ir.Module.parse(body)
    version = ir.IntegerAttr(
        module.operation.attributes["stable_mosaic.version"]).value
    passmanager.PassManager.parse(
        "builtin.module(mosaic-serde{serialize=false})").run(module.operation)
    out = {"version": version, "transforms": {}, "kernel": None}
    for op in module.body.operations:
      name = ir.StringAttr(op.attributes["sym_name"]).value
      ftype = str(op.attributes["function_type"])
      if name.startswith("transform_"):
        out["transforms"][name] = ftype
        continue
      attrs = {}
      for i in range(len(op.attributes)):
        a = op.attributes[i]
        if a.name not in ("sym_name", "function_type"):
          attrs[a.name] = str(a.attr)
      # A dynamic iteration bound (a symbolic or "dynamic" grid entry) is
      # MLIR's dynamic size; shown as `?`, as memref types show theirs.
      if "iteration_bounds" in attrs:
        attrs["iteration_bounds"] = attrs["iteration_bounds"].replace(
            str(-2**63), "?")
      ops = collections.Counter()
      def walk(o):
        for region in o.regions:
          for block in region.blocks:
            for inner in block.operations:
              ops[inner.operation.name] += 1
              walk(inner.operation)
      walk(op.operation)
      out["kernel"] = {"type": ftype, "attrs": attrs, "ops": ops}
    return out


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("dirs", nargs="+", help="pallasc output directories")
  args = parser.parse_args()
  try:
    import jax  # noqa: F401
    from jax._src.pallas.mosaic import tpu_info
  except Exception as e:
    print(f"SKIP: jax is not installed ({e}); pip install jax to compare with "
          "JAX's Pallas TPU lowering")
    return 0
  # Rank-1 block checks ask for the TPU's tiling; without a TPU attached,
  # use a v5e's (8 sublanes, 128 lanes, as every TPU generation).
  info = tpu_info.get_tpu_info_for_chip(tpu_info.ChipVersion.TPU_V5E, 1)
  tpu_info.get_tpu_info = lambda: info

  kernels = jax_kernels()
  failed = compared = 0
  for d in args.dirs:
    for f in sorted(os.listdir(d)):
      if not f.endswith(".tpu.mlirbc"):
        continue
      name = f[: -len(".tpu.mlirbc")]
      if name not in kernels:
        print(f"{name}: no JAX equivalent here, not compared")
        continue
      compared += 1
      ours_body = open(os.path.join(d, f), "rb").read()
      ours_config = json.load(open(os.path.join(d, name + ".tpu.json")))
      ours_config["custom_call_config"].pop("body")
      jax_body, jax_config, jax_operands = jax_export_call(*kernels[name])
      ours, theirs = describe(ours_body), describe(jax_body)
      diffs = []
      if ours["version"] != theirs["version"]:
        diffs.append(f"version {ours['version']} vs JAX {theirs['version']}")
      if ours["kernel"]["type"] != theirs["kernel"]["type"]:
        diffs.append(f"kernel type\n    ours {ours['kernel']['type']}\n"
                     f"    jax  {theirs['kernel']['type']}")
      for key in sorted(set(ours["kernel"]["attrs"]) |
                        set(theirs["kernel"]["attrs"])):
        a = ours["kernel"]["attrs"].get(key)
        b = theirs["kernel"]["attrs"].get(key)
        if a != b:
          diffs.append(f"attribute {key}\n    ours {a}\n    jax  {b}")
      if ours["transforms"] != theirs["transforms"]:
        diffs.append(f"transform functions\n    ours {ours['transforms']}\n"
                     f"    jax  {theirs['transforms']}")
      if ours_config != jax_config:
        diffs.append(f"backend config\n    ours {ours_config}\n"
                     f"    jax  {jax_config}")
      manifest = os.path.join(d, name + ".manifest.json")
      if os.path.exists(manifest):
        with open(manifest) as fh:
          launch = next(t["launch"] for t in json.load(fh)["targets"]
                        if t["target"] == "tpu")
        ours_operands = manifest_operands(launch)
        if ours_operands != jax_operands:
          diffs.append(f"custom call operands\n    ours {ours_operands}\n"
                       f"    jax  {jax_operands}")
      if diffs:
        failed += 1
        print(f"{name}: DIFFERS from JAX's lowering:")
        for x in diffs:
          print("  " + x)
      else:
        print(f"{name}: signature, attributes, transforms and backend config "
              "match JAX's lowering")
      o, t = ours["kernel"]["ops"], theirs["kernel"]["ops"]
      only_ours = {k: v for k, v in (o - t).items()}
      only_jax = {k: v for k, v in (t - o).items()}
      if only_ours or only_jax:
        print(f"  body ops (info): more in ours {dict(sorted(only_ours.items()))}"
              f", more in JAX's {dict(sorted(only_jax.items()))}")
  print(f"{compared - failed} passed, {failed} failed")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
