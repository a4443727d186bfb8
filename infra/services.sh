#!/usr/bin/env bash
# Starts or stops the five Tributary services in the background, with logs and pid files
# under .tributary/, and waits until each answers its health endpoint. INGEST_REPLICAS (default 1)
# ingest processes join one consumer group; replica N > 1 is named ingest-N and answers its
# health checks on INGEST_PORT + 100 * (N - 1).
source "$(dirname "$0")/lib.sh"

SERVICES=(capture ingest decide api worker)
declare -A PORTS=([capture]=${CAPTURE_PORT:-8010} [decide]=${DECIDE_PORT:-8011} [api]=${API_PORT:-8012} [ingest]=${INGEST_PORT:-8013} [worker]=${WORKER_PORT:-8014})

# Internal destinations batch exports may reach (BATCH_EXPORT_ALLOWED_DESTINATIONS): the stack's
# S3Proxy, where S3_ENDPOINT says, and the machine's Postgres, so the README's export example works.
# The stack's own stores, services and Tributary's database stay refused whatever this says.
s3_host_port=${S3_ENDPOINT:-http://127.0.0.1:8333}; s3_host_port=${s3_host_port#*://}; s3_host_port=${s3_host_port%%/*}
export BATCH_EXPORT_ALLOWED_DESTINATIONS=${BATCH_EXPORT_ALLOWED_DESTINATIONS:-$s3_host_port,127.0.0.1:5432}

healthy() { curl -fsS "http://127.0.0.1:$1/_health" >/dev/null 2>&1; }

# "name service port" for every process of the chosen services.
instances() {
  for service in "${SERVICES[@]}"; do
    echo "$service $service ${PORTS[$service]}"
    if [ "$service" = ingest ]; then
      for ((n = 2; n <= ${INGEST_REPLICAS:-1}; n++)); do echo "ingest-$n ingest $((PORTS[ingest] + 100 * (n - 1)))"; done
    fi
  done
}

# Services run compiled JavaScript (see infra/compile.ts), rebuilt when a file of a workspace or
# the compile script changed since the last build, so that a restart after a code change runs
# that change. Only then: a supervisor restarting one service (the chaos suite does) should not
# wait for, or share the cores with, a build of everything.
compile() {
  local stamp="$STATE/compiled.stamp"
  if [[ -f "$stamp" && -f "$ROOT/services/api/dist/main.js" ]] &&
    [[ -z "$(find "$ROOT/packages" "$ROOT/services" "$ROOT/infra/compile.ts" \( -name node_modules -o -name dist -o -path "$ROOT/services/console" \) -prune -o -type f -newer "$stamp" -print -quit)" ]]; then
    return
  fi
  log "compiling services"
  # Stamped with the time the build started: a file saved during it is built next time.
  touch "$stamp.next"
  (cd "$ROOT" && npx tsx infra/compile.ts >/dev/null)
  mv "$stamp.next" "$stamp"
}

# The ClickHouse user a service connects as: its own, with the password the server's users file
# was written with (infra/clickhouse/clickhouse.sh), where that server made one; otherwise the
# config's (empty keeps its default). Capture and decide do not use ClickHouse.
clickhouse_user() {
  SERVICE_CLICKHOUSE_USER=${CLICKHOUSE_USER:-} SERVICE_CLICKHOUSE_PASSWORD=${CLICKHOUSE_PASSWORD:-}
  [[ -s "$CLICKHOUSE_PASSWORDS" ]] || return 0
  case "$1" in
    ingest | api | worker)
      local name; name=$(echo "$1" | tr a-z A-Z)
      SERVICE_CLICKHOUSE_USER=tributary_$1
      SERVICE_CLICKHOUSE_PASSWORD=$(sed -n "s/^${name}_CLICKHOUSE_PASSWORD='\(.*\)'\$/\1/p" "$CLICKHOUSE_PASSWORDS")
      ;;
  esac
}

start() {
  compile
  while read -r name service port; do
    local pidfile="$STATE/pids/$name.pid"
    if pid_alive "$pidfile"; then log "$name already running"; continue; fi
    log "starting $name"
    # `cd` on its own: `cd && node &` would background a subshell, and its pid is not node's.
    cd "$ROOT"
    local port_env=()
    [ "$service" = ingest ] && port_env=("INGEST_PORT=$port")
    clickhouse_user "$service"
    # Prefix assignments, not arguments: a password in a command line is anyone's to read.
    # shellcheck disable=SC2046 # the flags are words of their own
    CLICKHOUSE_USER=$SERVICE_CLICKHOUSE_USER CLICKHOUSE_PASSWORD=$SERVICE_CLICKHOUSE_PASSWORD env "${port_env[@]}" setsid nohup node $(sh "$ROOT/infra/node-flags.sh" "$service") --conditions=tributary-compiled "services/$service/dist/main.js" < /dev/null >> "$STATE/logs/$name.log" 2>&1 &
    echo $! > "$pidfile"
  done < <(instances)
  while read -r name service port; do
    wait_until 60 "$name (see $STATE/logs/$name.log)" healthy "$port"
  done < <(instances)
  log "services are up"
}

stop() {
  # Replicas a previous start ran beyond today's INGEST_REPLICAS are stopped too.
  for pidfile in "$STATE"/pids/ingest-*.pid; do [ -e "$pidfile" ] && stop_pidfile "$pidfile" "$(basename "$pidfile" .pid)"; done
  for service in "${SERVICES[@]}"; do stop_pidfile "$STATE/pids/$service.pid" "$service"; done
}

command="${1:-}"
# Any further arguments name the services to act on (default: all five).
if [ $# -gt 1 ]; then SERVICES=("${@:2}"); fi

case "$command" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  *) die "usage: services.sh start|stop|restart [service...]" ;;
esac
