import kafkajs from 'kafkajs';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';

/**
 * LZ4 for kafkajs, which ships only gzip. Kafka's LZ4 message sets are standard LZ4 frames
 * (version 1, independent blocks of 64 KB to 4 MB, checksums optional), which lz4-napi writes and reads
 * natively. Compressing is synchronous: a request's message set takes less time than handing it
 * to the thread pool would. Decompressing is synchronous too: on the thread pool (decompressFrame)
 * the pool's threads allocate the megabytes of each fetch from malloc arenas of their own, which
 * raises ingest's peak memory.
 */
const lz4 = {
  async compress(encoder: { buffer: Buffer }): Promise<Buffer> {
    return compressFrameSync(encoder.buffer);
  },
  async decompress(buffer: Buffer): Promise<Buffer> {
    return decompressFrameSync(buffer);
  },
};

/** Every client of this package reads and writes LZ4 message sets; registering twice is harmless. */
export function registerLz4(): void {
  // kafkajs is CommonJS, and Node's named-export detection misses CompressionCodecs.
  const { CompressionCodecs, CompressionTypes } = kafkajs;
  (CompressionCodecs as Record<number, () => typeof lz4>)[CompressionTypes.LZ4] = () => lz4;
}
