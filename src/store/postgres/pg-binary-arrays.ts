/**
 * One-dimensional arrays in PostgreSQL's binary wire form (ours; `array_send`/`array_recv`): a `Buffer` parameter is sent by `pg` in the binary
 * format, so `append_rows` (`pg-append-rows.ts`) gets its columns without a text array literal: no quoting or escaping of each JSON text on the
 * client, no literal to scan on the server (each `json` element is still checked by `json_recv`). The layout: the number of dimensions (0 for an
 * empty array, else 1), a has-nulls flag, the element type's OID, the length and lower bound (1) of the dimension, then each element as its byte
 * length (-1 for NULL) and its bytes (strings as UTF-8, integers big-endian, booleans one byte).
 */

/** The OIDs of the element types used. */
const OID = { bool: 16, int8: 20, int4: 23, text: 25, json: 114 } as const;

/** A buffer holding the header of an array of `count` elements, with `body` more bytes after it; returns the buffer and the body's offset. */
function withHeader(count: number, hasNull: boolean, oid: number, body: number): { buffer: Buffer; at: number } {
  const head = count === 0 ? 12 : 20;
  const buffer = Buffer.allocUnsafe(head + body);
  buffer.writeInt32BE(count === 0 ? 0 : 1, 0);
  buffer.writeInt32BE(hasNull ? 1 : 0, 4);
  buffer.writeInt32BE(oid, 8);
  if (count > 0) {
    buffer.writeInt32BE(count, 12);
    buffer.writeInt32BE(1, 16);
  }
  return { buffer, at: head };
}

/** A `text[]` (or, with `json`, a `json[]`: the server checks each text) of `values`; null is NULL. */
export function textArray(values: readonly (string | null)[], json = false): Buffer {
  const count = values.length;
  const lengths = new Int32Array(count);
  let body = 0;
  let hasNull = false;
  for (let index = 0; index < count; index++) {
    const value = values[index];
    if (value === null) {
      lengths[index] = -1;
      hasNull = true;
      body += 4;
    } else {
      const length = Buffer.byteLength(value, "utf8");
      lengths[index] = length;
      body += 4 + length;
    }
  }
  const { buffer, at: start } = withHeader(count, hasNull, json ? OID.json : OID.text, body);
  let at = start;
  for (let index = 0; index < count; index++) {
    const length = lengths[index];
    buffer.writeInt32BE(length, at);
    at += 4;
    if (length > 0) at += buffer.write(values[index] as string, at, length, "utf8");
  }
  return buffer;
}

/** An `integer[]` of `values` (32-bit integers). */
export function int4Array(values: readonly number[]): Buffer {
  const { buffer, at: start } = withHeader(values.length, false, OID.int4, values.length * 8);
  let at = start;
  for (const value of values) {
    buffer.writeInt32BE(4, at);
    buffer.writeInt32BE(value, at + 4);
    at += 8;
  }
  return buffer;
}

/** A `bigint[]` of `values` (safe integers); null is NULL. */
export function int8Array(values: readonly (number | null)[]): Buffer {
  const nulls = values.filter((value) => value === null).length;
  const { buffer, at: start } = withHeader(values.length, nulls > 0, OID.int8, values.length * 12 - nulls * 8);
  let at = start;
  for (const value of values) {
    if (value === null) {
      buffer.writeInt32BE(-1, at);
      at += 4;
    } else {
      buffer.writeInt32BE(8, at);
      buffer.writeBigInt64BE(BigInt(value), at + 4);
      at += 12;
    }
  }
  return buffer;
}

/** A `boolean[]` of `values`. */
export function boolArray(values: readonly boolean[]): Buffer {
  const { buffer, at: start } = withHeader(values.length, false, OID.bool, values.length * 5);
  let at = start;
  for (const value of values) {
    buffer.writeInt32BE(1, at);
    buffer[at + 4] = value ? 1 : 0;
    at += 5;
  }
  return buffer;
}
