"""Interrupts pallasc and checks what it leaves behind (interrupt.test).

    interrupt.py PALLASC KERNEL SPEC WORKDIR

1. SIGTERM and SIGINT while ptxas runs (a fake ptxas that waits): pallasc
   dies of the signal, and neither its tool temporary directory (with the
   file the tool itself left there) nor a staging directory is left.
2. SIGTERM at 12 random moments of a compile: never a temporary or staging
   directory left, never a partial output; the manifest, when present, is
   complete JSON.
3. SIGKILL while ptxas runs: the directories stay (nothing can run), and
   the next pallasc (once they are older than 5 s, simulated) removes them.
Prints one line per check.
"""
import glob
import json
import os
import random
import signal
import subprocess
import sys
import time

pallasc, kernel, spec, work = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
tmp = os.path.join(work, "tmp")
out = os.path.join(work, "out")
note = os.path.join(work, "note")
os.makedirs(tmp, exist_ok=True)
os.makedirs(out, exist_ok=True)


def env(sleep):
    e = dict(os.environ)
    e.update(TMPDIR=tmp, PTXAS=os.path.join(here, "fake-ptxas.sh"),
             FAKE_PTXAS_NOTE=note, FAKE_PTXAS_SLEEP=str(sleep))
    return e


def start(sleep, ignore_int=False):
    """pallasc, started with SIGINT at its default action (lit's workers
    ignore SIGINT, and children inherit that) or ignored."""
    if os.path.exists(note):
        os.remove(note)
    action = signal.SIG_IGN if ignore_int else signal.SIG_DFL
    return subprocess.Popen(
        [pallasc, kernel, "--spec", spec, "--target", "cuda:sm_80", "-o", out],
        env=env(sleep), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, action))


def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def wait_for_note():
    for _ in range(2000):
        if os.path.exists(note):
            with open(note) as f:
                pid, tmpdir = f.read().split()
            return int(pid), tmpdir
        time.sleep(0.01)
    sys.exit("the fake ptxas never ran")


def leftovers():
    return (sorted(os.listdir(tmp)) +
            sorted(n for n in os.listdir(out) if n.startswith(".pallasc")))


for sig in (signal.SIGTERM, signal.SIGINT):
    p = start(sleep=30)
    pid, tooltmp = wait_for_note()
    inside = os.path.dirname(tooltmp) == tmp and os.path.basename(
        tooltmp).startswith("pallasc-tmp-")
    p.send_signal(sig)
    code = p.wait()
    kill(pid)
    print("%s during ptxas: died of %s, ptxas's TMPDIR was ours: %s, left: %s"
          % (sig.name, signal.Signals(-code).name if code < 0 else code,
             inside, leftovers() or "nothing"))

bad = []
rng = random.Random(18)
for i in range(12):
    p = start(sleep=0.05)
    time.sleep(rng.uniform(0, 0.3))
    p.send_signal(signal.SIGTERM)
    p.wait()
    left = leftovers()
    manifest = os.path.join(out, "mul.manifest.json")
    if os.path.exists(manifest):
        try:
            with open(manifest) as f:
                json.load(f)
        except ValueError:
            left.append("partial manifest")
    if left:
        bad.append((i, left))
print("12 random SIGTERMs: left behind:", bad or "nothing")

# Started with SIGINT ignored (nohup, a background job): it stays ignored.
p = start(sleep=0.5, ignore_int=True)
wait_for_note()
p.send_signal(signal.SIGINT)
code = p.wait()
print("SIGINT while ignored: exit %d, manifest written: %s, left: %s" % (
    code, os.path.exists(os.path.join(out, "mul.manifest.json")),
    leftovers() or "nothing"))

p = start(sleep=30)
pid, tooltmp = wait_for_note()
p.send_signal(signal.SIGKILL)
p.wait()
kill(pid)
orphans = leftovers()
print("SIGKILL: left", len(orphans), "directory:",
      [o.split("-")[0] + "-" + o.split("-")[1] + "-" for o in orphans])
old = time.time() - 60
for d in glob.glob(os.path.join(tmp, "pallasc-tmp-*")):
    os.utime(d, (old, old))
code = subprocess.call([pallasc, "--version"], env=env(0),
                       stdout=subprocess.DEVNULL)
print("the next pallasc (exit %d) left: %s" % (code, leftovers() or "nothing"))
