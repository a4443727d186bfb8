#!/usr/bin/env bash
# A Postgres cluster and a Redis server of the state folder's own, for `make chaos`, which stops,
# restarts and flushes them: the machine's shared Postgres and Redis are never touched.
#   stores.sh start|stop|restart postgres|redis
# Ports: CHAOS_POSTGRES_PORT (default 5442), CHAOS_REDIS_PORT (default 6389).
source "$(dirname "$0")/../lib.sh"

PG_PORT=${CHAOS_POSTGRES_PORT:-5442}
REDIS_PORT=${CHAOS_REDIS_PORT:-6389}
PG_DATA="$STATE/postgres"
REDIS_PIDFILE="$STATE/pids/redis.pid"

pg_bin() { echo "/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -1)/bin/$1"; }
# Postgres refuses to run as root, so the cluster belongs to the postgres user Debian's package made.
as_postgres() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

start_postgres() {
  ensure_command pg_ctlcluster postgresql
  if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
    log "creating the chaos postgres cluster"
    mkdir -p "$PG_DATA"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$PG_DATA"
    as_postgres "$(pg_bin initdb)" -D "$PG_DATA" -A trust -U postgres --no-sync >/dev/null
  fi
  if pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then return 0; fi
  log "starting chaos postgres on $PG_PORT"
  touch "$STATE/logs/postgres.log"
  [[ $(id -u) -eq 0 ]] && chown postgres: "$STATE/logs/postgres.log"
  as_postgres "$(pg_bin pg_ctl)" -D "$PG_DATA" -l "$STATE/logs/postgres.log" -w -t 60 \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k /tmp -c max_connections=200" start >/dev/null
  wait_until 30 "chaos postgres" pg_isready -q -h 127.0.0.1 -p "$PG_PORT"
  psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'tributary'" | grep -q 1 ||
    psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE tributary"
}

stop_postgres() {
  [[ -f "$PG_DATA/postmaster.pid" ]] || return 0
  log "stopping chaos postgres"
  as_postgres "$(pg_bin pg_ctl)" -D "$PG_DATA" -m fast -w stop >/dev/null || true
}

start_redis() {
  ensure_command redis-server redis-server
  if redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then return 0; fi
  log "starting chaos redis on $REDIS_PORT"
  # No persistence: a restart is also a flush, which is what the suite wants to survive.
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir "$STATE" --pidfile "$REDIS_PIDFILE" --logfile "$STATE/logs/redis.log"
  wait_until 20 "chaos redis" redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping
}

stop_redis() {
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  wait_until 20 "chaos redis to stop" bash -c "! redis-cli -h 127.0.0.1 -p $REDIS_PORT ping"
  rm -f "$REDIS_PIDFILE"
}

action=${1:-}
shift || true
stores=("${@:-postgres redis}")
# shellcheck disable=SC2206
stores=(${stores[*]})
for store in "${stores[@]}"; do
  case "$action:$store" in
    start:postgres) start_postgres ;;
    start:redis) start_redis ;;
    stop:postgres) stop_postgres ;;
    stop:redis) stop_redis ;;
    restart:postgres) stop_postgres; start_postgres ;;
    restart:redis) stop_redis; start_redis ;;
    *) die "usage: stores.sh start|stop|restart [postgres|redis...]" ;;
  esac
done
