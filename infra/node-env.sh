#!/bin/sh
# Environment variables for the service named by $1, as NAME=value words for `env`, for every way
# a service is started: infra/services.sh, the Dockerfile and bench/ingest.ts.
#
# Ingest allocates and frees megabyte buffers all the time (Kafka fetches, rows for ClickHouse).
# glibc serves a buffer above its mmap threshold with mmap and gives it back to the system when
# freed, but it raises that threshold to the size of each such buffer freed, after which the
# buffers come from its heap, whose freed memory it keeps: ingest's RSS stayed up to 70 MB above
# what its heap and buffers held. A fixed threshold keeps the system's view of ingest's memory
# close to what it uses (one process's peak RSS in one pair of bench/ingest.ts runs: 422 → 397 MB).
case "$1" in
  ingest) echo "MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072}" ;;
esac
