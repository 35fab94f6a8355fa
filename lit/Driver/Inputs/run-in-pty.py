# Runs a command with its stdout on a pseudo-terminal (TERM=xterm, 80
# columns) and its stderr to ours, then prints what it wrote to the terminal
# with the control characters spelled out (<CR>, <ESC>, one <NL> per line),
# so that a lit test can FileCheck a status line redrawn in place.
#   %python %S/Inputs/run-in-pty.py pallasc build ... | FileCheck %s
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
# Raw: the terminal passes "\n" through (no "\r\n" translation).
attrs = termios.tcgetattr(slave)
attrs[1] &= ~termios.OPOST
termios.tcsetattr(slave, termios.TCSANOW, attrs)
env = dict(os.environ, TERM="xterm")
proc = subprocess.Popen(sys.argv[1:], stdout=slave, env=env)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:  # EIO: the other side is closed
        break
    if not chunk:
        break
    data += chunk
code = proc.wait()
text = data.decode("utf-8", "replace")
text = text.replace("\r", "<CR>").replace("\x1b", "<ESC>").replace("\n", "<NL>\n")
sys.stdout.write(text)
print("exit code: %d" % code, flush=True)
