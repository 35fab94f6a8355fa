#!/usr/bin/env bash
# Byte-for-byte artifact comparison of two pallasc builds, for refactors:
#   scripts/compare_artifacts.sh collect BIN_DIR OUT_DIR [--cases-from REF_DIR] [--targets T,...] [-j N] [--opt|--no-opt] [--timeout S]
#   scripts/compare_artifacts.sh compare DIR_A DIR_B      (exit 1 on any difference)
# Details: scripts/compare_artifacts.py (the implementation).
set -euo pipefail
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
exec python3 "$(dirname "$0")/compare_artifacts.py" "$@"
