/**
 * Two connections to one encrypted SQLite log (each with its own key cache, as two processes have): one deletes a session (destroying its data
 * key) that the other has cached; the other then starts a new session with the same id. The new session gets a new key from the key store, never
 * the cached destroyed one, so every connection reads it; a connection that cached the old key reads the new session too.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EventLog } from "../../src/store/event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";

const textsOf = async (log: EventLog, id: string) =>
  (await createSessionRepository({ log }).open(id)).view.buildContext().messages.flatMap((message) => (message.role !== "user" ? [] : typeof message.content === "string" ? [message.content] : message.content.map((part) => (part.type === "text" ? part.text : ""))));

describe("an encrypted log's data keys across connections", () => {
  const logs: EventLog[] = [];
  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close();
  });

  it("a session re-created after another connection deleted it gets a new key, and a connection that cached the old one reads it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "arbor-key-cache-")), "keys.db");
    const key = randomBytes(32);
    const open = () => {
      const log = createSqliteEventLog({ path, encryption: { key } });
      logs.push(log);
      return log;
    };
    const server = open();
    const deleter = open();
    const reader = open();
    const first = await createSessionRepository({ log: server }).create({ id: "reused", cwd: "/tmp" });
    await first.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: "first life" }], timestamp: 1_000 } });
    // The reader caches the first session's key.
    expect(await textsOf(reader, "reused")).toEqual(["first life"]);

    await createSessionRepository({ log: deleter }).delete("reused");
    const second = await createSessionRepository({ log: server }).create({ id: "reused", cwd: "/tmp" });
    await second.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: "second life" }], timestamp: 2_000 } });

    expect(await textsOf(deleter, "reused")).toEqual(["second life"]);
    expect(await textsOf(open(), "reused")).toEqual(["second life"]);
    expect(await textsOf(reader, "reused")).toEqual(["second life"]);
  });
});
