#!/usr/bin/env bash
# Starts or stops a standalone ZooKeeper on 127.0.0.1:${ZOOKEEPER_PORT:-2181} for cluster mode,
# from the ZooKeeper jars that Apache Kafka's own dependencies bring (infra/kafka/pom.xml).
source "$(dirname "$0")/../lib.sh"

DIR="$STATE/zookeeper"
PIDFILE="$STATE/pids/zookeeper.pid"
PORT=${ZOOKEEPER_PORT:-2181}
LIBS="$ROOT/.tributary/kafka/libs"
JAVA=(java -Xms64m -Xmx256m -Dzookeeper.admin.enableServer=false -Dlog4j.configuration="file:$ROOT/infra/kafka/log4j.properties" -cp "$LIBS/*")

# True once a client completes a real session: ClickHouse 18.16's DDL worker dies if ZooKeeper
# answers `ruok` but cannot yet open sessions, and ON CLUSTER statements then hang.
session_works() {
  timeout 20 "${JAVA[@]}" org.apache.zookeeper.ZooKeeperMain -server "127.0.0.1:$PORT" ls / 2>/dev/null | grep -q '\[.*zookeeper.*\]'
}

start() {
  "$ROOT/infra/kafka/kafka.sh" install
  if pid_alive "$PIDFILE"; then log "zookeeper already running"; return 0; fi
  port_open 127.0.0.1 "$PORT" && die "port $PORT is taken by a process this project did not start"
  mkdir -p "$DIR/data"
  # Short session timeouts: a ClickHouse replica restarted after kill -9 must be able to take
  # over its own ephemeral nodes within seconds, not after the default 30 s expiry.
  cat > "$DIR/zoo.cfg" <<CFG
dataDir=$DIR/data
clientPort=$PORT
clientPortAddress=127.0.0.1
tickTime=500
minSessionTimeout=1000
maxSessionTimeout=3000
maxClientCnxns=0
4lw.commands.whitelist=ruok,stat
CFG
  log "starting zookeeper"
  setsid nohup "${JAVA[@]}" org.apache.zookeeper.server.quorum.QuorumPeerMain "$DIR/zoo.cfg" >> "$STATE/logs/zookeeper.log" 2>&1 &
  echo $! > "$PIDFILE"
  wait_until 60 "zookeeper (see $STATE/logs/zookeeper.log)" session_works
}

case "${1:-}" in
  start) start ;;
  stop) stop_pidfile "$PIDFILE" zookeeper ;;
  *) die "usage: zookeeper.sh start|stop" ;;
esac
