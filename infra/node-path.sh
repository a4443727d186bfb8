# Puts the Node that infra/node.sh installed into .tributary/node, where it did, first on PATH, as
# the Makefile does for its targets. Sourced by infra/lib.sh for every infra script; source it in a
# shell to run the CLI or a bench by hand on the project's Node:
#   source infra/node-path.sh
# Without that folder the machine's own Node was new enough, and PATH stays as it is.
tributary_node_bin="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tributary/node/bin"
if [[ -x "$tributary_node_bin/node" && ":$PATH:" != *":$tributary_node_bin:"* ]]; then
  export PATH="$tributary_node_bin:$PATH"
fi
unset tributary_node_bin
