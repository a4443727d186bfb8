import type { ICustomPartitioner, PartitionerArgs } from 'kafkajs';

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/**
 * Kafka's murmur2 (the Java client's `Utils.murmur2`) in 32-bit integer arithmetic. kafkajs's
 * default partitioner computes the same hash through a 64-bit `Long` emulation, which costs more
 * per message than encoding the message does; the partitions chosen are identical.
 */
export function murmur2(data: Buffer): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= data[whole + 2]! << 16;
  if (rest >= 2) h ^= data[whole + 1]! << 8;
  if (rest >= 1) h = Math.imul(h ^ data[whole]!, M);
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h;
}

/**
 * The partition of a message key among `partitions`, as the Java client (and kafkajs) choose it.
 * Capture picks each event's partition with it, so an event lands where a keyed message of its
 * own would.
 */
export function partitionOfKey(key: string | Buffer, partitions: number): number {
  return (murmur2(typeof key === 'string' ? Buffer.from(key) : key) & 0x7fffffff) % partitions;
}

/**
 * kafkajs's default strategy with the fast hash: a keyed message goes to the partition of its
 * key's hash (as every Java-compatible producer would put it, so the api's producer and capture's
 * agree); an unkeyed one to the next partition that has a leader, in turn.
 */
export const keyHashPartitioner: ICustomPartitioner = () => {
  const counters = new Map<string, number>();
  return ({ topic, partitionMetadata, message }: PartitionerArgs) => {
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (message.key !== null && message.key !== undefined) return partitionOfKey(message.key, partitionMetadata.length);
    const available = partitionMetadata.filter((p) => p.leader >= 0);
    const next = ((counters.get(topic) ?? Math.floor(Math.random() * 0x7fffffff)) + 1) & 0x7fffffff;
    counters.set(topic, next);
    return available.length > 0 ? available[next % available.length]!.partitionId : next % partitionMetadata.length;
  };
};
