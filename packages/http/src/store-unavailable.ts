/** Socket failures: the store is not there, or went away mid-request. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/** Failures pg and pg-pool report without a code, and ioredis's when Redis does not answer. */
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|^Connection is closed|^Command timed out/i;

/** kafkajs errors that mean no broker took the request. */
const KAFKA_UNAVAILABLE = new Set(['KafkaJSConnectionError', 'KafkaJSNumberOfRetriesExceeded', 'KafkaJSRequestTimeoutError', 'KafkaJSBrokerNotFound']);

/**
 * ClickHouse's codes for a server or shard it needs being away: a socket timeout or network error
 * to another server, every replica of a shard unreachable, ZooKeeper lost or a replica read-only
 * without it, an insert whose outcome is unknown. On a cluster a query then answers 503, never a
 * partial result (skip_unavailable_shards stays off), and ingest waits.
 */
const CLICKHOUSE_UNAVAILABLE = new Set([209, 210, 225, 242, 279, 285, 286, 319, 999]);

/**
 * Whether an error means a store (Postgres, ClickHouse, Redis, Kafka) is away or not answering,
 * rather than that the work itself is wrong: the same work can succeed once it is back. Wrapping
 * errors (a pool timeout, the ClickHouse adapter's) are looked through to their `cause`.
 */
export function isStoreUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
    const sqlState = String(code ?? '');
    // Postgres connection exceptions (class 08), admin shutdown, crash shutdown and cannot-connect-now (57P0x).
    if (NETWORK_CODES.has(sqlState) || /^08...$/.test(sqlState) || sqlState.startsWith('57P')) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
    if (name === 'MaxRetriesPerRequestError' || KAFKA_UNAVAILABLE.has(String(name))) return true;
    if (name === 'ClickHouseError' && typeof code === 'number' && CLICKHOUSE_UNAVAILABLE.has(code)) return true;
  }
  return false;
}
