# The two commands a newcomer needs: `make up` and `make test`. See README.md.
.PHONY: up down test unit typecheck install restart logs chaos FORCE

NPM_FLAGS := --no-audit --no-fund --loglevel=error

# Every target runs on the project's Node: the one infra/node.sh installed into .tributary/node
# when the machine's was older, else the machine's own (the folder is then absent). Keep in step
# with infra/node-path.sh, which does the same for the infra scripts and for a shell.
export PATH := $(CURDIR)/.tributary/node/bin:$(PATH)

# TOPOLOGY=cluster runs every target on cluster mode's stores (docs/cluster.md): ZooKeeper, four
# ClickHouse servers (2 shards x 2 replicas), three Kafka brokers; the services and tests are
# told where they are here.
TOPOLOGY ?= single
export TOPOLOGY
ifeq ($(TOPOLOGY),cluster)
export CLICKHOUSE_CLUSTER ?= tributary
export KAFKA_BROKERS ?= 127.0.0.1:9092,127.0.0.1:9094,127.0.0.1:9096
endif

# nodedir: a native module built from source gets the headers of the Node that runs, not those
# of the machine's npm configuration (nodedir=/usr on these machines, Node 20's).
node_modules: package-lock.json patches $(wildcard patches/*.patch) .tributary/node.version
	npm_config_nodedir="$$(node -p 'require("node:path").resolve(process.execPath, "../..")')" npm ci $(NPM_FLAGS)
	@touch node_modules

# Names the Node that runs, and changes only when that does (a new install, or the machine's own
# Node upgraded), so node_modules is installed again by, and for, the Node that runs it.
.tributary/node.version: FORCE
	bash infra/node.sh
FORCE:

install: node_modules

## Install what is missing and start Kafka, ClickHouse, nginx, the five services; print credentials.
up: node_modules
	bash infra/up.sh

## Stop everything `make up` started.
down:
	bash infra/down.sh

## Restart only the five services (after a code change).
restart: node_modules
	bash infra/services.sh restart

## The whole suite against real stores: starts what it needs (and Debian's chromium for the browser test), typechecks, runs unit and integration tests.
test: up
	bash infra/chromium.sh
	npm run --silent typecheck
	npm test --silent

## Pure unit tests only, no stores needed.
unit: node_modules
	npm run --silent test:unit

## The fault-injection and hostile-input suite (about 12 minutes), on a stack of its own; not part of `make test`.
chaos: node_modules
	bash infra/chaos/run.sh
