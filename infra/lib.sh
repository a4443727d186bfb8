# Shared helpers for the infra scripts. Sourced, not executed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE="${TRIBUTARY_STATE_DIR:-$ROOT/.tributary}"
mkdir -p "$STATE/logs" "$STATE/pids"
source "$ROOT/infra/node-path.sh"

log() { printf '[tributary] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every half second.
wait_until() {
  local seconds=$1 what=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then die "$what did not come up within ${seconds}s"; fi
    sleep 0.5
  done
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# A zombie is dead: where PID 1 does not reap orphans (as on these machines), a killed service
# lingers as one, and its pid still answers kill -0.
pid_alive() {
  [[ -f "$1" ]] || return 1
  local pid; pid=$(cat "$1")
  kill -0 "$pid" 2>/dev/null && [[ "$(sed -E 's/.*\) ([A-Za-z]).*/\1/' "/proc/$pid/stat" 2>/dev/null)" != Z ]]
}

# stop_pidfile FILE NAME: SIGTERM, wait up to 20s, then SIGKILL.
stop_pidfile() {
  local file=$1 name=$2
  if pid_alive "$file"; then
    local pid; pid=$(cat "$file")
    log "stopping $name (pid $pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

# ClickHouse's service users' passwords (infra/clickhouse/clickhouse.sh writes them into the
# server's users file, infra/services.sh gives each service its own), made once per state folder:
# random, readable by this machine's owner alone.
CLICKHOUSE_PASSWORDS="$STATE/clickhouse-users.env"
clickhouse_passwords() {
  [[ -s "$CLICKHOUSE_PASSWORDS" ]] && return 0
  local name
  (
    umask 077
    for name in INGEST API WORKER REPLICA; do
      printf "%s_CLICKHOUSE_PASSWORD='%s'\n" "$name" "$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
    done > "$CLICKHOUSE_PASSWORDS.next"
  )
  mv "$CLICKHOUSE_PASSWORDS.next" "$CLICKHOUSE_PASSWORDS"
}

APT_UPDATED=0
# ensure_command COMMAND DEBIAN_PACKAGE...: installs the packages when COMMAND is missing.
ensure_command() {
  local command=$1; shift
  command -v "$command" >/dev/null 2>&1 && return 0
  log "installing $* from Debian's packages"
  if ((APT_UPDATED == 0)); then apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# fetch_maven_jars NAME POM LIBS: Java 17 and Maven, then (once) the jars the pom names, into LIBS.
fetch_maven_jars() {
  ensure_command java openjdk-17-jre-headless
  ensure_command mvn maven
  if [[ ! -f "$3/.complete" ]]; then
    log "fetching $1 jars from Maven Central"
    mvn -q -B -f "$2" dependency:copy-dependencies -DoutputDirectory="$3"
    touch "$3/.complete"
  fi
}
