/**
 * One order for every session list: `repo.list()` (and so `arbor sessions` and `GET
 * /api/sessions`) gives the session appended to most recently first, by `updatedAt` compared as
 * times, on a real SQLite file and on real PostgreSQL. A label (no message) moves a session up
 * though its `modified` (pi's latest message time) stays old; the rows' `updatedAt` is the log's
 * own time of the last append, a time `Date.parse` reads.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { EventLog } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { PG_URL, useTestSchemas } from "./pg-test-db.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-order-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const nextSchema = useTestSchemas("order");

/** Returns once the clock has passed `after` (ms), so two appends get different times. Decides no order: the appends do. */
function pastMillisecond(after: number): void {
  while (Date.now() <= after);
}

const logs: [string, () => EventLog][] = [
  ["SQLite", () => createSqliteEventLog({ path: join(dir, `${Math.random().toString(36).slice(2)}.db`) })],
  ["PostgreSQL", () => createPostgresEventLog({ connectionString: PG_URL, schema: nextSchema() })],
];

describe.each(logs)("the order of repo.list() on %s", (_name, open) => {
  it("is the most recently appended first, by updatedAt as times, whatever modified says", async () => {
    const log = open();
    try {
      const repo = createSessionRepository({ log });
      let last = 0;
      for (const [index, id] of ["s1", "s2", "s3"].entries()) {
        pastMillisecond(last);
        const handle = await repo.create({ id, cwd: dir });
        await handle.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: id }], timestamp: 1_000_000 + index } });
        last = Date.now();
      }
      expect((await repo.list()).map((row) => row.id)).toEqual(["s3", "s2", "s1"]);

      // A label is no message: s1's `modified` stays the oldest, but its stream was appended to last.
      pastMillisecond(last);
      const s1 = await repo.open("s1");
      await s1.appendEntry({ type: "label", targetId: s1.view.leafId!, label: "look here" });
      const rows = await repo.list();
      expect(rows.map((row) => row.id)).toEqual(["s1", "s3", "s2"]);
      expect(Date.parse(rows[0]!.modified)).toBeLessThan(Date.parse(rows[1]!.modified));

      // updatedAt is the log's own time of the last append, and parses as a time.
      const streams = new Map((await log.listStreams()).map((stream) => [stream.streamId, stream.updatedAt]));
      for (const row of rows) {
        expect(row.updatedAt).toBe(streams.get(`session-${row.id}`));
        expect(Number.isFinite(Date.parse(row.updatedAt))).toBe(true);
      }
      const times = rows.map((row) => Date.parse(row.updatedAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      // With stats, and for one tenant, the same order.
      expect((await repo.list({ stats: true })).map((row) => row.id)).toEqual(["s1", "s3", "s2"]);
      expect((await repo.list({ tenant: "default" })).map((row) => row.id)).toEqual(["s1", "s3", "s2"]);
    } finally {
      await log.close();
    }
  });
});
