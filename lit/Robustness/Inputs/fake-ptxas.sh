#!/bin/sh
# A stand-in for ptxas (PTXAS=this file) for the interruption tests: it
# leaves a temporary file of its own in $TMPDIR, notes its pid and TMPDIR in
# $FAKE_PTXAS_NOTE, takes $FAKE_PTXAS_SLEEP seconds (as the same pid), then
# succeeds.
echo "ptxas temporary" > "$TMPDIR/ptxas-own-temp.$$"
if [ -n "$FAKE_PTXAS_NOTE" ]; then
  echo "$$ $TMPDIR" > "$FAKE_PTXAS_NOTE.tmp" && mv "$FAKE_PTXAS_NOTE.tmp" "$FAKE_PTXAS_NOTE"
fi
echo "ptxas info    : Used 8 registers"
exec sleep "${FAKE_PTXAS_SLEEP:-0}"
