#!/usr/bin/env bash
# Starts or stops cluster mode's ClickHouse: four 18.16 servers as 2 shards x 2 replicas, named
# clickhouse-1..4, on HTTP ports CLICKHOUSE_HTTP_PORT (8123) and up, native ports
# CLICKHOUSE_TCP_PORT (9000) and up, interserver ports 9 above those, each with its own data,
# config folder and macros, coordinated by ZooKeeper (infra/cluster/zookeeper.sh, started first).
source "$(dirname "$0")/../lib.sh"

CLUSTER=${CLICKHOUSE_CLUSTER:-tributary}
ZOOKEEPER_PORT=${ZOOKEEPER_PORT:-2181}
NODES=(1 2 3 4)

http_port() { echo $((${CLICKHOUSE_HTTP_PORT:-8123} + $1 - 1)); }
tcp_port() { echo $((${CLICKHOUSE_TCP_PORT:-9000} + $1 - 1)); }
shard_of() { echo $((($1 + 1) / 2)); }

# A shard runs its part of a distributed query in default_database: the services' SQL names tables
# without a database, and a join with person tables must find the shard's own copies. Servers
# connect to each other as the replica user (its password is in the state folder's
# clickhouse-users.env; infra/clickhouse/users-file.ts adds the user in cluster mode).
replica_xml() {
  printf '        <replica><host>127.0.0.1</host><port>%s</port><default_database>%s</default_database><user>tributary_replica</user><password>%s</password></replica>\n' \
    "$(tcp_port "$1")" "${CLICKHOUSE_DATABASE:-tributary}" "$REPLICA_PASSWORD"
}

# The node's config folder: Debian's config file and overrides in config.d and users.d (beside the
# users file infra/clickhouse/clickhouse.sh writes), readable by the owner alone: they hold the
# replica user's password.
write_config() {
  local n=$1
  local etc="$STATE/clickhouse-$n/etc"
  mkdir -p "$etc/config.d" "$etc/users.d"
  chmod 700 "$etc"
  # Debian's config is the base, so the package must be there first (a fresh machine's first
  # `TOPOLOGY=cluster make up`).
  ensure_command clickhouse-server clickhouse-server clickhouse-client
  cp /etc/clickhouse-server/config.xml "$etc/"
  clickhouse_passwords
  REPLICA_PASSWORD=$(sed -n "s/^REPLICA_CLICKHOUSE_PASSWORD='\(.*\)'\$/\1/p" "$CLICKHOUSE_PASSWORDS")
  cat > "$etc/config.d/cluster.xml" <<XML
<yandex>
  <!-- Replicas fetch parts from each other at this address; the machine's hostname may not be served. -->
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <remote_servers replace="replace">
    <$CLUSTER>
      <!-- Each shard's tables are Replicated*: the replicas copy inserts themselves, so a
           Distributed insert writes to one replica of each shard, never to both. -->
      <shard><internal_replication>true</internal_replication>
$(replica_xml 1)
$(replica_xml 2)
      </shard>
      <shard><internal_replication>true</internal_replication>
$(replica_xml 3)
$(replica_xml 4)
      </shard>
    </$CLUSTER>
    <!-- One replica of each shard, where ALTERs of sharded tables run (topology.ts, alteredTable). -->
    <${CLUSTER}_one_replica_per_shard>
      <shard><internal_replication>true</internal_replication>
$(replica_xml 1)
      </shard>
      <shard><internal_replication>true</internal_replication>
$(replica_xml 3)
      </shard>
    </${CLUSTER}_one_replica_per_shard>
  </remote_servers>
  <zookeeper>
    <node><host>127.0.0.1</host><port>$ZOOKEEPER_PORT</port></node>
    <session_timeout_ms>3000</session_timeout_ms>
    <operation_timeout_ms>3000</operation_timeout_ms>
  </zookeeper>
  <macros>
    <cluster>$CLUSTER</cluster>
    <shard>0$(shard_of "$n")</shard>
    <replica>clickhouse-$n</replica>
  </macros>
</yandex>
XML
  # Session defaults for every client of the cluster, so the services' SQL is the same on one
  # node and on many: an insert into a Distributed table returns only once every shard it wrote
  # to has the rows (ingest commits Kafka offsets after that), and a subquery over a Distributed
  # table inside a distributed query is run once and sent to the shards (GLOBAL), never per shard;
  # and a shard's first replica that answers takes both its inserts and its reads, so what ingest
  # wrote is read back at once rather than from a replica still fetching it.
  cat > "$etc/users.d/cluster.xml" <<XML
<yandex>
  <profiles>
    <default>
      <insert_distributed_sync>1</insert_distributed_sync>
      <distributed_product_mode>global</distributed_product_mode>
      <load_balancing>in_order</load_balancing>
    </default>
  </profiles>
</yandex>
XML
}

node_env() {
  local n=$1
  echo CLICKHOUSE_NODE="clickhouse-$n" CLICKHOUSE_CONFIG="$STATE/clickhouse-$n/etc/config.xml" \
    CLICKHOUSE_HTTP_PORT="$(http_port "$n")" CLICKHOUSE_TCP_PORT="$(tcp_port "$n")" \
    CLICKHOUSE_CLUSTER="$CLUSTER" CLICKHOUSE_SERVERS="${#NODES[@]}"
}

start_node() { write_config "$1"; env $(node_env "$1") "$ROOT/infra/clickhouse/clickhouse.sh" start; }
stop_node() { env $(node_env "$1") "$ROOT/infra/clickhouse/clickhouse.sh" stop; }

case "${1:-}" in
  start) for n in "${NODES[@]}"; do start_node "$n"; done ;;
  stop) for n in "${NODES[@]}"; do stop_node "$n"; done ;;
  start-node) start_node "${2:?node number}" ;;
  stop-node) stop_node "${2:?node number}" ;;
  *) die "usage: clickhouse-cluster.sh start|stop|start-node N|stop-node N" ;;
esac
