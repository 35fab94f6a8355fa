#!/usr/bin/env bash
# Builds everything and runs every test (Catch2 unit tests + the lit suite)
# through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-"$root/build"}
bash "$root/scripts/build.sh" "$build"
ctest --test-dir "$build" --output-on-failure
