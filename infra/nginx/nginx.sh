#!/usr/bin/env bash
# Installs Debian's nginx (once) and runs it as the front door on 127.0.0.1:${FRONT_PORT:-8000}.
source "$(dirname "$0")/../lib.sh"

PIDFILE="$STATE/pids/nginx.pid"
CONF="$STATE/nginx/nginx.conf"

start() {
  ensure_command nginx nginx-light
  mkdir -p "$STATE/nginx"
  local user=""
  # Workers must read and write the temp folders under the state folder, which root owns.
  [[ $(id -u) -eq 0 ]] && user="user root;"
  sed -e "s#__STATE__#$STATE#g" -e "s#__ROOT__#$ROOT#g" -e "s#__USER__#$user#" \
      -e "s#__FRONT_PORT__#${FRONT_PORT:-8000}#" -e "s#__CAPTURE_PORT__#${CAPTURE_PORT:-8010}#" \
      -e "s#__DECIDE_PORT__#${DECIDE_PORT:-8011}#" -e "s#__API_PORT__#${API_PORT:-8012}#" \
      "$ROOT/infra/nginx/nginx.conf.template" > "$CONF.next"
  # Checked before it replaces the config a running nginx would reload.
  nginx -t -q -c "$CONF.next" -p "$STATE/nginx" 2>>"$STATE/logs/nginx.error.log" || die "nginx refused its config (see $STATE/logs/nginx.error.log)"
  mv "$CONF.next" "$CONF"
  # A running nginx reloads it: its old workers finish the requests they hold, so a route change
  # applies without dropping one.
  if pid_alive "$PIDFILE"; then
    log "nginx already running; reloading its config"
    kill -HUP "$(cat "$PIDFILE")"
    return 0
  fi
  log "starting nginx"
  nginx -c "$CONF" -p "$STATE/nginx" -g "error_log $STATE/logs/nginx.error.log warn;" 2>>"$STATE/logs/nginx.error.log"
  wait_until 20 "nginx" port_open 127.0.0.1 "${FRONT_PORT:-8000}"
}

case "${1:-}" in
  start) start ;;
  stop) stop_pidfile "$PIDFILE" nginx ;;
  *) die "usage: nginx.sh start|stop" ;;
esac
