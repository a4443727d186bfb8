#!/usr/bin/env bash
# Starts or stops cluster mode's Kafka: three KRaft brokers, each also a controller (a quorum of
# three survives one loss), on ports KAFKA_PORT (9092), +2, +4 with controllers one above each.
# Topics get replication factor 3 and min.insync.replicas 2.
source "$(dirname "$0")/../lib.sh"

BASE=${KAFKA_PORT:-9092}
BROKERS=(1 2 3)
port_of() { echo $((BASE + 2 * ($1 - 1))); }
voters() {
  local list=()
  for n in "${BROKERS[@]}"; do list+=("$n@127.0.0.1:$(($(port_of "$n") + 1))"); done
  (IFS=,; echo "${list[*]}")
}

broker_env() {
  local n=$1 port; port=$(port_of "$1")
  echo KAFKA_NODE_ID="$n" KAFKA_PORT="$port" KAFKA_ADVERTISED_PORT="$port" KAFKA_CONTROLLER_PORT=$((port + 1)) \
    KAFKA_VOTERS="$(voters)" KAFKA_REPLICATION_FACTOR=3 KAFKA_MIN_INSYNC_REPLICAS=2
}

cluster_id() {
  local file="$STATE/kafka-cluster.id"
  [[ -f "$file" ]] || cat /proc/sys/kernel/random/uuid | tr -d '-' | cut -c1-22 > "$file"
  cat "$file"
}

# The brokers start together: a KRaft quorum of three elects no leader until two are up.
start() {
  # Once, before the brokers start side by side: they share the jars.
  "$ROOT/infra/kafka/kafka.sh" install
  local id; id=$(cluster_id)
  local pids=() failed=0
  for n in "${BROKERS[@]}"; do
    env $(broker_env "$n") KAFKA_CLUSTER_ID="$id" "$ROOT/infra/kafka/kafka.sh" start &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  ((failed == 0)) || die "a kafka broker did not start (see $STATE/logs/kafka-*.log)"
}

case "${1:-}" in
  start) start ;;
  stop) for n in "${BROKERS[@]}"; do env $(broker_env "$n") "$ROOT/infra/kafka/kafka.sh" stop; done ;;
  start-broker) env $(broker_env "${2:?broker number}") KAFKA_CLUSTER_ID="$(cluster_id)" "$ROOT/infra/kafka/kafka.sh" start ;;
  stop-broker) env $(broker_env "${2:?broker number}") "$ROOT/infra/kafka/kafka.sh" stop ;;
  brokers) for n in "${BROKERS[@]}"; do printf '127.0.0.1:%s\n' "$(port_of "$n")"; done | paste -sd, ;;
  *) die "usage: kafka-cluster.sh start|stop|start-broker N|stop-broker N|brokers" ;;
esac
