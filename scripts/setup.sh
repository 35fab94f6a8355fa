#!/usr/bin/env bash
# Installs pallasc's build and test dependencies from Debian packages.
# Idempotent: packages already present are skipped; nothing is downloaded from
# anywhere but the configured Debian archives.
set -euo pipefail

packages=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools lld-22 clang-22
  libclang-rt-22-dev rocm-device-libs
  libcli11-dev nlohmann-json3-dev libspdlog-dev catch2 libcurl4-openssl-dev
  cmake ninja-build python3 python3-jsonschema
  bazel-bootstrap bazel-rules-cc bazel-rules-java
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Python packages for the numeric and jaxlib cross-check tests (numpy; jax
# on the CPU for its Mosaic TPU bindings). Tests that need them skip with a
# message when they are absent; here they are installed from PyPI.
if command -v python3 >/dev/null 2>&1 &&
   ! python3 -c "import numpy, jax" >/dev/null 2>&1; then
  echo "setup: installing numpy and jax (CPU) with pip"
  python3 -m pip install --quiet --disable-pip-version-check numpy jax ||
    echo "setup: warning: pip install failed; numpy/jax tests will be skipped"
fi
# JAX's shipped Mosaic GPU ops (hopper_matmul_mgpu) import jax._src.test_util,
# which needs absl-py; without it their export tests skip.
if command -v python3 >/dev/null 2>&1 && python3 -c "import jax" >/dev/null 2>&1 &&
   ! python3 -c "import absl" >/dev/null 2>&1; then
  echo "setup: installing absl-py with pip (for JAX's shipped Mosaic GPU ops)"
  python3 -m pip install --quiet --disable-pip-version-check absl-py ||
    echo "setup: warning: pip install of absl-py failed; the Mosaic GPU op tests will be skipped"
fi

# The JAX exporter (python/pallasc_jax, the `pallasc-export` console script),
# installed into the Python that has jax; editable, so it is this checkout's.
root=$(cd "$(dirname "$0")/.." && pwd)
if command -v python3 >/dev/null 2>&1 && python3 -c "import jax" >/dev/null 2>&1; then
  have=$(python3 -c "import os, pallasc_jax; print(os.path.dirname(os.path.dirname(os.path.realpath(pallasc_jax.__file__))))" 2>/dev/null || true)
  if [ "$have" != "$(realpath "$root/python")" ]; then
    echo "setup: installing pallasc_jax (python/) with pip"
    python3 -m pip install --quiet --disable-pip-version-check -e "$root/python" ||
      echo "setup: warning: pip install of python/ failed; pallasc-export is not installed"
  fi
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} Debian packages already installed"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# jsonschema for the `schemas` test (test/schemas), in the python3 the tests
# run with: Debian's python3-jsonschema above serves Debian's python3; another
# python3 first in PATH (pyenv, a virtualenv) gets it from PyPI. The test is
# skipped with a message without it.
if command -v python3 >/dev/null 2>&1 &&
   ! python3 -c "import jsonschema" >/dev/null 2>&1; then
  echo "setup: installing jsonschema with pip"
  python3 -m pip install --quiet --disable-pip-version-check jsonschema ||
    echo "setup: warning: pip install failed; the schemas test will be skipped"
fi
