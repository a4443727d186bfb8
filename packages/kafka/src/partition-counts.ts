import type { Admin } from 'kafkajs';

/**
 * How many partitions each of some topics has, for a producer that chooses partitions itself.
 * Asked of Kafka on first use, then again in the background once the answer is older than
 * `maxAgeMs`, while the known answer goes on being used: partitions are only ever added (by
 * `tributary kafka:topics`, while producers are quiet), so an old answer still names partitions
 * that exist. A failed first fetch is not remembered, so the next caller asks again.
 */
export class PartitionCounts {
  private known: Promise<ReadonlyMap<string, number>> | null = null;
  private fetchedAt = 0;
  private refreshing = false;

  constructor(
    private readonly admin: Pick<Admin, 'fetchTopicMetadata'>,
    private readonly topics: readonly string[],
    private readonly maxAgeMs = 60_000,
    private readonly clock: () => number = Date.now,
  ) {}

  get(): Promise<ReadonlyMap<string, number>> {
    if (this.known === null) {
      this.fetchedAt = this.clock();
      const fetching = this.fetch();
      this.known = fetching;
      fetching.catch(() => {
        if (this.known === fetching) this.known = null;
      });
    } else if (this.clock() - this.fetchedAt > this.maxAgeMs && !this.refreshing) {
      this.refreshing = true;
      this.fetch().then(
        (counts) => (this.known = Promise.resolve(counts)),
        () => undefined,
      ).finally(() => (this.refreshing = false));
    }
    return this.known;
  }

  private async fetch(): Promise<ReadonlyMap<string, number>> {
    const { topics } = await this.admin.fetchTopicMetadata({ topics: [...this.topics] });
    this.fetchedAt = this.clock();
    return new Map(topics.map((topic) => [topic.name, topic.partitions.length]));
  }
}
