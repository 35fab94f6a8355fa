# Runs 8 pallasc compiles at once that share one cache directory, in three
# rounds, and prints what a test can check:
#   round 1: the same compile 8 times on an empty cache;
#   round 2: 8 different compiles (-O0..3 x two target sets);
#   round 3: round 2 again, now all hits.
# After each round: how many processes exited 0, how many output directories
# equal the uncached compile's byte for byte, the entries in the cache, the
# temporaries left in it, and the counters of `pallasc cache --stats`.
#   %python cache_concurrent.py PALLASC KERNEL SPEC WORKDIR
import os
import subprocess
import sys

from trees import same_tree

pallasc, kernel, spec, work = sys.argv[1:5]
cache = os.path.join(work, "cache")
env = dict(os.environ, PTXAS="none")
env.pop("PALLASC_CACHE_DIR", None)


def compile_args(variant, out):
    opt, targets = variant
    args = [pallasc, kernel, "--spec", spec, "-O%d" % opt, "-o", out]
    for t in targets:
        args += ["--target", t]
    return args


def cache_files():
    entries, temps = 0, 0
    for root, _, files in os.walk(os.path.join(cache, "entries")):
        for f in files:
            if f.startswith("."):
                temps += 1
            else:
                entries += 1
    return entries, temps


def stats():
    if not os.path.isdir(cache):
        return {}
    text = subprocess.run([pallasc, "cache", "--stats", "--cache-dir", cache],
                          capture_output=True, text=True, check=True).stdout
    counters = {}
    for line in text.splitlines():
        name, _, value = line.partition(": ")
        if value.isdigit():
            counters[name] = int(value)
    return counters


def delta(before, after):
    return ", ".join("%s +%d" % (k, after.get(k, 0) - before.get(k, 0))
                     for k in ("hits", "misses", "stores",
                               "corrupt entries removed"))


def run_round(name, variants):
    # The uncached reference of each variant.
    refs = []
    for i, v in enumerate(variants):
        ref = os.path.join(work, "%s-ref%d" % (name, i))
        subprocess.run(compile_args(v, ref), env=env, check=True)
        refs.append(ref)
    before = stats()
    procs, outs = [], []
    for i, v in enumerate(variants):
        out = os.path.join(work, "%s-out%d" % (name, i))
        outs.append(out)
        procs.append(subprocess.Popen(
            compile_args(v, out) + ["--cache-dir", cache], env=env,
            stderr=subprocess.PIPE, text=True))
    ok = 0
    for p in procs:
        _, err = p.communicate()
        if p.returncode == 0 and not err:
            ok += 1
        elif err:
            sys.stdout.write(err)
    same = sum(same_tree(o, r) for o, r in zip(outs, refs))
    entries, temps = cache_files()
    after = stats()
    lookups = (after["hits"] - before.get("hits", 0) + after["misses"] -
               before.get("misses", 0))
    print("%s: %d exit 0, %d identical, %d entries, %d temporaries, "
          "%d lookups; %s" % (name, ok, same, entries, temps, lookups,
                              delta(before, after)), flush=True)


same = [(2, ["tpu", "cuda:sm_80"])] * 8
different = [(o, t) for o in range(4) for t in (["tpu"], ["cuda:sm_80"])]
run_round("round 1", same)
run_round("round 2", different)
run_round("round 3", different)
