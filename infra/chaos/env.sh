# The chaos stack's ports and addresses, next to `make up`'s defaults so both can run at once.
# Sourced by run.sh and down.sh; each can be overridden from the environment.
export CHAOS_POSTGRES_PORT=${CHAOS_POSTGRES_PORT:-5442} CHAOS_REDIS_PORT=${CHAOS_REDIS_PORT:-6389}
export CLICKHOUSE_HTTP_PORT=${CHAOS_CLICKHOUSE_HTTP_PORT:-8223} CLICKHOUSE_TCP_PORT=${CHAOS_CLICKHOUSE_TCP_PORT:-9100}
if [[ "${TOPOLOGY:-single}" == cluster ]]; then
  # Three brokers reached directly (the answer-losing relay is a single-broker scenario), four
  # ClickHouse servers from the ports above up, ZooKeeper (infra/cluster/).
  export KAFKA_PORT=${CHAOS_KAFKA_PORT:-9292} ZOOKEEPER_PORT=${CHAOS_ZOOKEEPER_PORT:-2281}
  export KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT,127.0.0.1:$((KAFKA_PORT + 2)),127.0.0.1:$((KAFKA_PORT + 4))"
  export CLICKHOUSE_CLUSTER=${CLICKHOUSE_CLUSTER:-tributary}
else
  export KAFKA_PORT=${CHAOS_KAFKA_PORT:-9192} KAFKA_CONTROLLER_PORT=${CHAOS_KAFKA_CONTROLLER_PORT:-9193}
  # Clients reach the broker through a relay the suite can make lose its answers (chaos/kafka-link.ts).
  export KAFKA_LINK_PORT=${CHAOS_KAFKA_LINK_PORT:-9194}
  export KAFKA_ADVERTISED_PORT=$KAFKA_LINK_PORT
  export KAFKA_BROKERS="127.0.0.1:$KAFKA_LINK_PORT"
fi
export FRONT_PORT=${CHAOS_FRONT_PORT:-8600}
export CAPTURE_PORT=$((FRONT_PORT + 10)) DECIDE_PORT=$((FRONT_PORT + 11)) API_PORT=$((FRONT_PORT + 12)) \
  INGEST_PORT=$((FRONT_PORT + 13)) WORKER_PORT=$((FRONT_PORT + 14))
export PUBLIC_URL="http://127.0.0.1:$FRONT_PORT"
export DATABASE_URL="postgres://postgres@127.0.0.1:$CHAOS_POSTGRES_PORT/tributary"
export REDIS_URL="redis://127.0.0.1:$CHAOS_REDIS_PORT/0"
export CLICKHOUSE_URL="http://127.0.0.1:$CLICKHOUSE_HTTP_PORT"
# The suite reads back everything it sent through the management API, faster than a person would.
export API_RATE_LIMIT_PER_MINUTE=1000000
export LOG_LEVEL=${LOG_LEVEL:-warn}
