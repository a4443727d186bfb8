#!/usr/bin/env bash
# `make chaos`: brings up a stack of its own (its own Kafka, ClickHouse, Postgres, Redis, nginx and
# services, on ports of their own, under .tributary/chaos), runs the fault-injection and
# hostile-input suite against it, and takes it down again. Nothing of `make up`'s stack, nor the
# machine's shared Postgres and Redis, is touched. Logs stay in .tributary/chaos/logs.
# TOPOLOGY=cluster runs it on cluster mode's stores (ZooKeeper, 2 x 2 ClickHouse servers, three
# brokers) with the cluster's own faults (chaos/cluster-scenarios.ts).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export TRIBUTARY_STATE_DIR="${CHAOS_STATE_DIR:-$ROOT/.tributary/chaos}"
# A fresh state each run: every check counts what this run acknowledged and nothing older.
if [[ -d "$TRIBUTARY_STATE_DIR" ]]; then
  bash "$ROOT/infra/chaos/down.sh" >/dev/null 2>&1 || true
  rm -rf "$TRIBUTARY_STATE_DIR"
fi
source "$ROOT/infra/lib.sh"
source "$ROOT/infra/chaos/env.sh"
cd "$ROOT"

trap 'bash "$ROOT/infra/chaos/down.sh"' EXIT
bash infra/chaos/stores.sh start postgres redis
mkdir -p "$STATE/pids" "$STATE/logs"
if [[ "${TOPOLOGY:-single}" == cluster ]]; then
  bash infra/cluster/zookeeper.sh start
  bash infra/cluster/kafka-cluster.sh start
  bash infra/cluster/clickhouse-cluster.sh start
else
  setsid nohup node --import tsx chaos/kafka-link.ts >> "$STATE/logs/kafka-link.log" 2>&1 &
  echo $! > "$STATE/pids/kafka-link.pid"
  wait_until 30 "the kafka link" port_open 127.0.0.1 "$KAFKA_LINK_PORT"
  bash infra/kafka/kafka.sh start
  bash infra/clickhouse/clickhouse.sh start
fi
npx tributary migrate
npx tributary kafka:topics
npx tributary bootstrap --credentials-file "$STATE/credentials.env"
bash infra/services.sh start
bash infra/nginx/nginx.sh start
log "chaos stack is up at $PUBLIC_URL; running the suite"
node --import tsx chaos/run.ts 2>&1 | tee "$STATE/logs/chaos.log"
