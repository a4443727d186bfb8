#!/usr/bin/env bash
# Starts or stops the five Tributary services in the background, with logs and pid files
# under .tributary/, and waits until each answers its health endpoint.
source "$(dirname "$0")/lib.sh"

SERVICES=(capture ingest decide api worker)
declare -A PORTS=([capture]=${CAPTURE_PORT:-8010} [decide]=${DECIDE_PORT:-8011} [api]=${API_PORT:-8012} [ingest]=${INGEST_PORT:-8013} [worker]=${WORKER_PORT:-8014})

healthy() { curl -fsS "http://127.0.0.1:$1/_health" >/dev/null 2>&1; }

start() {
  for service in "${SERVICES[@]}"; do
    local pidfile="$STATE/pids/$service.pid"
    if pid_alive "$pidfile"; then log "$service already running"; continue; fi
    log "starting $service"
    # `cd` on its own: `cd && node &` would background a subshell, and its pid is not node's.
    cd "$ROOT"
    setsid nohup node --import tsx "services/$service/src/main.ts" < /dev/null >> "$STATE/logs/$service.log" 2>&1 &
    echo $! > "$pidfile"
  done
  for service in "${SERVICES[@]}"; do
    wait_until 60 "$service (see $STATE/logs/$service.log)" healthy "${PORTS[$service]}"
  done
  log "services are up"
}

stop() {
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
