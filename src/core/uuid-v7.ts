/**
 * UUID version 7 (RFC 9562) on `node:crypto`, so the root entry does not load the `uuid` package (21 modules). The same layout and ordering
 * as `uuid`'s `v7()`: 48 bits of Unix milliseconds, a 32-bit counter seeded at random in each new millisecond and incremented within it (an
 * overflow moves to the next millisecond), then random bits. So the ids one process makes sort, as strings, in the order they were made, even
 * within one millisecond or when the clock steps back.
 */
import { randomFillSync } from "node:crypto";

const pool = new Uint8Array(256);
let poolAt = pool.length;
let lastMs = -Infinity;
let counter = 0;
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** A new lower-case UUIDv7 (`xxxxxxxx-xxxx-7xxx-[89ab]xxx-xxxxxxxxxxxx`), greater than every id this process made before. */
export function uuidv7(): string {
  if (poolAt > pool.length - 16) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += 16;
  const now = Date.now();
  if (now > lastMs) {
    counter = (pool[at + 6] << 23) | (pool[at + 7] << 16) | (pool[at + 8] << 8) | pool[at + 9];
    lastMs = now;
  } else {
    counter = (counter + 1) | 0;
    if (counter === 0) lastMs++;
  }
  const ms = lastMs;
  const high = Math.floor(ms / 0x1000000);
  return (
    HEX[(high >>> 16) & 0xff] +
    HEX[(high >>> 8) & 0xff] +
    HEX[high & 0xff] +
    HEX[(ms / 0x10000) & 0xff] +
    "-" +
    HEX[(ms / 0x100) & 0xff] +
    HEX[ms & 0xff] +
    "-" +
    HEX[0x70 | ((counter >>> 28) & 0x0f)] +
    HEX[(counter >>> 20) & 0xff] +
    "-" +
    HEX[0x80 | ((counter >>> 14) & 0x3f)] +
    HEX[(counter >>> 6) & 0xff] +
    "-" +
    HEX[((counter << 2) & 0xff) | (pool[at + 10] & 0x03)] +
    HEX[pool[at + 11]] +
    HEX[pool[at + 12]] +
    HEX[pool[at + 13]] +
    HEX[pool[at + 14]] +
    HEX[pool[at + 15]]
  );
}
