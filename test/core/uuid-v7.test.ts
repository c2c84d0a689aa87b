/**
 * The hand-written UUIDv7 generator: valid version 7 ids (checked with the `uuid` package's own `validate` and `version`), whose first 48
 * bits are the millisecond they were made in, and which sort as strings in the order they were made, within one millisecond and when the
 * clock steps back.
 */
import { validate, version } from "uuid";
import { afterEach, describe, expect, it, vi } from "vitest";
import { uuidv7 } from "../../src/core/uuid-v7.ts";

const millisecondsOf = (id: string): number => Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);

describe("uuidv7", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("makes valid, distinct version 7 ids carrying the current millisecond", () => {
    const before = Date.now();
    const ids = Array.from({ length: 5_000 }, () => uuidv7());
    const after = Date.now();
    for (const id of ids) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
      expect(millisecondsOf(id)).toBeLessThanOrEqual(after + 1);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("orders the ids of one millisecond, and of a clock that steps back, by when they were made", () => {
    const now = vi.spyOn(Date, "now");
    now.mockReturnValue(4_000_000_000_000);
    const ids = Array.from({ length: 1_000 }, () => uuidv7());
    now.mockReturnValue(4_000_000_000_000 - 5_000);
    ids.push(...Array.from({ length: 1_000 }, () => uuidv7()));
    now.mockReturnValue(4_000_000_000_001);
    ids.push(uuidv7());
    expect([...ids].sort()).toEqual(ids);
    expect(millisecondsOf(ids[1_500])).toBeGreaterThanOrEqual(4_000_000_000_000);
  });
});
