# -*- Python -*-
# lit configuration for a suite of Pallas kernel regression tests, written
# against an installed pallasc (docs/testing.md). Installed as
# PREFIX/share/pallasc/lit/lit.cfg.py; used two ways:
#
# - with CMake: pallasc_add_lit_tests(DIRECTORY tests/kernels) (from
#   find_package(pallasc)) writes a lit.site.cfg.py naming the tools it
#   found and loading this file; ctest runs the suite;
# - without CMake: copy this file into the test directory (or write a
#   lit.cfg.py there that does
#   `lit_config.load_config(config, "PREFIX/share/pallasc/lit/lit.cfg.py")`)
#   and run `lit -sv tests/kernels`.
#
# Substitutions in RUN lines:
#   %pallasc       the pallasc executable
#   %pallasc-opt   the pallasc-opt executable
#   %FileCheck     LLVM's FileCheck
#   %not           LLVM's not (inverts an exit status)
#   %python        Python: `--param python=PATH`, else $PYTHON, else the one
#                  pallasc_add_lit_tests found (python3 on PATH), else the
#                  one running lit
# Features for REQUIRES: / UNSUPPORTED: lines:
#   ptxas          NVIDIA's ptxas is installed (--target cuda:* runs it and
#                  puts registers and spills into the manifest)
#   ld.lld         LLVM's linker is installed (--target rocm:* links with it)
#   jax            %python imports jax (pallasc-export, interpret mode)
#
# Each tool is looked up in this order: a lit parameter
# (`lit --param pallasc=/opt/pallasc/bin/pallasc`; also pallasc-opt,
# FileCheck, not), an environment variable (PALLASC, PALLASC_OPT, FILECHECK,
# NOT), what pallasc_add_lit_tests found, the installed tree this file is
# part of (pallasc, pallasc-opt), then PATH (also FileCheck-22 and not-22,
# and /usr/lib/llvm-22/bin). A tool not found stops the suite with a message
# saying how to name it.

import os
import shutil
import subprocess
import sys

import lit.formats

if config.name in (None, "", "<unnamed>"):
    config.name = os.path.basename(os.path.dirname(os.path.abspath(__file__)))
# RUN lines run in bash (pipes, $(...), && as in a shell script).
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test", ".mlir"]
config.excludes = ["Inputs", "Output", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "lit.local.cfg"]

found = dict(getattr(config, "pallasc_tools", {}) or {})
here = os.path.dirname(os.path.abspath(__file__))
installed_bin = os.path.normpath(os.path.join(here, "..", "..", "..", "bin"))
llvm_bins = ["/usr/lib/llvm-22/bin"]


def find_tool(name, env, names, dirs):
    """The tool's path, in the documented order; None if not found."""
    for given in (lit_config.params.get(name), os.environ.get(env),
                  found.get(name)):
        if given:
            return given
    for d in dirs:
        for n in names:
            path = os.path.join(d, n)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    return None


tools = {
    "pallasc": find_tool("pallasc", "PALLASC", ["pallasc"], [installed_bin]),
    "pallasc-opt": find_tool("pallasc-opt", "PALLASC_OPT", ["pallasc-opt"],
                             [installed_bin]),
    "FileCheck": find_tool("FileCheck", "FILECHECK",
                           ["FileCheck", "FileCheck-22"], llvm_bins),
    "not": find_tool("not", "NOT", ["not", "not-22"], llvm_bins),
}
for name, path in tools.items():
    if not path:
        lit_config.fatal(
            "cannot find %s: pass `--param %s=PATH` to lit, set %s, or put "
            "it on PATH" % (name, name,
                            {"pallasc": "PALLASC", "pallasc-opt": "PALLASC_OPT",
                             "FileCheck": "FILECHECK", "not": "NOT"}[name]))
    if not os.path.exists(path):
        lit_config.fatal("%s: no such file (the %s of this suite)" %
                         (path, name))

# Longest first: %pallasc-opt before %pallasc.
config.substitutions.append(("%pallasc-opt", tools["pallasc-opt"]))
config.substitutions.append(("%pallasc", tools["pallasc"]))
config.substitutions.append(("%FileCheck", tools["FileCheck"]))
config.substitutions.append(("%not", tools["not"]))
python = (lit_config.params.get("python") or os.environ.get("PYTHON") or
          found.get("python") or sys.executable)
config.substitutions.append(("%python", python))

# Features, as pallasc finds these tools (docs/cuda.md, docs/rocm.md).
cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
if os.path.exists(os.path.join(cuda_home, "bin", "ptxas")) or \
        shutil.which("ptxas"):
    config.available_features.add("ptxas")
if any(os.path.exists(os.path.join(d, "ld.lld")) for d in llvm_bins) or \
        shutil.which("ld.lld") or shutil.which("ld.lld-22"):
    config.available_features.add("ld.lld")
# (Asked of %python without importing jax, which takes seconds.)
if subprocess.run([python, "-c", "import importlib.util, sys; "
                   "sys.exit(importlib.util.find_spec('jax') is None)"],
                  stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("jax")

# What RUN lines see of the environment: pallasc's own variables and the
# CUDA toolkit's location pass through (lit passes on only PATH,
# TMPDIR and a few more).
for var in ("CUDA_HOME", "ROCM_PATH", "PALLASC_CACHE_DIR", "HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
