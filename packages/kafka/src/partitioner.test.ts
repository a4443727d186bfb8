import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { keyHashPartitioner, murmur2 } from './partitioner.js';

// kafkajs's own (Java-compatible) hash is the reference the fast one must equal bit for bit.
const kafkajsMurmur2 = createRequire(import.meta.url)('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer) => number;

const partitionMetadata = Array.from({ length: 8 }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [0], isr: [0], offlineReplicas: [], partitionErrorCode: 0 }));

describe('key hash partitioner', () => {
  it('hashes exactly as the Java client (and kafkajs) does, for every key length and any bytes', () => {
    const keys = [Buffer.alloc(0), Buffer.from('phc_abc:user-1'), Buffer.from('phc_x:ünïcødé-🙂')];
    for (let length = 1; length < 70; length++) keys.push(randomBytes(length));
    for (const key of keys) expect(murmur2(key)).toBe(kafkajsMurmur2(key));
  });

  it('matches the known Java values', () => {
    // From Kafka's UtilsTest.testMurmur2.
    expect(murmur2(Buffer.from('21'))).toBe(-973932308);
    expect(murmur2(Buffer.from('foobar'))).toBe(-790332482);
    expect(murmur2(Buffer.from('a-little-bit-long-string'))).toBe(-985981536);
    expect(murmur2(Buffer.from('a-little-bit-longer-string'))).toBe(-1486304829);
    expect(murmur2(Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'))).toBe(-58897971);
  });

  it('puts a key on the partition its hash names, and unkeyed messages on each partition in turn', () => {
    const partition = keyHashPartitioner();
    const key = 'phc_abc:user-1';
    expect(partition({ topic: 't', partitionMetadata, message: { key, value: 'v' } })).toBe((kafkajsMurmur2(Buffer.from(key)) & 0x7fffffff) % 8);
    const unkeyed = Array.from({ length: 16 }, () => partition({ topic: 't', partitionMetadata, message: { key: null, value: 'v' } }));
    expect(new Set(unkeyed)).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7]));
  });
});
