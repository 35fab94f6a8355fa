#!/usr/bin/env python3
"""Lists the C++ functions longer than a limit (default 200 lines).

  scripts/long_functions.py [--limit N] [--all] [DIR ...]

How it counts: Universal Ctags (`ctags -x --c++-kinds=f --fields=+e`) gives
every function definition's first line (the line of its name) and its end
line (the closing brace); a function's length is end - start + 1, so its
lambdas, local classes and comments count towards it. Files: *.cpp and *.h
under the directories given, by default src/, tools/, dialects/ and passes/
outside passes/Conversion/PallasToGPU (--all includes it). Prints
`LINES FILE:LINE NAME`, longest first; exits 1 when any function is over
the limit, so it can gate a change.
"""

import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIRS = ["src", "tools", "dialects", "passes"]
EXCLUDED = "passes/Conversion/PallasToGPU"


def functions(dirs):
    """(length, file, line, name) of every function definition under dirs."""
    cmd = ["ctags", "-x", "--languages=C++", "--langmap=C++:+.h",
           "--c++-kinds=f", "--fields=+e", "--_xformat=%n\t%e\t%F\t%N",
           "-R"] + dirs
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        start, end, path, name = line.split("\t", 3)
        if not end.isdigit():
            sys.exit(f"long_functions: ctags gave no end line for {name} "
                     f"({path}:{start})")
        yield int(end) - int(start) + 1, path, int(start), name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--all", action="store_true",
                        help=f"include {EXCLUDED}")
    parser.add_argument("dirs", nargs="*", default=DEFAULT_DIRS)
    args = parser.parse_args()
    if not shutil.which("ctags"):
        sys.exit("long_functions: needs Universal Ctags (apt-get install "
                 "universal-ctags)")
    found = [f for f in functions(args.dirs)
             if args.all or not f[1].startswith(EXCLUDED + "/")]
    long = sorted((f for f in found if f[0] > args.limit), reverse=True)
    for length, path, line, name in long:
        print(f"{length:5d} {path}:{line} {name}")
    print(f"{len(long)} of {len(found)} functions over {args.limit} lines",
          file=sys.stderr)
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
