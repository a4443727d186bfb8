import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

// uuid's own v7 refills a 256-byte pool every 16 ids, and a refill costs more than making the
// ids: capture makes one per event an SDK sent without one. A larger pool refills every 256.
const pool = new Uint8Array(4096);
let at = pool.length;
let msecs = -Infinity;
let seq = 0;

/**
 * A version 7 uuid for an event that came without one: time-ordered, and increasing within a
 * process even within one millisecond (a counter seeded from the random bytes, as uuid's v7 does).
 */
export function eventUuid(): string {
  if (at + 16 > pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  const random = pool.subarray(at, (at += 16));
  const now = Date.now();
  if (now > msecs) {
    seq = (random[6]! << 23) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
    msecs = now;
  } else {
    seq = (seq + 1) | 0;
    if (seq === 0) msecs += 1;
  }
  return uuidv7({ random, msecs, seq });
}
