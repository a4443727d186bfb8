#!/usr/bin/env bash
# Stops everything `make chaos` started, in its own state folder.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export TRIBUTARY_STATE_DIR="${CHAOS_STATE_DIR:-$ROOT/.tributary/chaos}"
source "$ROOT/infra/lib.sh"
source "$ROOT/infra/chaos/env.sh"
bash "$ROOT/infra/nginx/nginx.sh" stop
bash "$ROOT/infra/services.sh" stop
bash "$ROOT/infra/clickhouse/clickhouse.sh" stop
bash "$ROOT/infra/kafka/kafka.sh" stop
stop_pidfile "$STATE/pids/kafka-link.pid" "the kafka link"
bash "$ROOT/infra/cluster/clickhouse-cluster.sh" stop
bash "$ROOT/infra/cluster/kafka-cluster.sh" stop
bash "$ROOT/infra/cluster/zookeeper.sh" stop
bash "$ROOT/infra/chaos/stores.sh" stop postgres redis
