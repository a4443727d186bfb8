#!/usr/bin/env bash
# Installs Debian's clickhouse-server (once) and starts or stops it on 127.0.0.1:${CLICKHOUSE_HTTP_PORT:-8123}
# (native protocol on ${CLICKHOUSE_TCP_PORT:-9000}) with the state folder's own data, without systemd.
# Cluster mode (infra/cluster/clickhouse-cluster.sh) starts each of its servers through this
# script, naming it with CLICKHOUSE_NODE and giving it a config folder of its own.
source "$(dirname "$0")/../lib.sh"

NODE=${CLICKHOUSE_NODE:-clickhouse}
DATA="$STATE/$NODE"
PIDFILE="$STATE/pids/$NODE.pid"
CONFIG=${CLICKHOUSE_CONFIG:-/etc/clickhouse-server/config.xml}
HTTP_PORT=${CLICKHOUSE_HTTP_PORT:-8123}
TCP_PORT=${CLICKHOUSE_TCP_PORT:-9000}
INTERSERVER_PORT=${CLICKHOUSE_INTERSERVER_PORT:-$((TCP_PORT + 9))}

ping() { [[ "$(curl -fsS "http://127.0.0.1:$HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]]; }

start() {
  ensure_command clickhouse-server clickhouse-server clickhouse-client
  ensure_command curl curl
  if ping; then log "$NODE already running"; return 0; fi
  mkdir -p "$DATA"/{data,tmp,user_files,format_schemas}
  log "starting $NODE"
  # A failed daemon start still exits 0, so success is only ever judged by /ping below.
  clickhouse-server --config-file="$CONFIG" --pid-file="$PIDFILE" --daemon -- \
    --path="$DATA/data/" --tmp_path="$DATA/tmp/" --user_files_path="$DATA/user_files/" \
    --format_schema_path="$DATA/format_schemas/" --http_port="$HTTP_PORT" --tcp_port="$TCP_PORT" --interserver_http_port="$INTERSERVER_PORT" \
    --logger.log="$STATE/logs/$NODE.log" --logger.errorlog="$STATE/logs/$NODE.err.log" \
    >> "$STATE/logs/$NODE.log" 2>&1 || true
  wait_until 60 "$NODE (see $STATE/logs/$NODE.err.log)" ping
}

case "${1:-}" in
  start) start ;;
  stop) stop_pidfile "$PIDFILE" "$NODE" ;;
  *) die "usage: clickhouse.sh start|stop" ;;
esac
