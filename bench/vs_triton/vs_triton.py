#!/usr/bin/env python3
"""pallasc beside Triton on every example: static code quality, one run.

    python3 bench/vs_triton/vs_triton.py [--build BUILD_DIR] [--arch sm_80,sm_90a]
                                         [--runs N] [--json FILE] [--keep DIR]

For each example (examples/*) and each architecture, compiles the Pallas
kernel with pallasc (`--target cuda:ARCH`) and its Triton equivalent
(bench/vs_triton/kernels.py, Triton 3.9.0 for an explicit
GPUTarget("cuda", 80|90, 32): no GPU needed), assembles both PTX files with the
same ptxas and the same flags (`ptxas -arch=ARCH -v`), disassembles both cubins
with cuobjdump -sass, and prints per kernel, for both compilers and their
ratio (pallasc / Triton), measured in this run:

  registers, spill bytes (stores + loads), shared memory (static + dynamic),
  SASS instructions (NOPs excluded), tensor-core instructions (HMMA, HGMMA),
  ldmatrix (LDSM), TMA / async-barrier instructions (UTMA*, SYNCS*),
  16-byte vector global/shared accesses, FFMA, subroutine calls, barriers,
  ptxas-inserted warpgroup fences (WARPGROUP.*), ptxas warnings / performance
  advisories, and compile time (median of N: a whole `pallasc` process, and
  `triton.compile` in one warm Python process with its cache off, each
  including its own ptxas run).

Triton is installed from PyPI into a private virtual environment on first use
($PALLASC_TRITON_VENV, default ~/.cache/pallasc/triton-3.9.0; never inside the
repository); this script re-executes itself there. ptxas is $PTXAS, else
$CUDA_HOME/bin/ptxas, else /usr/local/cuda/bin/ptxas (the toolkit pallasc
uses); Triton is pointed at the same one. cuobjdump is $CUOBJDUMP, else the
one bundled in the Triton wheel (this CUDA toolkit has none).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TRITON_VERSION = "3.9.0"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = ["add", "softmax", "layernorm", "matmul", "flash_attention",
            "scalar_prefetch"]


def fail(msg):
    print(f"vs_triton.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


# --- the private Triton environment ----------------------------------------

def venv_dir():
    return os.environ.get("PALLASC_TRITON_VENV") or os.path.join(
        os.path.expanduser("~"), ".cache", "pallasc", f"triton-{TRITON_VERSION}")


def ensure_triton():
    """Re-executes this script in the private venv holding Triton."""
    try:
        import triton  # noqa: F401
        if triton.__version__ == TRITON_VERSION:
            return
    except ImportError:
        pass
    venv = venv_dir()
    py = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        fail(f"triton {TRITON_VERSION} is not importable in {venv}")
    if not os.path.exists(py):
        print(f"== creating {venv} (Triton {TRITON_VERSION} from PyPI)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    probe = subprocess.run([py, "-c", "import triton; print(triton.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0 or probe.stdout.strip() != TRITON_VERSION:
        subprocess.run([py, "-m", "pip", "install", "-q", f"triton=={TRITON_VERSION}"],
                       check=True)
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


# --- tools --------------------------------------------------------------------

def find_ptxas():
    for cand in (os.environ.get("PTXAS"),
                 os.environ.get("CUDA_HOME") and os.path.join(os.environ["CUDA_HOME"], "bin", "ptxas"),
                 "/usr/local/cuda/bin/ptxas", shutil.which("ptxas")):
        if cand and os.access(cand, os.X_OK):
            return cand
    fail("ptxas not found (set PTXAS or CUDA_HOME)")


def find_cuobjdump():
    cand = os.environ.get("CUOBJDUMP")
    if not cand:
        import triton
        cand = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia",
                            "bin", "cuobjdump")
    if not os.access(cand, os.X_OK):
        fail(f"cuobjdump not found at {cand} (set CUOBJDUMP)")
    return cand


def assemble(ptxas, ptx, arch, cubin):
    """ptxas -v: returns (resource dict, warning lines)."""
    r = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx, "-o", cubin],
                       capture_output=True, text=True)
    log = r.stdout + r.stderr
    if r.returncode != 0:
        fail(f"ptxas rejected {ptx}:\n{log}")
    res = {"registers": 0, "spill_bytes": 0, "static_smem": 0}
    m = re.search(r"Used (\d+) registers", log)
    if m:
        res["registers"] = int(m.group(1))
    m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    if m:
        res["spill_bytes"] = int(m.group(1)) + int(m.group(2))
    m = re.search(r"(\d+) bytes smem", log)
    if m:
        res["static_smem"] = int(m.group(1))
    warnings = []
    for line in log.splitlines():
        text = line.split(":", 1)[-1].strip() if line.startswith("ptxas") else line.strip()
        if ("warning" in line.lower() or "Potential" in line
                or re.search(r"\(C7\d\d\d\)", line)):
            warnings.append(re.sub(r"^(warning|info)\s*:\s*", "", text))
    return res, warnings


SASS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.+?)\s*;")


def sass_counts(cuobjdump, cubin):
    r = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"cuobjdump failed on {cubin}:\n{r.stderr}")
    ops = []
    for line in r.stdout.splitlines():
        m = SASS_LINE.search(line)
        if not m:
            continue
        text = m.group(1)
        if text.startswith("@"):
            text = text.split(None, 1)[1] if " " in text else text
        op = text.split()[0]
        ops.append((op, text))
    def count(pred):
        return sum(1 for op, text in ops if pred(op, text))
    def vec128(op, text):
        return (op.startswith(("LDG", "STG", "LDS", "STS", "LDGSTS")) and ".128" in op)
    return {
        "sass": count(lambda op, t: op != "NOP"),
        "tensor_core": count(lambda op, t: op.startswith(("HMMA", "HGMMA", "IMMA", "UTCHMMA"))),
        "ldmatrix": count(lambda op, t: op.startswith("LDSM")),
        "tma_mbarrier": count(lambda op, t: op.startswith(("UTMALDG", "UTMASTG", "UBLKCP", "SYNCS"))),
        "vector_128": count(vec128),
        "global_ld_st": count(lambda op, t: op.startswith(("LDG", "STG"))),
        "ffma": count(lambda op, t: op.startswith("FFMA")),
        "calls": count(lambda op, t: op.startswith("CALL")),
        "barriers": count(lambda op, t: op.startswith("BAR")),
        "warpgroup_fences": count(lambda op, t: op.startswith("WARPGROUP")),
    }


# --- the two compilers ---------------------------------------------------------

def median_time(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def compile_pallasc_files(pallasc, ptxas, kernel, spec, label, arch, work, runs):
    """Compiles KERNEL + SPEC for cuda:ARCH (median time of `runs` whole
    pallasc processes, ptxas included): (PTX path, dynamic shared bytes,
    seconds). bench/vs_jax_triton uses it too."""
    out = os.path.join(work, f"pallasc-{label}-{arch}")
    env = dict(os.environ, PTXAS=ptxas)
    cmd = [pallasc, kernel, "--spec", spec, "--target", f"cuda:{arch}", "-o", out]
    def once():
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            fail(f"pallasc failed on {label} for {arch}:\n{r.stderr}")
    once()
    seconds = median_time(once, runs)
    manifest = [f for f in os.listdir(out) if f.endswith(".manifest.json")][0]
    name = manifest[:-len(".manifest.json")]
    launch = next(t["launch"] for t in json.load(open(os.path.join(out, manifest)))["targets"]
                  if t["target"] == f"cuda:{arch}")
    return (os.path.join(out, f"{name}.{arch}.ptx"),
            launch.get("dynamic_shared_memory_bytes", 0), seconds)


def compile_pallasc(pallasc, ptxas, example, arch, work, runs):
    return compile_pallasc_files(
        pallasc, ptxas, os.path.join(ROOT, "examples", example, "kernel.mlir"),
        os.path.join(ROOT, "examples", example, "spec.json"), example, arch, work, runs)


def compile_triton(example, arch, work, runs):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from kernels import KERNELS
    fn, sig, constexprs, num_warps, num_stages = KERNELS[example]
    signature = dict(sig)
    for name in constexprs:
        signature[name] = "constexpr"
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values())
             if t.startswith("*")}
    capability = int(arch[3:].rstrip("a"))
    target = GPUTarget("cuda", capability, 32)
    options = {"num_warps": num_warps, "num_stages": num_stages}
    def once():
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
        return triton.compile(src, target=target, options=options)
    compiled = once()
    seconds = median_time(once, runs)
    ptx = os.path.join(work, f"triton-{example}-{arch}.ptx")
    with open(ptx, "w") as f:
        f.write(compiled.asm["ptx"])
    return ptx, compiled.metadata.shared, seconds


# --- report --------------------------------------------------------------------

ROWS = [
    ("registers", "registers"),
    ("spill_bytes", "spill bytes"),
    ("smem", "shared memory (B)"),
    ("sass", "SASS instructions"),
    ("tensor_core", "HMMA/HGMMA"),
    ("ldmatrix", "LDSM"),
    ("tma_mbarrier", "TMA/mbarrier (UTMA*, SYNCS*)"),
    ("vector_128", "16-byte LD/ST (global+shared)"),
    ("global_ld_st", "LDG/STG"),
    ("ffma", "FFMA"),
    ("calls", "CALL (subroutines)"),
    ("barriers", "BAR"),
    ("warpgroup_fences", "WARPGROUP.* (ptxas fences)"),
    ("warnings", "ptxas warnings/advisories"),
    ("compile_s", "compile time (s)"),
]


def fmt(v):
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def ratio(a, b):
    if b == 0:
        return "-" if a == 0 else "inf"
    return f"{a / b:.2f}"


def print_tables(results, rows, width):
    """Per architecture, a table of `rows` ((key, label) pairs) of each
    kernel's pallasc and Triton numbers in `results` and their ratios;
    kernel names in a column of `width`."""
    for arch, by_kernel in results.items():
        print(f"\n== {arch}")
        print(f"{'kernel':<{width}} {'metric':<31} {'pallasc':>9} "
              f"{'triton':>9} {'ratio':>7}")
        for k, row in by_kernel.items():
            for i, (key, label) in enumerate(rows):
                p, t = row["pallasc"][key], row["triton"][key]
                print(f"{k if i == 0 else '':<{width}} {label:<31} "
                      f"{fmt(p):>9} {fmt(t):>9} {ratio(p, t):>7}")


def verdicts(results, bar):
    """Per architecture and kernel in `results`: the architecture, the
    kernel, its pallasc and Triton numbers and the names of the checks in
    `bar` ((name, fails(p, t)) pairs) that pallasc fails."""
    for arch, by_kernel in results.items():
        for k, row in by_kernel.items():
            p, t = row["pallasc"], row["triton"]
            yield arch, k, p, t, [name for name, fails in bar if fails(p, t)]


# The bar of the summary: no ptxas warning, no spills, registers <= Triton's,
# SASS <= 1.1x Triton's.
BAR = [
    ("ptxas warnings", lambda p, t: p["warnings"]),
    ("spills", lambda p, t: p["spill_bytes"]),
    ("registers", lambda p, t: p["registers"] > t["registers"]),
    ("SASS", lambda p, t: p["sass"] > 1.1 * t["sass"]),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--arch", default="sm_80,sm_90a")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--examples", default=",".join(EXAMPLES))
    ap.add_argument("--json", help="also write the numbers as JSON to FILE")
    ap.add_argument("--keep", help="keep PTX/cubin/SASS in DIR")
    args = ap.parse_args()

    pallasc = os.path.join(args.build, "bin", "pallasc")
    if not os.access(pallasc, os.X_OK):
        fail(f"{pallasc} not found: build pallasc first (or pass --build)")
    ensure_triton()
    import triton
    ptxas = find_ptxas()
    cuobjdump = find_cuobjdump()
    # Triton picks its ptxas per architecture (ptxas-blackwell from sm_90 on):
    # point both at the toolkit's, so both compilers use one assembler and
    # Triton writes PTX that assembler accepts.
    os.environ["TRITON_PTXAS_PATH"] = ptxas
    os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = ptxas
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    work = args.keep or tempfile.mkdtemp(prefix="vs_triton.")
    os.makedirs(work, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton-cache")
    ptxas_version = subprocess.run([ptxas, "--version"], capture_output=True,
                                   text=True).stdout.strip().splitlines()[-1]

    results = {}
    notes = []
    for arch in args.arch.split(","):
        for ex in args.examples.split(","):
            row = {}
            for who in ("pallasc", "triton"):
                if who == "pallasc":
                    ptx, dyn_smem, secs = compile_pallasc(pallasc, ptxas, ex, arch, work, args.runs)
                else:
                    ptx, dyn_smem, secs = compile_triton(ex, arch, work, args.runs)
                cubin = os.path.join(work, f"{who}-{ex}-{arch}.cubin")
                res, warnings = assemble(ptxas, ptx, arch, cubin)
                counts = sass_counts(cuobjdump, cubin)
                if args.keep:
                    with open(cubin + ".sass", "w") as f:
                        f.write(subprocess.run([cuobjdump, "-sass", cubin],
                                               capture_output=True, text=True).stdout)
                row[who] = dict(res, **counts, smem=res["static_smem"] + dyn_smem,
                                warnings=len(warnings), compile_s=secs)
                for w in warnings:
                    notes.append(f"{arch} {ex} {who}: {w}")
            results.setdefault(arch, {})[ex] = row

    print(f"pallasc vs Triton {triton.__version__}: both assembled by `ptxas -arch=ARCH -v` "
          f"({ptxas_version}); ratio = pallasc / Triton")
    print_tables(results, ROWS, 16)
    print("\n== summary (the bar: no ptxas warning, no spills, registers <= Triton's, "
          "SASS <= 1.1x Triton's)")
    print(f"{'arch':<7} {'kernel':<16} {'registers':>11} {'spills':>11} {'SASS':>11} "
          f"{'ratio':>6} {'warnings':>9}  verdict")
    for arch, ex, p, t, behind in verdicts(results, BAR):
        print(f"{arch:<7} {ex:<16} {p['registers']:>5}/{t['registers']:<5} "
              f"{p['spill_bytes']:>5}/{t['spill_bytes']:<5} {p['sass']:>5}/{t['sass']:<5} "
              f"{p['sass'] / max(t['sass'], 1):>6.2f} {p['warnings']:>4}/{t['warnings']:<4}  "
              f"{'ok' if not behind else 'behind: ' + ', '.join(behind)}")
    if notes:
        print("\nptxas warnings and advisories:")
        for n in notes:
            print(f"  {n}")
    print(f"\n(compile time: median of {args.runs}; pallasc is a whole process with its "
          "ptxas -v, Triton is triton.compile in a warm process with its cache off, "
          "including its ptxas run)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"triton": triton.__version__, "ptxas": ptxas_version,
                       "results": results, "ptxas_messages": notes}, f, indent=1,
                      sort_keys=True)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
