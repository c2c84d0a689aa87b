/**
 * `GET /api/sessions` reads the log's per-session summary rows, not each session's events: over
 * real HTTP (the handler on loopback), on a real SQLite file and on real PostgreSQL, a list of a
 * tenant's sessions makes no event read at all, and still lists exactly that tenant's sessions,
 * with their tenant and the time of their last event.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer } from "../../src/http/node-adapter.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-session-list-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const nextSchema = useTestSchemas("list");
const TOKENS: Record<string, string> = { "token-a": "a", "token-b": "b" };

/** The log, with every event read (readStream, readAll, read) counted. */
function counted(log: EventLog): { log: EventLog; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(log, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function") return value;
      if (typeof key === "string" && /^read/.test(key)) {
        return (...args: unknown[]) => {
          reads += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { log: proxy, reads: () => reads };
}

const logs: [string, () => EventLog][] = [
  ["SQLite", () => createSqliteEventLog({ path: join(dir, `${Math.random().toString(36).slice(2)}.db`) })],
  ["PostgreSQL", () => createPostgresEventLog({ connectionString: PG_URL, schema: nextSchema() })],
];

describe.each(logs)("GET /api/sessions on %s", (_name, open) => {
  it("lists only the tenant's sessions without reading any session's events", async () => {
    const real = open();
    const writer = createSessionRepository({ log: real });
    const made: Record<string, string[]> = { a: [], b: [] };
    for (let index = 0; index < 6; index++) {
      const tenant = index % 2 === 0 ? "a" : "b";
      const handle = await writer.create({ id: `${tenant}-${index}`, cwd: dir, tenant });
      await handle.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: `question ${index}` }], timestamp: 1_000 + index } });
      made[tenant]!.push(handle.id);
    }

    const { log, reads } = counted(real);
    const server = await startChatServer({ handler: createChatHandler({ repository: createSessionRepository({ log }), cwd: dir, authenticate: (request) => TOKENS[(request.headers.get("authorization") ?? "").replace(/^Bearer /, "")] }) });
    try {
      const list = async (token: string) => {
        const response = await fetch(`${server.url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).toBe(200);
        return ((await response.json()) as { sessions: { id: string; tenant: string; updatedAt: string; firstMessage: string }[] }).sessions;
      };
      const before = reads();
      const a = await list("token-a");
      const b = await list("token-b");
      expect(reads() - before).toBe(0);

      expect(a.map((row) => row.id).sort()).toEqual(["a-0", "a-2", "a-4"]);
      expect(b.map((row) => row.id).sort()).toEqual(["b-1", "b-3", "b-5"]);
      expect(new Set(a.map((row) => row.tenant))).toEqual(new Set(["a"]));
      expect(new Set(b.map((row) => row.tenant))).toEqual(new Set(["b"]));
      expect(a.find((row) => row.id === "a-2")?.firstMessage).toBe("question 2");
      const streams = new Map((await real.listStreams()).map((stream) => [stream.streamId, stream.updatedAt]));
      for (const row of [...a, ...b]) expect(row.updatedAt).toBe(streams.get(`session-${row.id}`));
    } finally {
      await server.close();
      await real.close();
    }
  });
});
