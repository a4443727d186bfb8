#!/usr/bin/env bash
# Installs Debian's clickhouse-server (once) and starts or stops it on 127.0.0.1:${CLICKHOUSE_HTTP_PORT:-8123}
# (native protocol on ${CLICKHOUSE_TCP_PORT:-9000}) with the state folder's own data, without systemd.
source "$(dirname "$0")/../lib.sh"

DATA="$STATE/clickhouse"
PIDFILE="$STATE/pids/clickhouse.pid"
HTTP_PORT=${CLICKHOUSE_HTTP_PORT:-8123}
TCP_PORT=${CLICKHOUSE_TCP_PORT:-9000}

ping() { [[ "$(curl -fsS "http://127.0.0.1:$HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]]; }

start() {
  ensure_command clickhouse-server clickhouse-server clickhouse-client
  ensure_command curl curl
  if ping; then log "clickhouse already running"; return 0; fi
  mkdir -p "$DATA"/{data,tmp,user_files,format_schemas}
  log "starting clickhouse"
  # A failed daemon start still exits 0, so success is only ever judged by /ping below.
  clickhouse-server --config-file=/etc/clickhouse-server/config.xml --pid-file="$PIDFILE" --daemon -- \
    --path="$DATA/data/" --tmp_path="$DATA/tmp/" --user_files_path="$DATA/user_files/" \
    --format_schema_path="$DATA/format_schemas/" --http_port="$HTTP_PORT" --tcp_port="$TCP_PORT" --interserver_http_port=$((TCP_PORT + 9)) \
    --logger.log="$STATE/logs/clickhouse.log" --logger.errorlog="$STATE/logs/clickhouse.err.log" \
    >> "$STATE/logs/clickhouse.log" 2>&1 || true
  wait_until 60 "clickhouse (see $STATE/logs/clickhouse.err.log)" ping
}

case "${1:-}" in
  start) start ;;
  stop) stop_pidfile "$PIDFILE" clickhouse ;;
  *) die "usage: clickhouse.sh start|stop" ;;
esac
