"""Exits 1 (naming them) if a process of this user runs with NAME=VALUE in
its environment (read from /proc/PID/environ) and COMMAND in its command
line, else 0: for ptxas-overlap.test, that no fake ptxas of a run
(RENDEZVOUS=<its folder>, the script ptxas_rendezvous.sh) outlives the run.
The script's own children (a `sleep 0.1` between two polls) are not
pallasc's and may outlive the killed script by that long, so only the
script itself counts.

  no_process_with_env.py NAME=VALUE COMMAND
"""
import os
import sys

want, command = sys.argv[1].encode(), sys.argv[2].encode()
left = []
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            env = f.read().split(b"\0")
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            cmdline = f.read()
    except OSError:
        continue  # gone, or not ours
    if want in env and command in cmdline:
        left.append("%s (%s)" % (pid, cmdline.replace(b"\0", b" ").decode()))
if left:
    print("processes left with %s: %s" % (sys.argv[1], ", ".join(left)))
    sys.exit(1)
