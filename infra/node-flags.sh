#!/bin/sh
# Node's own flags for the service named by $1, for every way a service is started: infra/services.sh,
# the Dockerfile and bench/ingest.ts.
#
# Ingest's garbage is mostly decoded events it is done with: a capped old space makes V8 collect
# it instead of growing (measured: 560 MB peak RSS uncapped, 350 MB capped, same rate). Under that
# cap V8 starts a full collection once the old space is about 1.3 times what survived the last
# one, which for ingest's small live heap (about 40 MB) came every 150-200 ms and kept V8's
# marking and sweeping threads on a fifth of its CPU. Growing it twice as far before the next
# took ingest from 47-53 to 39-40 µs of CPU per event in bench/ingest.ts.
#
# INGEST_SEMI_SPACE_MB (unset: V8's own, 16) trades memory for CPU: a chunk's events live through
# its Postgres round trips, and a larger young generation lets more of them die before a scavenge
# copies them. At 64, one process took 41.5-43.5 rather than 47-49 µs of CPU per event and made
# a tenth more events/s, at 431-450 rather than 324-366 MB peak RSS; it is off by default for that.
case "$1" in
  ingest) echo "--max-old-space-size=${INGEST_MAX_OLD_SPACE_MB:-256} --heap-growing-percent=${INGEST_HEAP_GROWING_PERCENT:-100}${INGEST_SEMI_SPACE_MB:+ --max-semi-space-size=$INGEST_SEMI_SPACE_MB}" ;;
esac
