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
# and the collector was the largest item of ingest's CPU profile (14%). With 32 MB semi-spaces
# (V8 rounds the size up to a power of two) most of them die young, so much less reaches the old
# space that growing it half as far (50%) before a full collection costs little, and keeps the
# 32 MB more of young generation within ingest's memory. In bench/ingest.ts, one process (three
# rounds each; the first row is one round):
#   16 MB, 100%: 53 µs of CPU per event, 17.7k events/s, peak RSS 373 MB
#   32 MB, 100%: 40-47 µs, 20.4-24.0k events/s, peak RSS 390-438 MB
#   32 MB,  75%: 41-44 µs, 21.8-24.1k events/s, peak RSS 383-422 MB
#   32 MB,  50%: 44-52 µs, 18.8-22.0k events/s, peak RSS 371-386 MB (six rounds)
# and 64 MB semi-spaces took one process to 490 MB.
case "$1" in
  ingest) echo "--max-old-space-size=${INGEST_MAX_OLD_SPACE_MB:-256} --heap-growing-percent=${INGEST_HEAP_GROWING_PERCENT:-50} --max-semi-space-size=${INGEST_MAX_SEMI_SPACE_MB:-32}" ;;
esac
