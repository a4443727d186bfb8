#!/usr/bin/env bash
# `make down`: stops exactly what `make up` started (Postgres and Redis are the machine's own).
source "$(dirname "$0")/lib.sh"

"$ROOT/infra/nginx/nginx.sh" stop
"$ROOT/infra/services.sh" stop
"$ROOT/infra/clickhouse/clickhouse.sh" stop
"$ROOT/infra/kafka/kafka.sh" stop
"$ROOT/infra/s3proxy/s3proxy.sh" stop
# Cluster mode's stores, where `make up TOPOLOGY=cluster` started them.
"$ROOT/infra/cluster/clickhouse-cluster.sh" stop
"$ROOT/infra/cluster/kafka-cluster.sh" stop
"$ROOT/infra/cluster/zookeeper.sh" stop
