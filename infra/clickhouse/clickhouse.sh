#!/usr/bin/env bash
# Installs Debian's clickhouse-server (once) and starts or stops it on 127.0.0.1:${CLICKHOUSE_HTTP_PORT:-8123}
# (native protocol on ${CLICKHOUSE_TCP_PORT:-9000}) with the state folder's own data, without systemd.
# Cluster mode (infra/cluster/clickhouse-cluster.sh) starts each of its servers through this
# script, naming it with CLICKHOUSE_NODE and giving it a config folder of its own.
# Every start writes the server's users file (infra/clickhouse/users-file.ts): a password for
# every user, each service's own user, the caps; the server listens on 127.0.0.1 only and runs
# under an address-space limit (RLIMIT_AS), so that a query escaping every cap fails rather than
# the kernel killing the server (docs/security.md, "Service and store").
source "$(dirname "$0")/../lib.sh"

NODE=${CLICKHOUSE_NODE:-clickhouse}
DATA="$STATE/$NODE"
PIDFILE="$STATE/pids/$NODE.pid"
CONFIG=${CLICKHOUSE_CONFIG:-/etc/clickhouse-server/config.xml}
HTTP_PORT=${CLICKHOUSE_HTTP_PORT:-8123}
TCP_PORT=${CLICKHOUSE_TCP_PORT:-9000}
INTERSERVER_PORT=${CLICKHOUSE_INTERSERVER_PORT:-$((TCP_PORT + 9))}
# What this server may take in all, its address-space limit: two thirds of the machine's memory,
# shared by the CLICKHOUSE_SERVERS servers of this machine (cluster mode runs four). Its users'
# memory caps and its mark cache follow from it.
MEMORY_BYTES=${CLICKHOUSE_MEMORY_BYTES:-$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 * 2 / 3 / ${CLICKHOUSE_SERVERS:-1}))}

ping() { [[ "$(curl -fsS "http://127.0.0.1:$HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]]; }

start() {
  ensure_command clickhouse-server clickhouse-server clickhouse-client
  ensure_command curl curl
  if ping; then log "$NODE already running"; return 0; fi
  ensure_command prlimit util-linux
  mkdir -p "$DATA"/{data,tmp,user_files,format_schemas,etc}
  clickhouse_passwords
  # users.d/ beside it (cluster mode's session defaults) is merged in.
  (cd "$ROOT" && npx tsx infra/clickhouse/users-file.ts "$CLICKHOUSE_PASSWORDS" "$DATA/etc/users.xml" "$MEMORY_BYTES")
  log "starting $NODE"
  # A failed daemon start still exits 0, so success is only ever judged by /ping below.
  # listen_host given once replaces Debian's two (127.0.0.1 and ::1): the stack's clients use IPv4.
  # jemalloc keeps the address space of memory it freed (retain) unless told not to: under the
  # address-space limit a server that had run heavy queries then failed every allocation with
  # errno 12 (mremap) while holding 0.2 GB resident and 16 GB of retained address space.
  MALLOC_CONF=retain:false prlimit --as="$MEMORY_BYTES" clickhouse-server --config-file="$CONFIG" --pid-file="$PIDFILE" --daemon -- \
    --path="$DATA/data/" --tmp_path="$DATA/tmp/" --user_files_path="$DATA/user_files/" \
    --format_schema_path="$DATA/format_schemas/" --http_port="$HTTP_PORT" --tcp_port="$TCP_PORT" --interserver_http_port="$INTERSERVER_PORT" \
    --listen_host=127.0.0.1 --users_config="$DATA/etc/users.xml" --mark_cache_size="$((MEMORY_BYTES / 8))" \
    --logger.log="$STATE/logs/$NODE.log" --logger.errorlog="$STATE/logs/$NODE.err.log" \
    >> "$STATE/logs/$NODE.log" 2>&1 || true
  wait_until 60 "$NODE (see $STATE/logs/$NODE.err.log)" ping
}

case "${1:-}" in
  start) start ;;
  stop) stop_pidfile "$PIDFILE" "$NODE" ;;
  *) die "usage: clickhouse.sh start|stop" ;;
esac
