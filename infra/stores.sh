#!/usr/bin/env bash
# Makes sure Postgres and Redis, which machines of this kind run already, are up; installs and
# starts them from Debian's packages where they are missing. Never stops them: they are shared.
source "$(dirname "$0")/lib.sh"

ensure_postgres() {
  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    ensure_command pg_ctlcluster postgresql
    log "starting postgres"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start || true
    wait_until 30 "postgres" pg_isready -q -h 127.0.0.1 -p 5432
  fi
}

ensure_redis() {
  ensure_command redis-cli redis-tools
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    ensure_command redis-server redis-server
    log "starting redis"
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
    wait_until 20 "redis" redis-cli -h 127.0.0.1 -p 6379 ping
  fi
}

ensure_postgres
ensure_redis
