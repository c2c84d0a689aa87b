/**
 * The session repository on the three logs, through the exported contract suite
 * (`runSessionRepositoryContract`), plus what only a SQLite file can show (closing and reopening).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/core/messages.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { assistant, runSessionRepositoryContract, user } from "../../src/testing/session-repository-contract.ts";
import { PG_URL, useTestSchemas } from "./pg-test-db.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-repo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const schema = useTestSchemas("repo");


let counter = 0;
const api = { describe, it, expect, afterEach };
runSessionRepositoryContract("memory", () => createMemoryEventLog(), api);
runSessionRepositoryContract("SQLite file", () => createSqliteEventLog({ path: join(dir, `repo-${counter++}.db`) }), api);
runSessionRepositoryContract("PostgreSQL", () => createPostgresEventLog({ connectionString: PG_URL, schema: schema(), poolSize: 2 }), api);

describe("session repository on a SQLite file", () => {
  it("survives closing and reopening the file: entries, leaf, labels, name", async () => {
    const path = join(dir, "reopen.db");
    const log = createSqliteEventLog({ path });
    const session = await createSessionRepository({ log }).create({ id: "persist" });
    const [u1] = await session.appendEntries([{ type: "message", message: user("a") }, { type: "message", message: assistant("b") }]);
    await session.appendEntry({ type: "label", targetId: u1.id, label: "here" });
    await session.appendEntry({ type: "session_info", name: "kept" });
    await session.moveLeaf(u1.id);
    await log.close();
    const again = createSqliteEventLog({ path });
    const reopened = await createSessionRepository({ log: again }).open("persist");
    expect(reopened.view.leafId).toBe(u1.id);
    expect(reopened.view.getLabel(u1.id)).toBe("here");
    expect(reopened.view.name).toBe("kept");
    expect(reopened.view.buildContext().messages).toEqual([user("a", (u1 as { message: AgentMessage }).message.timestamp)]);
    await again.close();
  });
});
