#!/usr/bin/env bash
# Installs (once) and starts or stops a single KRaft Kafka broker on 127.0.0.1:${KAFKA_PORT:-9092}
# (controller on ${KAFKA_CONTROLLER_PORT:-9093}), with its data under the state folder. Cluster
# mode (infra/cluster/kafka-cluster.sh) starts each of its brokers through this script, naming it
# with KAFKA_NODE_ID and giving it the controller quorum (KAFKA_VOTERS) and replication settings.
source "$(dirname "$0")/../lib.sh"

NODE_ID=${KAFKA_NODE_ID:-}
NAME=kafka${NODE_ID:+-$NODE_ID}
KAFKA_DIR="$STATE/$NAME"
# The jars are the same for every state folder (`make chaos` runs a second broker), so they are
# fetched once per checkout.
LIBS="$ROOT/.tributary/kafka/libs"
PIDFILE="$STATE/pids/$NAME.pid"
PORT=${KAFKA_PORT:-9092}
CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
# The port clients are told to use; the chaos stack puts a relay there (chaos/kafka-link.ts).
ADVERTISED_PORT=${KAFKA_ADVERTISED_PORT:-$PORT}
VOTERS=${KAFKA_VOTERS:-${NODE_ID:-1}@127.0.0.1:$CONTROLLER_PORT}
# Every broker of one cluster must be formatted with the same cluster id.
CLUSTER_ID=${KAFKA_CLUSTER_ID:-$(cat /proc/sys/kernel/random/uuid | tr -d '-' | cut -c1-22)}
REPLICATION_FACTOR=${KAFKA_REPLICATION_FACTOR:-1}
MIN_INSYNC_REPLICAS=${KAFKA_MIN_INSYNC_REPLICAS:-1}

install() {
  fetch_maven_jars "Apache Kafka" "$ROOT/infra/kafka/pom.xml" "$LIBS"
}

start() {
  install
  if pid_alive "$PIDFILE"; then log "$NAME already running"; return 0; fi
  port_open 127.0.0.1 "$PORT" && die "port $PORT is taken by a process this project did not start"
  mkdir -p "$KAFKA_DIR/data"
  sed -e "s#__DATA__#$KAFKA_DIR/data#" -e "s#__PORT__#$PORT#g" -e "s#__ADVERTISED_PORT__#$ADVERTISED_PORT#g" -e "s#__CONTROLLER_PORT__#$CONTROLLER_PORT#g" \
    -e "s#__NODE_ID__#${NODE_ID:-1}#g" -e "s#__VOTERS__#$VOTERS#g" -e "s#__REPLICATION_FACTOR__#$REPLICATION_FACTOR#g" -e "s#__MIN_INSYNC_REPLICAS__#$MIN_INSYNC_REPLICAS#g" \
    "$ROOT/infra/kafka/server.properties" > "$KAFKA_DIR/server.properties"
  local java=(java -Xms256m -Xmx768m -Dlog4j.configuration="file:$ROOT/infra/kafka/log4j.properties" -cp "$LIBS/*")
  if [[ ! -f "$KAFKA_DIR/data/meta.properties" ]]; then
    log "formatting $NAME storage"
    "${java[@]}" kafka.tools.StorageTool format -t "$CLUSTER_ID" \
      -c "$KAFKA_DIR/server.properties" --ignore-formatted >> "$STATE/logs/$NAME.log" 2>&1
  fi
  log "starting $NAME"
  setsid nohup "${java[@]}" kafka.Kafka "$KAFKA_DIR/server.properties" >> "$STATE/logs/$NAME.log" 2>&1 &
  echo $! > "$PIDFILE"
  wait_until 90 "$NAME" port_open 127.0.0.1 "$PORT"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop_pidfile "$PIDFILE" "$NAME" ;;
  *) die "usage: kafka.sh install|start|stop" ;;
esac
