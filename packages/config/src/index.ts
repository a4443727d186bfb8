import { availableParallelism } from 'node:os';
import { Ajv, type JSONSchemaType } from 'ajv';

/**
 * Every setting Tributary reads, in one place. Nothing else in the code base reads
 * `process.env`; services call `loadConfig()` once at start-up and pass values down.
 * Defaults work on a developer machine brought up by `make up`.
 */
export interface Config {
  /**
   * TRIBUTARY_ENV: `development` (the default), `test` or `production`. In production a process
   * refuses to start while a secret it uses keeps its development default or a store's URL has no
   * password (PRODUCTION_SECRETS), naming each such variable.
   */
  env: 'development' | 'test' | 'production';
  /** LOG_LEVEL: pino level. */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** HOST: interface the HTTP services bind to. */
  host: string;
  /**
   * TRUSTED_PROXIES: the proxies whose X-Forwarded-For gives a client's address (GeoIP, an
   * event's `ip`), comma-separated: addresses, CIDR ranges, or `loopback`, `linklocal`,
   * `uniquelocal`, as Express's `trust proxy` takes them. The default trusts the address nginx
   * connects from on one machine, and no other, not even the rest of 127/8; a load balancer in
   * front of it must be added, or every client gets the proxy's address. A proxy not listed
   * cannot set a client's address.
   */
  trustedProxies: string[];
  /** CAPTURE_PORT, DECIDE_PORT, API_PORT, INGEST_PORT, WORKER_PORT: health and HTTP ports. */
  capturePort: number;
  decidePort: number;
  apiPort: number;
  ingestPort: number;
  workerPort: number;
  /** PUBLIC_URL: base URL clients use (the nginx front door); used to build `next` links. */
  publicUrl: string;
  /** DATABASE_URL: Postgres connection string. */
  databaseUrl: string;
  /** REDIS_URL: Redis connection string. */
  redisUrl: string;
  /** KAFKA_BROKERS: comma-separated host:port list. */
  kafkaBrokers: string[];
  /** KAFKA_CLIENT_ID: client id prefix for producers and consumers. */
  kafkaClientId: string;
  /** KAFKA_TOPIC_PREFIX: prepended to every topic name, so test runs and tenants can be isolated. */
  kafkaTopicPrefix: string;
  /** KAFKA_PARTITIONS: partitions per topic; topics are created with it and grown to it at start-up. */
  kafkaPartitions: number;
  /**
   * KAFKA_RETENTION_HOURS: how long the event topics (and the dead-letter topic) keep messages,
   * set on each topic by `tributary kafka:topics`. A week, by default: ingest can be down that
   * long without losing an event capture took, a replayed message still lands on events it can
   * fold with, and a dead letter can be read and sent again once its cause is fixed. Disk grows
   * with it (docs/production.md).
   */
  kafkaRetentionHours: number;
  /** INGEST_CONSUMER_GROUP: consumer group of the ingest service. */
  ingestConsumerGroup: string;
  /** CLICKHOUSE_URL: ClickHouse HTTP endpoint. */
  clickhouseUrl: string;
  /** CLICKHOUSE_DATABASE: database holding Tributary's tables. */
  clickhouseDatabase: string;
  /**
   * CLICKHOUSE_USER, CLICKHOUSE_PASSWORD: the ClickHouse user this process connects as. The
   * default is the local stack's administrator (migrations, the CLI, tests) with a development
   * password, written into the users file `make up` generates; infra/services.sh gives each
   * service its own user instead, and production sets both (docs/security.md).
   */
  clickhouseUser: string;
  clickhousePassword: string;
  /**
   * QUERY_CLICKHOUSE_USER, QUERY_CLICKHOUSE_PASSWORD: the read-only ClickHouse user (readonly 2,
   * the ClickHouse database alone) the api runs query endpoint statements as, so that SQL a
   * client shaped cannot write, whatever the printer let through. Development password by default.
   */
  queryClickhouseUser: string;
  queryClickhousePassword: string;
  /**
   * CLICKHOUSE_CLUSTER: the cluster (remote_servers) the tables live on; empty, the default, is
   * a single server. Set, migrations run ON CLUSTER with Replicated engines and events are sharded
   * behind a Distributed table (docs/cluster.md).
   */
  clickhouseCluster: string;
  /** SHUTDOWN_TIMEOUT_MS: how long a service waits for in-flight work on SIGTERM. */
  shutdownTimeoutMs: number;
  /** API_KEY_PEPPER: server-side secret mixed into personal API key hashes. */
  apiKeyPepper: string;
  /** CAPTURE_MAX_BATCH_BYTES: body limit of `/batch/`, after decompression. */
  captureMaxBatchBytes: number;
  /** CAPTURE_MAX_EVENT_BYTES: body limit of every other capture route, after decompression. */
  captureMaxEventBytes: number;
  /** CAPTURE_OVERFLOW_EVENTS_PER_SECOND: one distinct id sending faster than this goes to the overflow topic. */
  captureOverflowEventsPerSecond: number;
  /**
   * CAPTURE_KAFKA_PRODUCERS: Kafka producers each capture process spreads keys over; each has one
   * produce request in flight. One, the default, gathers the most requests into each produce
   * request, which costs the least CPU per event. More help where the broker's round trip, rather
   * than CPU, is what a producer waits on.
   */
  captureKafkaProducers: number;
  /**
   * CAPTURE_WORKERS, DECIDE_WORKERS: processes (node:cluster workers sharing the port) per
   * service; 0, the default, means one per core. Both are CPU-bound, and one process uses one
   * core. `/metrics` sums the workers' figures.
   */
  captureWorkers: number;
  decideWorkers: number;
  /**
   * DECIDE_PERSON_COPIES: persons each decide process keeps in memory, most recently asked
   * first, while Redis tracks their keys and says when ingest changes one (client-side caching);
   * 0 reads every person from Redis. About 1 KB each.
   */
  decidePersonCopies: number;
  /**
   * DECIDE_REMEMBERED_ANSWERS: flag answers each decide process keeps by request (body, query,
   * content headers and client address), given again to the same request while the project's
   * definitions and the person copy they came from are unchanged (see RememberedAnswers in
   * services/decide); 0 works out every answer. About 1.5 KB each for 50 flags.
   */
  decideRememberedAnswers: number;
  /**
   * INGEST_PARTITIONS_CONCURRENTLY: partitions whose chunks one ingest process works on at the same
   * time (each holds a Postgres connection). Two, the default, keep a core busy while one chunk
   * waits for Postgres; more add memory without adding throughput on a small machine.
   */
  ingestPartitionsConcurrently: number;
  /**
   * INGEST_MAX_QUEUED_EVENTS: events one ingest process holds taken from Kafka and not yet in a
   * chunk, shared by its busy partitions (at most a chunk each); a partition holding its share is
   * paused. Its share bounds how large chunks grow, and a chunk costs Postgres and ClickHouse a
   * fixed number of statements and writes each person once however many events touch it, so a
   * larger queue means less work per event and more memory; the queue is much of ingest's memory.
   * The default is about the least that keeps chunks large enough: below it, Postgres's CPU per
   * event climbs steeply; above it, memory grows for little more throughput unless the process's
   * main thread is busy throughout. Two processes of four partitions each already reach the most
   * a chunk may hold at the default (see IngestConsumerOptions.chunkSize), so more changes
   * nothing for them.
   */
  ingestMaxQueuedEvents: number;
  /**
   * INGEST_INSERT_INTERVAL_MS: least time between the starts of two ClickHouse inserts of one
   * ingest process; rows finished meanwhile go into the next insert, which starts early once
   * INGEST_INSERT_MAX_ROWS wait. Fewer, larger inserts make fewer parts for ClickHouse to merge,
   * at the cost of up to this much delay before events show.
   */
  ingestInsertIntervalMs: number;
  /**
   * INGEST_INSERT_QUIET_INTERVAL_MS: the same least time while the process has caught up (no
   * partition has events queued and no chunk is in processing): no more rows would come to join
   * the waiting ones, so they go once this much time has passed since the previous insert started.
   * Events of a burst that ended, or of a quiet stream, show within it rather than within
   * INGEST_INSERT_INTERVAL_MS, at the cost of up to four inserts a second per process at the
   * default while traffic trickles in. Never more than INGEST_INSERT_INTERVAL_MS.
   */
  ingestInsertQuietIntervalMs: number;
  /** INGEST_INSERT_MAX_ROWS: rows (of all tables) that start an insert before the interval is over. */
  ingestInsertMaxRows: number;
  /** API_RATE_LIMIT_PER_MINUTE: management API requests one personal API key may make per minute. */
  apiRateLimitPerMinute: number;
  /** QUERY_MAX_EXECUTION_TIME_S: ClickHouse stops a query endpoint query running longer than this. */
  queryMaxExecutionTimeS: number;
  /** QUERY_MAX_MEMORY_BYTES: ClickHouse refuses a query endpoint query that needs more memory than this. */
  queryMaxMemoryBytes: number;
  /** QUERY_MAX_THREADS: threads one query endpoint query may use in ClickHouse (0: ClickHouse's own default, one per core). */
  queryMaxThreads: number;
  /**
   * QUERY_CONCURRENCY_PER_PROJECT: query endpoint queries one project may run at once in one api
   * process; more are answered 429, so one project's heavy queries cannot queue out the others'.
   */
  queryConcurrencyPerProject: number;
  /**
   * DASHBOARD_TILE_CONCURRENCY: tiles one dashboard read computes at once, each a query of the
   * project's; at most QUERY_CONCURRENCY_PER_PROJECT, so a dashboard never throttles its own tiles.
   */
  dashboardTileConcurrency: number;
  /** MATERIALIZED_COLUMNS_MAX: materialized property columns `events` may have in all; each costs every insert a little. */
  materializedColumnsMax: number;
  /** MATERIALIZE_TOP_N: how many of the most read properties `tributary properties:auto` gives a column, at most, per run. */
  materializeTopN: number;
  /** MATERIALIZE_MIN_READS: reads (counted by the query endpoint) a property needs before `properties:auto` gives it a column. */
  materializeMinReads: number;
  /** KAFKA_PRODUCE_TIMEOUT_MS: how long capture waits for Kafka's acknowledgement before answering 503. */
  kafkaProduceTimeoutMs: number;
  /**
   * COHORT_CALCULATION_INTERVAL_MIN: how old a behavioural cohort's members may get before the
   * worker calculates them again, and how long it waits after a failed calculation. 15, as
   * PostHog's scheduler: flags targeting "did X in the last N days" stay within minutes of the
   * events, while a project's cohorts cost ClickHouse a scan of their events four times an hour.
   */
  cohortCalculationIntervalMin: number;
  /**
   * COHORT_CALCULATION_TICK_MS: how often the worker looks for cohorts due (new, edited, or
   * older than the interval): a created or edited cohort is calculated within it.
   */
  cohortCalculationTickMs: number;
  /** COHORT_CALCULATION_CONCURRENCY: cohorts one worker process calculates at once. */
  cohortCalculationConcurrency: number;
  /** COHORT_CALCULATION_MAX_EXECUTION_TIME_S: ClickHouse stops a cohort's members query running longer than this (its memory is QUERY_MAX_MEMORY_BYTES's). */
  cohortCalculationMaxExecutionTimeS: number;
  /** BATCH_EXPORT_TICK_MS: how often the worker looks for due export windows and waiting runs. */
  batchExportTickMs: number;
  /** BATCH_EXPORT_SETTLE_S: how long after a window ends its run starts, for inserts stored in it to be visible. */
  batchExportSettleS: number;
  /** BATCH_EXPORT_PART_RECORDS: rows an export writes, and records as done, at once. */
  batchExportPartRecords: number;
  /**
   * BATCH_EXPORT_PARTS_IN_FLIGHT: parts an export writes at once; each holds its rows and their
   * encoding in memory until written, and more than a few only queue at the destination.
   */
  batchExportPartsInFlight: number;
  /** BATCH_EXPORT_LEASE_MS: how long a worker holds a run without progress before another resumes it. */
  batchExportLeaseMs: number;
  /** BATCH_EXPORT_ATTEMPTS, BATCH_EXPORT_BACKOFF_MS: attempts of a failing run before it fails, the first this far apart, doubling. */
  batchExportAttempts: number;
  batchExportBackoffMs: number;
  /** BATCH_EXPORT_CONCURRENCY: runs one worker process runs at once. */
  batchExportConcurrency: number;
  /**
   * BATCH_EXPORT_ALLOWED_DESTINATIONS: internal destinations batch exports may reach, comma-separated:
   * `host:port` (a name, an IPv4 address or `[IPv6]:port`), a CIDR range on any port (`10.0.0.0/8`,
   * `fd00::/8`), or a CIDR range on one port (`10.0.0.0/8:5432`, `[fd00::/8]:5432`). An export's
   * destination (an HTTP url, an S3 endpoint_url, a Postgres host) must resolve only to public
   * addresses or to these; loopback, private, link-local, CGNAT and other special addresses are
   * refused otherwise, and cloud metadata services and this installation's own stores and services
   * (ClickHouse, Kafka, Redis, ZooKeeper, the front door, every service's port, its own Postgres
   * database) always are (docs/security.md). None by default; `make up` allows its S3Proxy and the
   * machine's Postgres (infra/services.sh).
   */
  batchExportAllowedDestinations: string[];
  /** QUEUE_PREFIX: the Redis key prefix of the worker's BullMQ queues, so test runs can keep theirs apart. */
  queuePrefix: string;
  /**
   * SERVICE_URLS: where the status page reaches each service's `/_health` and `/_ready`, as
   * `name=url` pairs separated by commas (`capture=http://capture:8010,...`); a service not named
   * is at `http://127.0.0.1:<its port>`, as on one machine.
   */
  serviceUrls: Record<ServiceName, string>;
  /**
   * S3_ENDPOINT: the S3-compatible server that batch-export tests and benchmarks write to; `make up`
   * runs S3Proxy there (port 8333, as ClickHouse's native protocol holds 9000). Exports to real S3
   * carry their own `endpoint_url` in their destination config.
   */
  s3Endpoint: string;
  /** S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: S3Proxy's fixed development identity (infra/s3proxy/s3proxy.sh). */
  s3AccessKeyId: string;
  s3SecretAccessKey: string;
}

export const SERVICE_NAMES = ['capture', 'decide', 'api', 'ingest', 'worker'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** Environment variable name for every config key, and its default. */
export const ENV_VARIABLES = {
  env: ['TRIBUTARY_ENV', 'development'],
  logLevel: ['LOG_LEVEL', 'info'],
  host: ['HOST', '127.0.0.1'],
  trustedProxies: ['TRUSTED_PROXIES', '127.0.0.1,::1'],
  capturePort: ['CAPTURE_PORT', '8010'],
  decidePort: ['DECIDE_PORT', '8011'],
  apiPort: ['API_PORT', '8012'],
  ingestPort: ['INGEST_PORT', '8013'],
  workerPort: ['WORKER_PORT', '8014'],
  publicUrl: ['PUBLIC_URL', 'http://127.0.0.1:8000'],
  databaseUrl: ['DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/tributary'],
  redisUrl: ['REDIS_URL', 'redis://127.0.0.1:6379/0'],
  kafkaBrokers: ['KAFKA_BROKERS', '127.0.0.1:9092'],
  kafkaClientId: ['KAFKA_CLIENT_ID', 'tributary'],
  kafkaTopicPrefix: ['KAFKA_TOPIC_PREFIX', ''],
  kafkaPartitions: ['KAFKA_PARTITIONS', '8'],
  kafkaRetentionHours: ['KAFKA_RETENTION_HOURS', '168'],
  ingestConsumerGroup: ['INGEST_CONSUMER_GROUP', 'tributary-ingest'],
  clickhouseUrl: ['CLICKHOUSE_URL', 'http://127.0.0.1:8123'],
  clickhouseDatabase: ['CLICKHOUSE_DATABASE', 'tributary'],
  clickhouseUser: ['CLICKHOUSE_USER', 'tributary_admin'],
  clickhousePassword: ['CLICKHOUSE_PASSWORD', 'tributary-development-admin'],
  queryClickhouseUser: ['QUERY_CLICKHOUSE_USER', 'tributary_query'],
  queryClickhousePassword: ['QUERY_CLICKHOUSE_PASSWORD', 'tributary-development-query'],
  clickhouseCluster: ['CLICKHOUSE_CLUSTER', ''],
  shutdownTimeoutMs: ['SHUTDOWN_TIMEOUT_MS', '10000'],
  apiKeyPepper: ['API_KEY_PEPPER', 'tributary-development-pepper'],
  captureMaxBatchBytes: ['CAPTURE_MAX_BATCH_BYTES', String(20 * 1024 * 1024)],
  captureMaxEventBytes: ['CAPTURE_MAX_EVENT_BYTES', String(2 * 1024 * 1024)],
  captureOverflowEventsPerSecond: ['CAPTURE_OVERFLOW_EVENTS_PER_SECOND', '1000'],
  captureKafkaProducers: ['CAPTURE_KAFKA_PRODUCERS', '1'],
  kafkaProduceTimeoutMs: ['KAFKA_PRODUCE_TIMEOUT_MS', '10000'],
  captureWorkers: ['CAPTURE_WORKERS', '0'],
  decideWorkers: ['DECIDE_WORKERS', '0'],
  decidePersonCopies: ['DECIDE_PERSON_COPIES', '20000'],
  decideRememberedAnswers: ['DECIDE_REMEMBERED_ANSWERS', '20000'],
  ingestPartitionsConcurrently: ['INGEST_PARTITIONS_CONCURRENTLY', '2'],
  ingestMaxQueuedEvents: ['INGEST_MAX_QUEUED_EVENTS', '40000'],
  ingestInsertIntervalMs: ['INGEST_INSERT_INTERVAL_MS', '2000'],
  ingestInsertQuietIntervalMs: ['INGEST_INSERT_QUIET_INTERVAL_MS', '250'],
  ingestInsertMaxRows: ['INGEST_INSERT_MAX_ROWS', '40000'],
  apiRateLimitPerMinute: ['API_RATE_LIMIT_PER_MINUTE', '480'],
  queryMaxExecutionTimeS: ['QUERY_MAX_EXECUTION_TIME_S', '30'],
  queryMaxMemoryBytes: ['QUERY_MAX_MEMORY_BYTES', String(2 * 1024 * 1024 * 1024)],
  queryMaxThreads: ['QUERY_MAX_THREADS', '0'],
  queryConcurrencyPerProject: ['QUERY_CONCURRENCY_PER_PROJECT', '4'],
  dashboardTileConcurrency: ['DASHBOARD_TILE_CONCURRENCY', '2'],
  materializedColumnsMax: ['MATERIALIZED_COLUMNS_MAX', '100'],
  materializeTopN: ['MATERIALIZE_TOP_N', '10'],
  materializeMinReads: ['MATERIALIZE_MIN_READS', '1000'],
  cohortCalculationIntervalMin: ['COHORT_CALCULATION_INTERVAL_MIN', '15'],
  cohortCalculationTickMs: ['COHORT_CALCULATION_TICK_MS', '60000'],
  cohortCalculationConcurrency: ['COHORT_CALCULATION_CONCURRENCY', '2'],
  cohortCalculationMaxExecutionTimeS: ['COHORT_CALCULATION_MAX_EXECUTION_TIME_S', '600'],
  batchExportTickMs: ['BATCH_EXPORT_TICK_MS', '5000'],
  batchExportSettleS: ['BATCH_EXPORT_SETTLE_S', '60'],
  batchExportPartRecords: ['BATCH_EXPORT_PART_RECORDS', '10000'],
  batchExportPartsInFlight: ['BATCH_EXPORT_PARTS_IN_FLIGHT', '3'],
  batchExportLeaseMs: ['BATCH_EXPORT_LEASE_MS', '60000'],
  batchExportAttempts: ['BATCH_EXPORT_ATTEMPTS', '8'],
  batchExportBackoffMs: ['BATCH_EXPORT_BACKOFF_MS', '5000'],
  batchExportConcurrency: ['BATCH_EXPORT_CONCURRENCY', '2'],
  batchExportAllowedDestinations: ['BATCH_EXPORT_ALLOWED_DESTINATIONS', ''],
  queuePrefix: ['QUEUE_PREFIX', 'bull'],
  serviceUrls: ['SERVICE_URLS', ''],
  s3Endpoint: ['S3_ENDPOINT', 'http://127.0.0.1:8333'],
  s3AccessKeyId: ['S3_ACCESS_KEY_ID', 'tributary'],
  s3SecretAccessKey: ['S3_SECRET_ACCESS_KEY', 'tributary-secret'],
} as const satisfies Record<keyof Config, readonly [string, string]>;

type RawConfig = Omit<Config, 'kafkaBrokers' | 'serviceUrls' | 'trustedProxies' | 'batchExportAllowedDestinations'> & {
  kafkaBrokers: string;
  serviceUrls: string;
  trustedProxies: string;
  batchExportAllowedDestinations: string;
};

const port = { type: 'integer', minimum: 1, maximum: 65535 } as const;
const schema: JSONSchemaType<RawConfig> = {
  type: 'object',
  additionalProperties: false,
  required: Object.keys(ENV_VARIABLES) as (keyof RawConfig)[],
  properties: {
    env: { type: 'string', enum: ['development', 'test', 'production'] },
    logLevel: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    host: { type: 'string', minLength: 1 },
    trustedProxies: { type: 'string', pattern: '^\\s*[0-9A-Za-z.:/]+\\s*(,\\s*[0-9A-Za-z.:/]+\\s*)*$' },
    capturePort: port,
    decidePort: port,
    apiPort: port,
    ingestPort: port,
    workerPort: port,
    publicUrl: { type: 'string', pattern: '^https?://' },
    databaseUrl: { type: 'string', pattern: '^postgres(ql)?://' },
    redisUrl: { type: 'string', pattern: '^rediss?://' },
    kafkaBrokers: { type: 'string', minLength: 1 },
    kafkaClientId: { type: 'string', minLength: 1 },
    kafkaTopicPrefix: { type: 'string', pattern: '^[A-Za-z0-9._-]*$' },
    kafkaPartitions: { type: 'integer', minimum: 1, maximum: 1024 },
    kafkaRetentionHours: { type: 'integer', minimum: 1, maximum: 876_000 },
    ingestConsumerGroup: { type: 'string', minLength: 1 },
    clickhouseUrl: { type: 'string', pattern: '^https?://' },
    clickhouseDatabase: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    clickhouseUser: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    clickhousePassword: { type: 'string', minLength: 1 },
    queryClickhouseUser: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    queryClickhousePassword: { type: 'string', minLength: 1 },
    clickhouseCluster: { type: 'string', pattern: '^([A-Za-z_][A-Za-z0-9_]*)?$' },
    shutdownTimeoutMs: { type: 'integer', minimum: 0 },
    apiKeyPepper: { type: 'string', minLength: 8 },
    captureMaxBatchBytes: { type: 'integer', minimum: 1024 },
    captureMaxEventBytes: { type: 'integer', minimum: 1024 },
    captureOverflowEventsPerSecond: { type: 'integer', minimum: 1 },
    captureKafkaProducers: { type: 'integer', minimum: 1, maximum: 32 },
    kafkaProduceTimeoutMs: { type: 'integer', minimum: 100 },
    captureWorkers: { type: 'integer', minimum: 0, maximum: 256 },
    decideWorkers: { type: 'integer', minimum: 0, maximum: 256 },
    decidePersonCopies: { type: 'integer', minimum: 0, maximum: 10000000 },
    decideRememberedAnswers: { type: 'integer', minimum: 0, maximum: 10000000 },
    ingestPartitionsConcurrently: { type: 'integer', minimum: 1, maximum: 64 },
    ingestMaxQueuedEvents: { type: 'integer', minimum: 1, maximum: 10_000_000 },
    ingestInsertIntervalMs: { type: 'integer', minimum: 0, maximum: 60_000 },
    ingestInsertQuietIntervalMs: { type: 'integer', minimum: 0, maximum: 60_000 },
    ingestInsertMaxRows: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    apiRateLimitPerMinute: { type: 'integer', minimum: 1 },
    queryMaxExecutionTimeS: { type: 'integer', minimum: 1 },
    queryMaxMemoryBytes: { type: 'integer', minimum: 1048576 },
    queryMaxThreads: { type: 'integer', minimum: 0 },
    queryConcurrencyPerProject: { type: 'integer', minimum: 1 },
    dashboardTileConcurrency: { type: 'integer', minimum: 1 },
    materializedColumnsMax: { type: 'integer', minimum: 0, maximum: 1000 },
    materializeTopN: { type: 'integer', minimum: 0, maximum: 1000 },
    materializeMinReads: { type: 'integer', minimum: 1 },
    cohortCalculationIntervalMin: { type: 'integer', minimum: 1 },
    cohortCalculationTickMs: { type: 'integer', minimum: 100 },
    cohortCalculationConcurrency: { type: 'integer', minimum: 1, maximum: 64 },
    cohortCalculationMaxExecutionTimeS: { type: 'integer', minimum: 1 },
    batchExportTickMs: { type: 'integer', minimum: 100 },
    batchExportSettleS: { type: 'integer', minimum: 0 },
    batchExportPartRecords: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    batchExportPartsInFlight: { type: 'integer', minimum: 1, maximum: 16 },
    batchExportLeaseMs: { type: 'integer', minimum: 1000 },
    batchExportAttempts: { type: 'integer', minimum: 1, maximum: 100 },
    batchExportBackoffMs: { type: 'integer', minimum: 0 },
    batchExportConcurrency: { type: 'integer', minimum: 1, maximum: 64 },
    batchExportAllowedDestinations: { type: 'string', pattern: '^[0-9A-Za-z.:/\\[\\]_,\\s-]*$' },
    queuePrefix: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
    serviceUrls: { type: 'string', pattern: `^((${SERVICE_NAMES.join('|')})=https?://[^,=\\s]+(,|$))*$` },
    s3Endpoint: { type: 'string', pattern: '^https?://' },
    s3AccessKeyId: { type: 'string', minLength: 1 },
    s3SecretAccessKey: { type: 'string', minLength: 1 },
  },
};

const validate = new Ajv({ coerceTypes: true, allErrors: true }).compile(schema);

export class ConfigError extends Error {}

/** The settings that are secrets: a production process may not leave one at its development value. */
export type Secret = 'apiKeyPepper' | 'databaseUrl' | 'redisUrl' | 'clickhousePassword' | 'queryClickhousePassword';

/**
 * The secrets each process uses, so a production capture is not refused for a ClickHouse password
 * it never sends (capture and decide do not use ClickHouse; only api runs the query endpoint). The
 * CLI runs migrations as ClickHouse's administrator.
 */
export const PRODUCTION_SECRETS = {
  capture: ['apiKeyPepper', 'databaseUrl', 'redisUrl'],
  decide: ['apiKeyPepper', 'databaseUrl', 'redisUrl'],
  ingest: ['apiKeyPepper', 'databaseUrl', 'redisUrl', 'clickhousePassword'],
  worker: ['apiKeyPepper', 'databaseUrl', 'redisUrl', 'clickhousePassword'],
  api: ['apiKeyPepper', 'databaseUrl', 'redisUrl', 'clickhousePassword', 'queryClickhousePassword'],
  cli: ['apiKeyPepper', 'databaseUrl', 'redisUrl', 'clickhousePassword'],
} as const satisfies Record<ServiceName | 'cli', readonly Secret[]>;
export type ConfigUser = keyof typeof PRODUCTION_SECRETS;

/** Why a secret may not be used in production, or null: a development default, or a store URL without a password. */
function developmentSecret(config: Config, secret: Secret): string | null {
  const [name, fallback] = ENV_VARIABLES[secret];
  if (secret === 'databaseUrl' || secret === 'redisUrl') {
    let password = '';
    try {
      password = new URL(config[secret]).password;
    } catch {
      return `${name} is not a URL`;
    }
    return password === '' ? `${name} has no password` : null;
  }
  return config[secret] === fallback ? `${name} is the development default` : null;
}

/** Every reason the config's secrets keep a production process from starting, naming each variable. */
function productionSecretProblems(config: Config, secrets: readonly Secret[]): string[] {
  return secrets.map((secret) => developmentSecret(config, secret)).filter((problem): problem is string => problem !== null);
}

/**
 * Reads the environment once against the schema; an invalid value stops start-up with its name, and
 * so, with TRIBUTARY_ENV=production, does a development secret among those `user` uses (every
 * secret when not said).
 */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}, user?: ConfigUser): Config {
  const raw: Record<string, unknown> = {};
  for (const [key, [name, fallback]] of Object.entries(ENV_VARIABLES)) {
    const value = environment[name];
    raw[key] = value === undefined || value === '' ? fallback : value;
  }
  if (!validate(raw)) {
    const problems = (validate.errors ?? []).map((e) => {
      const key = e.instancePath.slice(1) as keyof typeof ENV_VARIABLES;
      const name = ENV_VARIABLES[key]?.[0] ?? key;
      return `${name} ${e.message ?? 'is invalid'}`;
    });
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const typed = raw as unknown as RawConfig;
  const kafkaBrokers = typed.kafkaBrokers.split(',').map((b) => b.trim()).filter(Boolean);
  const trustedProxies = typed.trustedProxies.split(',').map((p) => p.trim());
  const batchExportAllowedDestinations = typed.batchExportAllowedDestinations.split(',').map((d) => d.trim()).filter(Boolean);
  const named = new Map(typed.serviceUrls.split(',').filter(Boolean).map((pair) => pair.split('=') as [string, string]));
  const serviceUrls = Object.fromEntries(SERVICE_NAMES.map((name) => [name, named.get(name) ?? `http://127.0.0.1:${typed[`${name}Port`]}`])) as Record<ServiceName, string>;
  const captureWorkers = typed.captureWorkers || availableParallelism();
  const decideWorkers = typed.decideWorkers || availableParallelism();
  const config = { ...typed, kafkaBrokers, trustedProxies, batchExportAllowedDestinations, serviceUrls, captureWorkers, decideWorkers, ...overrides };
  if (config.dashboardTileConcurrency > config.queryConcurrencyPerProject) {
    throw new ConfigError(`invalid configuration: DASHBOARD_TILE_CONCURRENCY (${config.dashboardTileConcurrency}) must be at most QUERY_CONCURRENCY_PER_PROJECT (${config.queryConcurrencyPerProject})`);
  }
  if (config.env === 'production') {
    const secrets: readonly Secret[] = user ? PRODUCTION_SECRETS[user] : [...new Set(Object.values(PRODUCTION_SECRETS).flat())];
    const problems = productionSecretProblems(config, secrets);
    if (problems.length > 0) throw new ConfigError(`TRIBUTARY_ENV=production refuses development secrets: ${problems.join('; ')} (docs/security.md, "Production mode")`);
  }
  return config;
}
