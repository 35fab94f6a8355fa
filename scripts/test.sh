#!/usr/bin/env bash
# Builds everything and runs every test (Catch2 unit tests + the lit suite)
# through ctest.
#   scripts/test.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
shift || true
bash "$root/scripts/build.sh" "$build" "$@"
ctest --test-dir "$build" --output-on-failure
