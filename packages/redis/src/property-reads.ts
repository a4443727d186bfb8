import type { Redis } from 'ioredis';

/**
 * How often queries read each property, for picking the properties worth a column of their own
 * (`tributary properties:list`, `properties:auto`). The query endpoint counts reads in memory as
 * it prints queries and adds them to one Redis hash now and then, so a query costs no round trip;
 * a lost batch or a lost Redis loses counts, never answers. Keys are tenants' text: a batch holds
 * at most `maxPending` of them and the hash at most `maxFields`, after which only properties
 * already counted go on counting.
 */
export const PROPERTY_READS_KEY = 'tributary:property-reads';

export interface PropertyReadCount {
  column: string;
  key: string;
  reads: number;
}

export interface PropertyReadCounterOptions {
  flushMs?: number;
  maxPending?: number;
  maxFields?: number;
  /** Keys longer than this are not counted: no one materializes them, and each would take room. */
  maxKeyLength?: number;
  /** The hash the counts are kept in (tests use their own). */
  key?: string;
}

const field = (column: string, key: string) => JSON.stringify([column, key]);

export class PropertyReadCounter {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly flushMs: number;
  private readonly maxPending: number;
  private readonly maxFields: number;
  private readonly maxKeyLength: number;
  private readonly key: string;

  constructor(
    private readonly redis: Pick<Redis, 'hlen' | 'hmget' | 'pipeline'>,
    options: PropertyReadCounterOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 10_000;
    this.maxPending = options.maxPending ?? 1_000;
    this.maxFields = options.maxFields ?? 10_000;
    this.maxKeyLength = options.maxKeyLength ?? 200;
    this.key = options.key ?? PROPERTY_READS_KEY;
  }

  record(reads: readonly { column: string; key: string }[]): void {
    for (const { column, key } of reads) {
      if (key.length > this.maxKeyLength) continue;
      const name = field(column, key);
      const count = this.pending.get(name);
      if (count !== undefined) this.pending.set(name, count + 1);
      else if (this.pending.size < this.maxPending) this.pending.set(name, 1);
    }
  }

  /** Adds the counts so far to Redis; the counts of a batch Redis did not take are dropped. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    let fields = [...batch.keys()];
    if ((await this.redis.hlen(this.key)) >= this.maxFields) {
      const known = await this.redis.hmget(this.key, ...fields);
      fields = fields.filter((_, i) => known[i] !== null);
    }
    const pipeline = this.redis.pipeline();
    for (const name of fields) pipeline.hincrby(this.key, name, batch.get(name)!);
    await pipeline.exec();
  }

  /** Flushes every `flushMs`, failures passed to `onError`, until `stop`. */
  start(onError: (error: unknown) => void): this {
    this.timer = setInterval(() => void this.flush().catch(onError), this.flushMs);
    this.timer.unref();
    return this;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}

/** Every counted property, most read first. */
export async function propertyReadCounts(redis: Pick<Redis, 'hgetall'>, key = PROPERTY_READS_KEY): Promise<PropertyReadCount[]> {
  const counts = await redis.hgetall(key);
  return Object.entries(counts)
    .map(([name, reads]) => {
      const [column, key] = JSON.parse(name) as [string, string];
      return { column, key, reads: Number(reads) };
    })
    .sort((a, b) => b.reads - a.reads || a.key.localeCompare(b.key));
}
