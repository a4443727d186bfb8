#!/usr/bin/env bash
# Installs (once) and starts or stops a single KRaft Kafka broker on 127.0.0.1:${KAFKA_PORT:-9092}
# (controller on ${KAFKA_CONTROLLER_PORT:-9093}), with its data under the state folder.
source "$(dirname "$0")/../lib.sh"

KAFKA_DIR="$STATE/kafka"
# The jars are the same for every state folder (`make chaos` runs a second broker), so they are
# fetched once per checkout.
LIBS="$ROOT/.tributary/kafka/libs"
PIDFILE="$STATE/pids/kafka.pid"
PORT=${KAFKA_PORT:-9092}
CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
# The port clients are told to use; the chaos stack puts a relay there (chaos/kafka-link.ts).
ADVERTISED_PORT=${KAFKA_ADVERTISED_PORT:-$PORT}

install() {
  fetch_maven_jars "Apache Kafka" "$ROOT/infra/kafka/pom.xml" "$LIBS"
}

start() {
  install
  if pid_alive "$PIDFILE"; then log "kafka already running"; return 0; fi
  port_open 127.0.0.1 "$PORT" && die "port $PORT is taken by a process this project did not start"
  mkdir -p "$KAFKA_DIR/data"
  sed -e "s#__DATA__#$KAFKA_DIR/data#" -e "s#__PORT__#$PORT#g" -e "s#__ADVERTISED_PORT__#$ADVERTISED_PORT#g" -e "s#__CONTROLLER_PORT__#$CONTROLLER_PORT#g" \
    "$ROOT/infra/kafka/server.properties" > "$KAFKA_DIR/server.properties"
  local java=(java -Xms256m -Xmx768m -Dlog4j.configuration="file:$ROOT/infra/kafka/log4j.properties" -cp "$LIBS/*")
  if [[ ! -f "$KAFKA_DIR/data/meta.properties" ]]; then
    log "formatting kafka storage"
    "${java[@]}" kafka.tools.StorageTool format -t "$(cat /proc/sys/kernel/random/uuid | tr -d '-' | cut -c1-22)" \
      -c "$KAFKA_DIR/server.properties" --ignore-formatted >> "$STATE/logs/kafka.log" 2>&1
  fi
  log "starting kafka"
  setsid nohup "${java[@]}" kafka.Kafka "$KAFKA_DIR/server.properties" >> "$STATE/logs/kafka.log" 2>&1 &
  echo $! > "$PIDFILE"
  wait_until 90 "kafka" port_open 127.0.0.1 "$PORT"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop_pidfile "$PIDFILE" kafka ;;
  *) die "usage: kafka.sh install|start|stop" ;;
esac
