#!/bin/sh
# Node's own flags for the service named by $1, for every way a service is started: infra/services.sh,
# the Dockerfile, bench/capture.ts and bench/ingest.ts.
#
# Every service: a semi-space of at most NODE_SEMI_SPACE_MB (default 16, Node 20's V8 default).
# Node 24's V8 lets one grow to 64 MB, which put about 120 MB more in each process's peak RSS
# (capture, decide, ingest alike) for no measured gain in requests or events per second
# (bench/README.md, "Node 24 against Node 20").
#
# Ingest's garbage is mostly decoded events it is done with: a capped old space makes V8 collect
# it instead of growing. Under that cap V8 would start a full collection each time the old space
# grew to about 1.3 times what survived the last one, which for ingest's small live heap came
# several times a second; growing it twice as far first keeps V8's marking threads off its CPU.
#
# INGEST_SEMI_SPACE_MB (default NODE_SEMI_SPACE_MB) trades memory for CPU: a chunk's events live
# through its Postgres round trips, and a larger young generation lets more of them die before a
# scavenge copies them. Figures: bench/README.md.
semi_space="--max-semi-space-size=${NODE_SEMI_SPACE_MB:-16}"
case "$1" in
  ingest) echo "--max-old-space-size=${INGEST_MAX_OLD_SPACE_MB:-256} --heap-growing-percent=${INGEST_HEAP_GROWING_PERCENT:-100} --max-semi-space-size=${INGEST_SEMI_SPACE_MB:-${NODE_SEMI_SPACE_MB:-16}}" ;;
  *) echo "$semi_space" ;;
esac
