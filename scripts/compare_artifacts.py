#!/usr/bin/env python3
"""Byte-for-byte artifact comparison of two pallasc builds (for refactors).

  compare_artifacts.sh collect BIN_DIR OUT_DIR [--cases-from REF_DIR]
                             [--targets T,...] [-j N] [--opt | --no-opt]
                             [--timeout S]
      Compiles every case with BIN_DIR/pallasc (and runs BIN_DIR/pallasc-opt)
      and writes each case's outputs, exit code and stderr into its own folder
      of OUT_DIR. The cases are
        * every example (examples/*/kernel.mlir + spec.json),
        * every kernel/spec pair among the lit inputs (lit/**/Inputs/X.mlir
          with X.json beside it),
        * every `pallasc KERNEL --spec SPEC [transform flags]` that a lit RUN
          line compiles from files of the repository,
      each for every target BIN_DIR/pallasc lists in `--version` (cpu, tpu
      and every GPU target of the table, RDNA included; --targets T,... for
      fewer) with
      --emit=mlir, plus --emit=cubin for cuda
      (when ptxas exists) and --emit=asm for rocm; and
        * every `pallasc-opt %s ...` RUN line of lit/Conversion and
          lit/Pipelines (stdout, stderr and exit code); by default only when
          every target is collected, --opt / --no-opt to choose.
      A run past --timeout seconds (600) is killed and recorded as exit
      code 124, its stderr saying so.
      The inputs are copied into each case's folder (`in/`) and compiled from
      there under fixed names, so the outputs do not depend on where the
      repository or the build is. With --cases-from REF_DIR the cases are the
      ones recorded in REF_DIR (its copied inputs and commands), so a baseline
      stays comparable after tests or inputs move.

  compare_artifacts.sh compare DIR_A DIR_B
      Compares two collected folders byte for byte; lists every file that
      differs or exists on one side only; exits 1 on any difference. (The
      manifests' "pallasc_version" alone is ignored: a release bump.)

CUDA_HOME defaults to /usr/local/cuda (libdevice is linked only with it).
"""

import argparse
import concurrent.futures
import filecmp
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def table_targets(bin_dir):
    """Every target the build's pallasc compiles for: the `targets:` line of
    `pallasc --version` (the driver's registry and the GPU target table), so
    a chip added to the table is collected without editing this script."""
    out = subprocess.run([os.path.join(bin_dir, "pallasc"), "--version"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("targets:"):
            return [t.strip() for t in line[len("targets:"):].split(",")]
    sys.exit("compare_artifacts: `pallasc --version` lists no targets")


# Flags of a lit RUN line that change what is compiled (the rest: outputs).
TRANSFORM_FLAGS_WITH_VALUE = {"--vmap", "--used-outputs", "--code-object-version"}
TRANSFORM_FLAGS = {"--jvp", "--discharge-state", "--hi-to-lo"}
# Targets whose PTX is compiled without ptxas (none: CUDA 13's ptxas
# accepts every CUDA target of the table).
NO_PTXAS = set()
OPT_DIRS = ["lit/Conversion", "lit/Pipelines"]


def rel(path):
    return os.path.relpath(path, ROOT)


def case_name(*parts):
    name = "+".join(parts)
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name)


def lit_run_lines(path):
    """The RUN lines of a lit test, continuations joined."""
    lines, cur = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            m = re.search(r"RUN:(.*)$", raw)
            if not m:
                continue
            text = m.group(1).rstrip()
            if cur is not None:
                cur += " " + text.strip()
            else:
                cur = text.strip()
            if cur.endswith("\\"):
                cur = cur[:-1]
                continue
            lines.append(cur)
            cur = None
    return lines


def subst(word, test_dir):
    word = word.replace("%examples", os.path.join(ROOT, "examples"))
    word = word.replace("%S", test_dir)
    return word


def discover_compile_cases():
    """(name, kernel, spec, flags) for every compile case in the tree."""
    cases = {}

    def add(kernel, spec, flags=()):
        kernel, spec = os.path.normpath(kernel), os.path.normpath(spec)
        if not (os.path.isfile(kernel) and os.path.isfile(spec)):
            return
        key = (rel(kernel), rel(spec), tuple(flags))
        if key in cases:
            return
        parts = [rel(kernel)[:-len(".mlir")], rel(spec)[:-len(".json")]]
        if flags:
            parts.append("_".join(flags))
        cases[key] = case_name(*parts)

    for d in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        ex = os.path.join(ROOT, "examples", d)
        if not os.path.isfile(os.path.join(ex, "kernel.mlir")):
            continue  # examples/consumer: a CMake project
        add(os.path.join(ex, "kernel.mlir"), os.path.join(ex, "spec.json"))
    for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, "lit"))):
        if os.path.basename(dirpath) != "Inputs":
            continue
        for f in sorted(files):
            if f.endswith(".mlir") and f[:-5] + ".json" in files:
                add(os.path.join(dirpath, f),
                    os.path.join(dirpath, f[:-5] + ".json"))
    tests = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "lit")):
        if "Inputs" in dirpath.split(os.sep):
            continue
        tests += [os.path.join(dirpath, f) for f in files
                  if f.endswith((".test", ".mlir", ".json"))]
    for test in sorted(tests):
        for line in lit_run_lines(test):
            for cmd in re.split(r"\||&&|;", line):
                try:
                    words = shlex.split(cmd)
                except ValueError:
                    continue
                if not words or words[0] not in ("pallasc", "not"):
                    continue
                if words[0] == "not":
                    words = words[1:]
                if not words or words[0] != "pallasc" or "--spec" not in words:
                    continue
                d = os.path.dirname(test)
                kernel = next((w for w in words[1:] if w.endswith(".mlir")),
                              None)
                spec = words[words.index("--spec") + 1] \
                    if words.index("--spec") + 1 < len(words) else None
                if not kernel or not spec or "%t" in kernel or "%t" in spec:
                    continue
                flags, i = [], 1
                while i < len(words):
                    w = words[i]
                    if w in TRANSFORM_FLAGS_WITH_VALUE and i + 1 < len(words):
                        flags += [w, words[i + 1]]
                        i += 2
                        continue
                    if w in TRANSFORM_FLAGS:
                        flags.append(w)
                    i += 1
                add(subst(kernel, d), subst(spec, d), flags)
    return [(name, k, s, list(f)) for (k, s, f), name in
            sorted(cases.items(), key=lambda kv: kv[1])]


def discover_opt_cases():
    """(name, test file, pallasc-opt arguments) for lit/Conversion, Pipelines."""
    out = []
    for d in OPT_DIRS:
        full = os.path.join(ROOT, d)
        if not os.path.isdir(full):
            continue
        for f in sorted(os.listdir(full)):
            if not f.endswith(".mlir"):
                continue
            test = os.path.join(full, f)
            for n, line in enumerate(lit_run_lines(test)):
                cmd = line.split("|")[0].strip()
                if cmd.startswith("not "):
                    cmd = cmd[4:].strip()
                try:
                    words = shlex.split(cmd)
                except ValueError:
                    continue
                if not words or words[0] != "pallasc-opt" or "%s" not in words:
                    continue
                args = [w for w in words[1:] if w != "2>&1"]
                out.append((case_name(rel(test)[:-5], str(n)), test, args))
    return out


def have_ptxas(env):
    cuda = env.get("CUDA_HOME", "/usr/local/cuda")
    return os.path.exists(os.path.join(cuda, "bin", "ptxas")) or \
        shutil.which("ptxas") is not None


TIMEOUT = 600  # seconds per pallasc / pallasc-opt run (--timeout)


def run(cmd, cwd, env):
    """(exit code, stdout, stderr) of `cmd`; a run past TIMEOUT is killed
    and recorded as exit code 124 with a line saying so, so one hanging
    case cannot stop the collection."""
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        err = (e.stderr or b"") + (
            "compare_artifacts: timed out after %g s\n" % TIMEOUT).encode()
        return 124, e.stdout or b"", err
    return p.returncode, p.stdout, p.stderr


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def normalize(data, case_dir):
    """Drops what differs between two runs of one build: the case's folder
    and gpu-module-to-binary's timings (`LLVMIRToISATimeInMs = 48 : i64`)."""
    data = data.replace(case_dir.encode(), b"<CASE>")
    return re.sub(rb"(\w+TimeInMs = )[0-9]+", rb"\1<N>", data)


def compile_job(bin_dir, case_dir, target, flags, env):
    """One case x target: outputs in case_dir/<target>/out."""
    tdir = os.path.join(case_dir, target.replace(":", "_"))
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    emit = ["mlir"]
    if target in NO_PTXAS:
        env = dict(env, PTXAS="none")
    elif target.startswith("cuda:") and have_ptxas(env):
        emit.append("cubin")
    if target.startswith("rocm:"):
        emit.append("asm")
    cmd = [os.path.join(bin_dir, "pallasc"), "in/kernel.mlir", "--spec",
           "in/spec.json", "--target", target, "--emit=" + ",".join(emit),
           "-o", os.path.join(os.path.basename(tdir), "out")] + flags
    rc, out, err = run(cmd, case_dir, env)
    write(os.path.join(tdir, "exit_code"), "%d\n" % rc)
    write(os.path.join(tdir, "stdout"), normalize(out, case_dir))
    write(os.path.join(tdir, "stderr"), normalize(err, case_dir))
    return rc


def opt_job(bin_dir, case_dir, args, env):
    cmd = [os.path.join(bin_dir, "pallasc-opt")] + \
        [("in/test.mlir" if a == "%s" else a) for a in args]
    rc, out, err = run(cmd, case_dir, env)
    write(os.path.join(case_dir, "exit_code"), "%d\n" % rc)
    write(os.path.join(case_dir, "stdout"), normalize(out, case_dir))
    write(os.path.join(case_dir, "stderr"), normalize(err, case_dir))
    return rc


def collect(bin_dir, out_dir, cases_from, jobs, targets, with_opt=None):
    bin_dir = os.path.abspath(bin_dir)
    out_dir = os.path.abspath(out_dir)
    for tool in ("pallasc", "pallasc-opt"):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            sys.exit("compare_artifacts: %s/%s is missing" % (bin_dir, tool))
    all_targets = table_targets(bin_dir)
    if targets is None:
        targets = all_targets
    unknown = [t for t in targets if t not in all_targets]
    if unknown:
        sys.exit("compare_artifacts: unknown target(s) %s; %s/pallasc knows %s"
                 % (", ".join(unknown), bin_dir, ", ".join(all_targets)))
    env = dict(os.environ)
    env.setdefault("CUDA_HOME", "/usr/local/cuda")
    os.makedirs(out_dir, exist_ok=True)
    work = []  # (kind, case_dir, payload)
    if cases_from:
        ref = os.path.abspath(cases_from)
        index = json.load(open(os.path.join(ref, "cases.json")))
        for c in index["compile"] + index["opt"]:
            if ref == out_dir:
                break
            src, dst = os.path.join(ref, c["name"], "in"), \
                os.path.join(out_dir, c["name"], "in")
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
    else:
        index = {"compile": [], "opt": []}
        for name, kernel, spec, flags in discover_compile_cases():
            d = os.path.join(out_dir, name, "in")
            os.makedirs(d, exist_ok=True)
            shutil.copyfile(kernel, os.path.join(d, "kernel.mlir"))
            shutil.copyfile(spec, os.path.join(d, "spec.json"))
            index["compile"].append({"name": name, "kernel": rel(kernel),
                                     "spec": rel(spec), "flags": flags})
        for name, test, args in discover_opt_cases():
            d = os.path.join(out_dir, name, "in")
            os.makedirs(d, exist_ok=True)
            shutil.copyfile(test, os.path.join(d, "test.mlir"))
            index["opt"].append({"name": name, "test": rel(test),
                                 "args": args})
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")
    for c in index["compile"]:
        for t in targets:
            work.append(("compile", os.path.join(out_dir, c["name"]),
                         (t, c["flags"])))
    # pallasc-opt runs do not depend on --targets: by default they run when
    # every target is collected (one full baseline), --opt/--no-opt decide.
    if with_opt is None:
        with_opt = targets == all_targets
    opt_runs = index["opt"] if with_opt else []
    for c in opt_runs:
        work.append(("opt", os.path.join(out_dir, c["name"]), c["args"]))

    def do(item):
        kind, case_dir, payload = item
        if kind == "compile":
            return compile_job(bin_dir, case_dir, payload[0], payload[1], env)
        return opt_job(bin_dir, case_dir, payload, env)

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        rcs = list(pool.map(do, work))
    print("collected %d compile cases x %d targets and %d pallasc-opt runs "
          "into %s (%d nonzero exits, recorded)" %
          (len(index["compile"]), len(targets), len(opt_runs), out_dir,
           sum(1 for r in rcs if r != 0)))


def files_under(d):
    out = set()
    for dirpath, _, files in os.walk(d):
        for f in files:
            out.add(os.path.relpath(os.path.join(dirpath, f), d))
    return out


def manifest_sans_version(path):
    with open(path, "rb") as f:
        return re.sub(rb'"pallasc_version": "[^"]*"', b'"pallasc_version": ""',
                      f.read())


def compare(a, b):
    fa, fb = files_under(a), files_under(b)
    diffs = []
    for f in sorted(fa - fb):
        diffs.append("only in %s: %s" % (a, f))
    for f in sorted(fb - fa):
        diffs.append("only in %s: %s" % (b, f))
    same = 0
    for f in sorted(fa & fb):
        pa, pb = os.path.join(a, f), os.path.join(b, f)
        if filecmp.cmp(pa, pb, shallow=False):
            same += 1
        elif f.endswith(".manifest.json") and \
                manifest_sans_version(pa) == manifest_sans_version(pb):
            # The version of pallasc itself (a release bump on main) is
            # not a difference of the compiler's output.
            same += 1
        else:
            diffs.append("differs: %s" % f)
    for d in diffs:
        print(d)
    print("%d files identical, %d differences" % (same, len(diffs)))
    return 1 if diffs else 0


def main():
    global TIMEOUT
    p = argparse.ArgumentParser(prog="compare_artifacts.sh",
                                description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("collect")
    c.add_argument("bin_dir")
    c.add_argument("out_dir")
    c.add_argument("--cases-from", metavar="REF_DIR")
    c.add_argument("--targets", help="comma-separated; default: every "
                   "target of `BIN_DIR/pallasc --version`")
    c.add_argument("-j", type=int, default=2)
    c.add_argument("--opt", dest="with_opt", action="store_true",
                   default=None, help="run the pallasc-opt cases even with "
                   "--targets")
    c.add_argument("--no-opt", dest="with_opt", action="store_false",
                   help="skip the pallasc-opt cases")
    c.add_argument("--timeout", type=float, default=TIMEOUT,
                   help="seconds per run before it is killed and recorded "
                   "as exit code 124 (default %(default)g)")
    d = sub.add_parser("compare")
    d.add_argument("dir_a")
    d.add_argument("dir_b")
    args = p.parse_args()
    if args.mode == "collect":
        targets = args.targets.split(",") if args.targets else None
        TIMEOUT = args.timeout
        collect(args.bin_dir, args.out_dir, args.cases_from, args.j, targets,
                args.with_opt)
        return 0
    return compare(args.dir_a, args.dir_b)


if __name__ == "__main__":
    sys.exit(main())
