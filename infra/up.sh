#!/usr/bin/env bash
# `make up`: installs what is missing and starts the whole system, idempotently.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

"$ROOT/infra/stores.sh"
"$ROOT/infra/kafka/kafka.sh" start
"$ROOT/infra/s3proxy/s3proxy.sh" start
"$ROOT/infra/clickhouse/clickhouse.sh" start
npx tributary migrate
npx tributary kafka:topics
npx tributary bootstrap --credentials-file "$STATE/credentials.env"
"$ROOT/infra/services.sh" start
"$ROOT/infra/console.sh"
"$ROOT/infra/nginx/nginx.sh" start
log "Tributary is up at http://127.0.0.1:${FRONT_PORT:-8000} (credentials: $STATE/credentials.env)"
