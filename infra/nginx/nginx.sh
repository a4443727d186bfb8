#!/usr/bin/env bash
# Installs Debian's nginx (once) and runs it as the front door on 127.0.0.1:${FRONT_PORT:-8000}.
source "$(dirname "$0")/../lib.sh"

PIDFILE="$STATE/pids/nginx.pid"
CONF="$STATE/nginx/nginx.conf"

start() {
  ensure_command nginx nginx-light
  if pid_alive "$PIDFILE"; then log "nginx already running"; return 0; fi
  mkdir -p "$STATE/nginx"
  local user=""
  # Workers must read and write the temp folders under the state folder, which root owns.
  [[ $(id -u) -eq 0 ]] && user="user root;"
  sed -e "s#__STATE__#$STATE#g" -e "s#__USER__#$user#" \
      -e "s#__FRONT_PORT__#${FRONT_PORT:-8000}#" -e "s#__CAPTURE_PORT__#${CAPTURE_PORT:-8010}#" \
      -e "s#__DECIDE_PORT__#${DECIDE_PORT:-8011}#" -e "s#__API_PORT__#${API_PORT:-8012}#" \
      "$ROOT/infra/nginx/nginx.conf.template" > "$CONF"
  log "starting nginx"
  nginx -c "$CONF" -p "$STATE/nginx" -g "error_log $STATE/logs/nginx.error.log warn;" 2>>"$STATE/logs/nginx.error.log"
  wait_until 20 "nginx" port_open 127.0.0.1 "${FRONT_PORT:-8000}"
}

case "${1:-}" in
  start) start ;;
  stop) stop_pidfile "$PIDFILE" nginx ;;
  *) die "usage: nginx.sh start|stop" ;;
esac
