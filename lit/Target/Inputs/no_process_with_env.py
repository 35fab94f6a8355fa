"""Exits 1 (naming them) if a process of this user runs with NAME=VALUE in
its environment (read from /proc/PID/environ), else 0: for ptxas-overlap.test,
that no fake ptxas of a run (RENDEZVOUS=<its folder>) outlives the run.

  no_process_with_env.py NAME=VALUE
"""
import os
import sys

want = sys.argv[1].encode()
left = []
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        continue  # gone, or not ours
    if want in env:
        left.append(pid)
if left:
    print("processes left with %s: %s" % (sys.argv[1], " ".join(left)))
    sys.exit(1)
