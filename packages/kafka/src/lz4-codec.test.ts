import { createRequire } from 'node:module';
import { registerLz4 } from './lz4-codec.js';

// The registry kafkajs itself consults when it writes or reads a message set.
const { lookupCodec } = createRequire(import.meta.url)('kafkajs/src/protocol/message/compression/index.js') as {
  lookupCodec: (type: number) => { compress(encoder: { buffer: Buffer }): Promise<Buffer>; decompress(buffer: Buffer): Promise<Buffer> };
};
const LZ4 = 3;

describe('LZ4 codec for kafkajs', () => {
  it('is what kafkajs finds for LZ4 once registered, and round-trips a message set', async () => {
    registerLz4();
    const records = Buffer.from(Array.from({ length: 200 }, (_, i) => `{"event":"$pageview","distinct_id":"user-${i}","properties":{"$host":"example.com"}}`).join('\n'));
    const codec = lookupCodec(LZ4);
    const compressed = await codec.compress({ buffer: records });
    expect(compressed.length).toBeLessThan(records.length / 4);
    expect((await codec.decompress(compressed)).equals(records)).toBe(true);
  });

  it('writes standard LZ4 frames (version 1, independent blocks of a size Kafka reads: 64 KB to 4 MB)', async () => {
    registerLz4();
    for (const size of [100, 30_000, 300_000, 2_000_000]) {
      const frame = await lookupCodec(LZ4).compress({ buffer: Buffer.from('x'.repeat(size)) });
      expect(frame.readUInt32LE(0)).toBe(0x184d2204);
      const flags = frame[4]!;
      expect(flags >> 6).toBe(1);
      expect(flags & 0x20).toBe(0x20);
      expect((frame[5]! >> 4) & 0x7).toBeGreaterThanOrEqual(4);
    }
  });
});
