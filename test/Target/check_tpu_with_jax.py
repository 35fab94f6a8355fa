#!/usr/bin/env python3
"""Checks pallasc's TPU artifacts with jaxlib's own Mosaic bindings.

For each <name>.tpu.mlirbc given (or found in a directory given), this:
  1. parses the bytecode in an MLIR context with jaxlib's `tpu` dialect
     registered (as jax/_src/tpu_custom_call.py does),
  2. checks `stable_mosaic.version` and that every op has a stable_mosaic name,
  3. runs `mosaic-serde{serialize=false}` (the TPU compiler's first step) and
     verifies the module, which runs Mosaic's op verifiers,
  4. re-serializes with jaxlib at the same version and checks that this
     round-trips to the same module,
  5. checks <name>.tpu.json: the tpu_custom_call backend config, whose body
     must be the base64 of the .tpu.mlirbc.
With --print, the deserialized module is printed (for FileCheck); --generic
prints it in MLIR's generic op form (properties and operand segments shown).

Exit 0 when everything was accepted; 1 when jaxlib rejected something; 0 with
a "SKIP:" line when jax is not installed (pip install jax).
"""

import argparse
import base64
import json
import os
import sys


def load_jaxlib():
  try:
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir, passmanager
    from jaxlib.mosaic.python import tpu
  except Exception as e:  # ImportError, or a broken install
    return None, str(e)
  return (jax_mlir, ir, passmanager, tpu), None


def make_context(jaxlib):
  jax_mlir, ir, _, tpu = jaxlib
  ctx = jax_mlir.make_ir_context()
  tpu.register_dialect(ctx)
  ctx.allow_unregistered_dialects = True
  return ctx


def check_module(jaxlib, path, print_module, generic=False):
  _, ir, passmanager, _ = jaxlib
  errors = []
  body = open(path, "rb").read()
  with make_context(jaxlib):
    try:
      module = ir.Module.parse(body)
    except Exception as e:
      return [f"jaxlib cannot parse the bytecode: {e}"], None
    attrs = module.operation.attributes
    if "stable_mosaic.version" not in attrs:
      errors.append("no stable_mosaic.version attribute on the module")
      return errors, None
    version = ir.IntegerAttr(attrs["stable_mosaic.version"]).value
    for op in module.body.operations:
      if not op.operation.name.startswith("stable_mosaic."):
        errors.append(f"op {op.operation.name} is not in serialized form")
    try:
      passmanager.PassManager.parse(
          "builtin.module(mosaic-serde{serialize=false})").run(module.operation)
    except Exception as e:
      return errors + [f"mosaic-serde{{serialize=false}} failed: {e}"], version
    if not module.operation.verify():
      errors.append("the deserialized module does not verify")
    text = module.operation.get_asm(enable_debug_info=False)
    # jaxlib's own serializer at the same version must give back the module.
    try:
      passmanager.PassManager.parse(
          "builtin.module(mosaic-serde{serialize=true "
          f"target-version={version}}},mosaic-serde{{serialize=false}})"
      ).run(module.operation)
      again = module.operation.get_asm(enable_debug_info=False)
      if again != text:
        errors.append("jaxlib's re-serialization does not round-trip")
    except Exception as e:
      errors.append(f"jaxlib cannot re-serialize the module: {e}")
    if print_module:
      print(module.operation.get_asm(enable_debug_info=False,
                                     print_generic_op_form=True)
            if generic else text)
  return errors, version


def check_config(path, body_path):
  errors = []
  text = open(path, "rb").read()
  try:
    config = json.loads(text)
  except ValueError as e:
    return [f"not JSON: {e}"]
  ccc = config.get("custom_call_config")
  if not isinstance(ccc, dict):
    return ["no custom_call_config object"]
  body = base64.b64decode(ccc.get("body", ""))
  if body != open(body_path, "rb").read():
    errors.append("custom_call_config.body is not the base64 of "
                  + os.path.basename(body_path))
  if ccc.get("serialization_format") != 1:
    errors.append("serialization_format is not 1")
  if ccc.get("needs_layout_passes") is not True:
    errors.append("needs_layout_passes is not true")
  known = {"body", "cost_estimate", "serialization_format",
           "needs_layout_passes", "has_communication", "needs_hlo_passes",
           "collective_id", "allow_input_fusion", "internal_scratch_in_bytes",
           "disable_bounds_checks", "disable_semaphore_checks",
           "skip_device_barrier", "shape_invariant_numerics",
           "output_memory_space_colors", "input_memory_space_colors"}
  for key in ccc:
    if key not in known:
      errors.append(f"unknown custom_call_config key {key!r}")
  cost = ccc.get("cost_estimate")
  if cost is not None and set(cost) != {"flops", "transcendentals",
                                        "bytes_accessed",
                                        "remote_bytes_transferred"}:
    errors.append(f"cost_estimate has keys {sorted(cost)}")
  for key in config:
    if key not in ("custom_call_config", "scoped_memory_configs",
                   "flag_configs", "device_type"):
      errors.append(f"unknown backend config key {key!r}")
  for smc in config.get("scoped_memory_configs", []):
    if smc.get("memory_space") != 1 or smc.get("offset") != 0:
      errors.append(f"unexpected scoped memory config {smc}")
  return errors


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("paths", nargs="+",
                      help=".tpu.mlirbc files or directories holding them")
  parser.add_argument("--print", action="store_true",
                      help="print each deserialized module")
  parser.add_argument("--generic", action="store_true",
                      help="with --print, in MLIR's generic op form")
  args = parser.parse_args()

  jaxlib, why = load_jaxlib()
  if jaxlib is None:
    print(f"SKIP: jax is not installed ({why}); pip install jax to check the "
          "TPU modules with jaxlib's Mosaic bindings")
    return 0

  modules = []
  for p in args.paths:
    if os.path.isdir(p):
      modules += sorted(os.path.join(p, f) for f in os.listdir(p)
                        if f.endswith(".tpu.mlirbc"))
    else:
      modules.append(p)
  if not modules:
    print("error: no .tpu.mlirbc file given or found", file=sys.stderr)
    return 1

  failed = 0
  for path in modules:
    errors, version = check_module(jaxlib, path, args.print, args.generic)
    config = path[: -len(".mlirbc")] + ".json"
    if os.path.exists(config):
      errors += [f"{os.path.basename(config)}: {e}"
                 for e in check_config(config, path)]
    else:
      errors.append(f"missing {os.path.basename(config)}")
    name = os.path.basename(path)
    if errors:
      failed += 1
      for e in errors:
        print(f"{name}: REJECTED: {e}")
    else:
      print(f"{name}: accepted by jaxlib (Mosaic version {version})")
  print(f"{len(modules) - failed} passed, {failed} failed")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
