#!/bin/sh
# Node's own flags for the service named by $1, for every way a service is started: infra/services.sh,
# the Dockerfile and bench/ingest.ts (infra/node-env.sh has the environment they add).
#
# Ingest's garbage is mostly decoded events it is done with: a capped old space makes V8 collect
# it instead of growing (measured: 560 MB peak RSS uncapped, 350 MB capped, same rate). Under that
# cap V8 starts a full collection once the old space is about 1.3 times what survived the last
# one, which for ingest's small live heap (about 40 MB) came every 150-200 ms and kept V8's
# marking and sweeping threads on a fifth of its CPU. Growing it twice as far before the next
# took ingest from 47-53 to 39-40 µs of CPU per event in bench/ingest.ts.
#
# A chunk's parsed events live through its Postgres round trips. With V8's default young
# generation (16 MB semi-spaces) they outlived two scavenges and were copied into the old space,
# and the collector was the largest item of ingest's CPU profile (14%). With 24 MB a chunk's events
# mostly die young: in bench/ingest.ts ingest's CPU per event went from 53 to 42-47 µs and one
# process from 17.7k to 20.8-23.1k events/s, for 16 MB more heap (32 MB gained nothing more; 64 MB
# took one process to 490 MB of RSS).
case "$1" in
  ingest) echo "--max-old-space-size=${INGEST_MAX_OLD_SPACE_MB:-256} --heap-growing-percent=${INGEST_HEAP_GROWING_PERCENT:-100} --max-semi-space-size=${INGEST_MAX_SEMI_SPACE_MB:-24}" ;;
esac
