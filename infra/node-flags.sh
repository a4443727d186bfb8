#!/bin/sh
# Node's own flags for the service named by $1, for every way a service is started: infra/services.sh,
# the Dockerfile and bench/ingest.ts.
#
# Ingest's garbage is mostly decoded events it is done with: a capped old space makes V8 collect
# it instead of growing. Under that cap V8 would start a full collection each time the old space
# grew to about 1.3 times what survived the last one, which for ingest's small live heap came
# several times a second; growing it twice as far first keeps V8's marking threads off its CPU.
#
# INGEST_SEMI_SPACE_MB (unset: V8's own, 16) trades memory for CPU: a chunk's events live through
# its Postgres round trips, and a larger young generation lets more of them die before a scavenge
# copies them. Off by default for the memory it costs. Figures: bench/README.md.
case "$1" in
  ingest) echo "--max-old-space-size=${INGEST_MAX_OLD_SPACE_MB:-256} --heap-growing-percent=${INGEST_HEAP_GROWING_PERCENT:-100}${INGEST_SEMI_SPACE_MB:+ --max-semi-space-size=$INGEST_SEMI_SPACE_MB}" ;;
esac
