#!/usr/bin/env bash
# Builds the web console (services/console) into services/console/dist, which nginx serves at /.
# Only when a file it is built from changed since the last build: `make up` stays quick.
source "$(dirname "$0")/lib.sh"

CONSOLE="$ROOT/services/console"
STAMP="$STATE/console.stamp"

if [[ -f "$STAMP" && -f "$CONSOLE/dist/index.html" ]] &&
  [[ -z "$(find "$CONSOLE" "$ROOT/package-lock.json" \( -name node_modules -o -name dist -o -name test \) -prune -o -type f -newer "$STAMP" -print -quit)" ]]; then
  exit 0
fi
log "building the console"
# Stamped with the time the build started: a file saved during it is built next time.
touch "$STAMP.next"
(cd "$ROOT" && npm run --silent build -w services/console >/dev/null)
mv "$STAMP.next" "$STAMP"
