#!/usr/bin/env python3
"""pallasc beside JAX's own GPU route on JAX's shipped Pallas GPU kernels.

    python3 bench/vs_jax_triton/vs_jax_triton.py [--build BUILD_DIR]
        [--arch sm_80,sm_90a] [--kernels softmax,mha,...] [--runs N]
        [--json FILE] [--keep DIR] [--smoke]

For each kernel of kernels.py (softmax, layer_norm, rms_norm, attention.mha
causal and not, decode_attention.mqa, as JAX 0.10.2 ships them):

1. exports it with pallasc_jax (this Python, with jax) and compiles each
   pallas_call with pallasc (`--target cuda:ARCH`);
2. lowers the same function through JAX's own route on this machine
   (`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`): every
   pallas_call becomes a `__gpu$xla.gpu.triton` custom call whose
   backend_config holds the Triton IR (MLIR bytecode of jaxlib's `tt`
   dialect) and the launch options (num_warps, num_stages). jaxlib prints it;
   its `evictionPolicy = ...` / `cacheModifier = ...` keywords become Triton
   3.9.0's one `cachePolicy` attribute; Triton 3.9.0 parses the result, and
   the script checks that Triton's module has the same operations in the
   same order and one cache policy per translated load/store (the round
   trip), then compiles it for GPUTarget("cuda", 80|90, 32) (no GPU needed);
3. assembles both PTX files with the same ptxas (`ptxas -arch=ARCH -v`),
   disassembles both with cuobjdump -sass, and prints per kernel and arch
   the metrics of bench/vs_triton (registers, spills, shared memory, SASS,
   tensor-core ops, 16-byte accesses, barriers, async copies, ...) and the
   compile time (a whole `pallasc` process; `triton.compile` of the TTIR in
   one warm process, cache off), both columns and the ratio; then a summary
   against issue 38's bar: no spills where Triton has none, registers at or
   below Triton's, SASS at most 1.1x, barriers at most Triton's + 2,
   tensor-core ops wherever Triton uses them.

Triton comes from the private virtual environment of bench/vs_triton
($PALLASC_TRITON_VENV, made on first use); the compile step runs there, the
export step in this Python (which needs jax). `--smoke` (what CI runs): one
kernel (softmax) on sm_80, one run, and the round-trip check; it exits 77
(skipped) with a line saying so when jax or Triton cannot be had.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "vs_triton"))
import vs_triton as vt  # noqa: E402  (the measuring half, shared)


def fail(msg):
    print(f"vs_jax_triton.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


# --- step 1 and 2: export both sides (this Python, with jax) ----------------

_LOAD_STORE = re.compile(r"\btt\.(load|store)\b")
_KEYWORD = re.compile(r"\s+(cacheModifier|evictionPolicy)\s*=\s*(\w+)")


def translate_cache_keywords(text):
    """jaxlib's `tt.load ... cacheModifier = ca evictionPolicy = evict_last :`
    as Triton 3.9.0 writes it: `{cachePolicy = #tt.cache_policy<
    cache_modifier = ca, eviction_policy = evict_last>}`. Returns the text
    and the number of ops translated."""
    out, n = [], 0
    for line in text.splitlines():
        if _LOAD_STORE.search(line) and _KEYWORD.search(line):
            kw = dict(m.groups() for m in _KEYWORD.finditer(line))
            line = _KEYWORD.sub("", line)
            policy = ("#tt.cache_policy<cache_modifier = %s, eviction_policy = "
                      "%s>" % (kw.get("cacheModifier", "none"),
                               kw.get("evictionPolicy", "normal")))
            head, sep, tail = line.partition(" : ")
            if not sep:
                raise ValueError("cannot place the cache policy in: " + line)
            if head.rstrip().endswith("}"):
                head = head.rstrip()[:-1] + ", cachePolicy = %s}" % policy
            else:
                head = head.rstrip() + " {cachePolicy = %s}" % policy
            line = head + sep + tail
            n += 1
        out.append(line)
    return "\n".join(out) + "\n", n


def op_sequence(text):
    """The operation names of an MLIR module's text, in order."""
    ops = []
    for line in text.splitlines():
        m = re.match(r"\s*(?:%[\w#:, %]+=\s*)?\"?([a-z_]+\.[a-z_.]+)\"?[\s({<]",
                     line + " ")
        if m and not line.lstrip().startswith(("#", "//")):
            ops.append(m.group(1))
    return ops


def triton_calls(fn, args):
    """[(ttir text, backend options)] of every Triton custom call JAX's CUDA
    lowering makes of `fn`, in order."""
    import jax
    from jax._src.lib import triton as tt_lib
    from jax._src.lib.mlir import ir
    lowered = jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))
    module = lowered.compiler_ir("stablehlo")
    found = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    if (o.operation.name == "stablehlo.custom_call" and
                            "triton" in str(o.attributes["call_target_name"])):
                        found.append(o.attributes["mhlo.backend_config"])
                    walk(o.operation)
    walk(module.operation)
    out = []
    for cfg in found:
        with ir.Context() as ctx:
            tt_lib.dialect.register_dialect(ctx)
            ttir = str(ir.Module.parse(cfg["ir"].value_bytes))
        opts = {k: int(str(cfg[k]).split(":")[0]) for k in
                ("num_warps", "num_stages", "grid_x", "grid_y", "grid_z")}
        opts["name"] = str(cfg["name"]).strip('"')
        out.append((ttir, opts))
    return out


def export(kernels, work):
    import jax
    jax.config.update("jax_platforms", "cpu")
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, HERE)
    import pallasc_jax
    from kernels import KERNELS
    index = []
    for name in kernels:
        if name not in KERNELS:
            fail(f"unknown kernel '{name}' (kernels.py has "
                 f"{', '.join(KERNELS)})")
        fn, args = KERNELS[name]
        calls = pallasc_jax.trace(fn, *args)
        tcalls = triton_calls(fn, args)
        if len(calls) != len(tcalls):
            fail(f"{name}: pallasc_jax exports {len(calls)} pallas_calls, "
                 f"JAX's CUDA lowering makes {len(tcalls)} Triton calls")
        for i, (call, (ttir, opts)) in enumerate(zip(calls, tcalls)):
            d = os.path.join(work, f"{name}.{i}")
            pallasc_jax.write([call], d)
            translated, n = translate_cache_keywords(ttir)
            with open(os.path.join(d, "jax.ttir"), "w") as f:
                f.write(ttir)
            with open(os.path.join(d, "triton.ttir"), "w") as f:
                f.write(translated)
            index.append({"kernel": name, "call": i, "dir": d,
                          "pallasc_name": call.name, "translated": n,
                          "ops": op_sequence(ttir), **opts})
    with open(os.path.join(work, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


# --- step 3: compile and measure (Triton's venv) -----------------------------

def compile_pallasc(pallasc, ptxas, entry, arch, work, runs):
    base = os.path.join(entry["dir"], entry["pallasc_name"])
    return vt.compile_pallasc_files(
        pallasc, ptxas, base + ".mlir", base + ".json",
        f"{entry['kernel']}.{entry['call']}", arch, work, runs)


def compile_triton(entry, arch, work, runs):
    import triton
    from triton._C.libtriton import ir as tir
    from triton.backends.compiler import GPUTarget
    path = os.path.join(entry["dir"], "triton.ttir")
    # The round trip: Triton's module has jaxlib's operations, in order, and
    # one cache policy per translated load/store.
    ctx = tir.context()
    tir.load_dialects(ctx)
    try:
        mod = tir.parse_mlir_module(path, ctx)
    except RuntimeError as e:
        fail(f"Triton {triton.__version__} cannot parse {path}: {e}")
    printed = str(mod)
    if op_sequence(printed) != entry["ops"]:
        fail(f"{path}: Triton's module does not have jaxlib's operations "
             "in the same order (the round trip changed the kernel)")
    if printed.count("cachePolicy") != entry["translated"]:
        fail(f"{path}: {entry['translated']} loads/stores had cache keywords, "
             f"Triton's module has {printed.count('cachePolicy')} cache policies")
    capability = int(arch[3:].rstrip("a"))
    options = {"num_warps": entry["num_warps"],
               "num_stages": entry["num_stages"]}

    def once():
        return triton.compile(path, target=GPUTarget("cuda", capability, 32),
                              options=options)
    compiled = once()
    seconds = vt.median_time(once, runs)
    ptx = os.path.join(work, f"triton-{entry['kernel']}.{entry['call']}-{arch}.ptx")
    with open(ptx, "w") as f:
        f.write(compiled.asm["ptx"])
    return ptx, compiled.metadata.shared, seconds


ROWS = vt.ROWS[:7] + [("cp_async", "cp.async (LDGSTS)")] + vt.ROWS[7:]

# Issue 38's bar: no spills where Triton has none, registers <= Triton's,
# SASS <= 1.1x, barriers <= Triton's + 2, tensor cores where Triton uses
# them, compile time <= 0.5x.
BAR = [
    ("spills", lambda p, t: p["spill_bytes"] and not t["spill_bytes"]),
    ("registers", lambda p, t: p["registers"] > t["registers"]),
    ("SASS", lambda p, t: p["sass"] > 1.1 * t["sass"]),
    ("barriers", lambda p, t: p["barriers"] > t["barriers"] + 2),
    ("tensor cores", lambda p, t: t["tensor_core"] and not p["tensor_core"]),
    ("compile time", lambda p, t: p["compile_s"] > 0.5 * t["compile_s"]),
]


def measure(args, work):
    import triton
    pallasc = os.path.join(args.build, "bin", "pallasc")
    ptxas = vt.find_ptxas()
    cuobjdump = vt.find_cuobjdump()
    os.environ["TRITON_PTXAS_PATH"] = ptxas
    os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = ptxas
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton-cache")
    index = json.load(open(os.path.join(work, "index.json")))
    results = {}
    for arch in args.arch.split(","):
        for entry in index:
            key = entry["kernel"] + ("" if entry["call"] == 0 else
                                     f".{entry['call']}")
            row = {}
            for who in ("pallasc", "triton"):
                if who == "pallasc":
                    ptx, dyn, secs = compile_pallasc(pallasc, ptxas, entry, arch,
                                                     work, args.runs)
                else:
                    ptx, dyn, secs = compile_triton(entry, arch, work, args.runs)
                cubin = ptx[:-4] + ".cubin"
                res, warnings = vt.assemble(ptxas, ptx, arch, cubin)
                counts = vt.sass_counts(cuobjdump, cubin)
                sass = subprocess.run([cuobjdump, "-sass", cubin],
                                      capture_output=True, text=True).stdout
                counts["cp_async"] = len(re.findall(r"\bLDGSTS\b", sass))
                row[who] = dict(res, **counts, smem=res["static_smem"] + dyn,
                                warnings=len(warnings), compile_s=secs)
            results.setdefault(arch, {})[key] = row
    ptxas_version = subprocess.run([ptxas, "--version"], capture_output=True,
                                   text=True).stdout.strip().splitlines()[-1]
    print(f"pallasc vs JAX's Pallas->Triton route (Triton {triton.__version__}),"
          f" both assembled by `ptxas -arch=ARCH -v` ({ptxas_version}); "
          "ratio = pallasc / Triton")
    vt.print_tables(results, ROWS, 12)
    print("\n== summary against issue 38's bar (no spills where Triton has "
          "none, registers <= Triton's, SASS <= 1.1x, barriers <= Triton's + "
          "2, tensor cores where Triton uses them, compile time <= 0.5x)")
    print(f"{'arch':<7} {'kernel':<12} {'regs P/T':>9} {'spills':>9} "
          f"{'SASS P/T':>11} {'BAR P/T':>8} {'TC P/T':>8} {'time':>6}  verdict")
    for arch, k, p, t, behind in vt.verdicts(results, BAR):
        print(f"{arch:<7} {k:<12} {p['registers']:>4}/{t['registers']:<4} "
              f"{p['spill_bytes']:>4}/{t['spill_bytes']:<4} "
              f"{p['sass']:>5}/{t['sass']:<5} {p['barriers']:>3}/{t['barriers']:<4}"
              f" {p['tensor_core']:>3}/{t['tensor_core']:<4} "
              f"{vt.ratio(p['compile_s'], t['compile_s']):>6}  "
              f"{'at the bar' if not behind else 'behind: ' + ', '.join(behind)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--arch", default="sm_80,sm_90a")
    ap.add_argument("--kernels",
                    default="softmax,layer_norm,rms_norm,mha,mha_causal,mqa")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", help="also write the numbers as JSON to FILE")
    ap.add_argument("--keep", help="keep the exported kernels, PTX and cubins "
                    "in DIR")
    ap.add_argument("--smoke", action="store_true",
                    help="softmax on sm_80, one run (what CI runs)")
    ap.add_argument("--measure-only", metavar="WORK", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.smoke:
        args.kernels, args.arch, args.runs = "softmax", "sm_80", 1
    if args.measure_only:
        measure(args, args.measure_only)
        return
    pallasc = os.path.join(args.build, "bin", "pallasc")
    if not os.access(pallasc, os.X_OK):
        fail(f"{pallasc} not found: build pallasc first (or pass --build)")
    try:
        import jax  # noqa: F401
    except ImportError:
        if args.smoke:
            print("vs_jax_triton.py: skipped: jax is not installed "
                  "(pip install jax)")
            sys.exit(77)
        fail("jax is not installed (pip install jax): the export step needs it")
    work = args.keep or tempfile.mkdtemp(prefix="vs_jax_triton.")
    os.makedirs(work, exist_ok=True)
    export(args.kernels.split(","), work)
    # Step 3 in Triton's environment (bench/vs_triton makes it).
    py = os.path.join(vt.venv_dir(), "bin", "python")
    if not os.path.exists(py):
        if args.smoke and os.environ.get("PALLASC_NO_TRITON_INSTALL"):
            print(f"vs_jax_triton.py: skipped: no Triton environment at "
                  f"{vt.venv_dir()}")
            sys.exit(77)
        r = subprocess.run([sys.executable, "-m", "venv", vt.venv_dir()])
        if r.returncode == 0:
            r = subprocess.run([py, "-m", "pip", "install", "-q",
                                f"triton=={vt.TRITON_VERSION}"])
        if r.returncode != 0:
            if args.smoke:
                print("vs_jax_triton.py: skipped: Triton "
                      f"{vt.TRITON_VERSION} cannot be installed from PyPI")
                sys.exit(77)
            fail(f"cannot install Triton {vt.TRITON_VERSION} into "
                 f"{vt.venv_dir()}")
    argv = [py, os.path.abspath(__file__), "--measure-only", work,
            "--build", args.build, "--arch", args.arch, "--runs",
            str(args.runs)]
    if args.json:
        argv += ["--json", args.json]
    rc = subprocess.run(argv).returncode
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()
