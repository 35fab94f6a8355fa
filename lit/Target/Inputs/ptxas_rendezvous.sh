#!/bin/sh
# A ptxas for ptxas-overlap.test. Writes "started" to $RENDEZVOUS/started.ARCH
# (its pid on the second line); the one for -arch=$WAIT_ARCH then waits, at
# most $WAIT_SECONDS (default 60), until $WAIT_FILE contains $WAIT_TEXT, and
# fails if it never does: it can only succeed if pallasc did that work while
# this ptxas ran. Then it runs the real ptxas ($REAL_PTXAS) on its arguments.
arch=
for a in "$@"; do
  case $a in -arch=*) arch=${a#-arch=} ;; esac
done
printf 'started\n%s\n' $$ > "$RENDEZVOUS/started.$arch"
if [ "$arch" = "$WAIT_ARCH" ]; then
  limit=$(( ${WAIT_SECONDS:-60} * 10 ))
  i=0
  until grep -qs -- "$WAIT_TEXT" "$WAIT_FILE"; do
    i=$((i + 1))
    if [ $i -gt $limit ]; then
      echo "ptxas_rendezvous: '$WAIT_TEXT' never appeared in $WAIT_FILE while ptxas for $arch ran" >&2
      exit 1
    fi
    sleep 0.1
  done
fi
exec "$REAL_PTXAS" "$@"
