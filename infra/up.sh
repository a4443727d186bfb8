#!/usr/bin/env bash
# `make up`: installs what is missing and starts the whole system, idempotently. TOPOLOGY=cluster
# starts cluster mode's stores instead of one server of each (docs/cluster.md).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

"$ROOT/infra/stores.sh"
if [[ "${TOPOLOGY:-single}" == cluster ]]; then
  # ZooKeeper first: ClickHouse's replicated tables and ON CLUSTER statements need its sessions.
  "$ROOT/infra/cluster/zookeeper.sh" start
  "$ROOT/infra/cluster/kafka-cluster.sh" start
  "$ROOT/infra/cluster/clickhouse-cluster.sh" start
else
  "$ROOT/infra/kafka/kafka.sh" start
  "$ROOT/infra/clickhouse/clickhouse.sh" start
fi
"$ROOT/infra/s3proxy/s3proxy.sh" start
npx tributary migrate
# The database the README's Postgres export example writes to, on the machine's Postgres (which
# infra/services.sh lets exports reach); its table is created by the export's first run.
ensure_command psql postgresql-client
psql "${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tributary}" -tAc "SELECT 1 FROM pg_database WHERE datname = 'analytics'" | grep -q 1 ||
  psql "${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tributary}" -qc 'CREATE DATABASE analytics'
npx tributary kafka:topics
npx tributary bootstrap --credentials-file "$STATE/credentials.env"
"$ROOT/infra/services.sh" start
"$ROOT/infra/console.sh"
"$ROOT/infra/nginx/nginx.sh" start
log "Tributary is up at http://127.0.0.1:${FRONT_PORT:-8000} (credentials: $STATE/credentials.env)"
