/**
 * Session memory on real backends (a SQLite file, PostgreSQL, in memory): read, write, delete,
 * list and full-text search; the session and principal scopes; tenants never see each other's
 * memory; a session delete removes its memory; the projection catches up from the log; and the
 * model's memory tools through a real harness, with approval.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createSessionMemory, type MemoryOptions } from "../../src/harness/memory/session-memory.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import type { SessionHandle } from "../../src/store/session-types.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

const schemas = useTestSchemas("mem");
const logs: EventLog[] = [];
afterAll(async () => {
  for (const log of logs) await log.close();
});

const backends: [string, () => EventLog][] = [
  ["SQLite file", () => createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-memory-")), "arbor.db") })],
  ["PostgreSQL", () => createPostgresEventLog({ connectionString: PG_URL, schema: schemas() })],
  ["in memory", () => createMemoryEventLog()],
];

const memoryOf = (log: EventLog, session: SessionHandle, options: MemoryOptions = {}) =>
  createSessionMemory({ session, log, options, append: async (events) => void (await session.appendEvents(events)) });

describe.each(backends)("session memory (%s)", (_name, open) => {
  it("read, write, delete, list and search in the session scope; bad keys and values are refused and write nothing", async () => {
    const log = open();
    logs.push(log);
    const repo = createSessionRepository({ log });
    const session = await repo.create({ cwd: "/w" });
    const memory = memoryOf(log, session, { maxValueBytes: 200 });
    expect(await memory.read("user.lang")).toBeUndefined();
    await memory.write("user.lang", "TypeScript");
    await memory.write("user:editor", { name: "helix", tabs: 2 });
    await memory.write("notes-1", ["deploy on fridays", "never on mondays"]);
    expect(await memory.read("user.lang")).toBe("TypeScript");
    expect(await memory.read("user:editor")).toEqual({ name: "helix", tabs: 2 });
    await memory.write("user.lang", "Rust");
    expect(await memory.read("user.lang")).toBe("Rust");
    expect((await memory.list()).map((row) => row.key)).toEqual(["notes-1", "user.lang", "user:editor"]);
    expect((await memory.list({ prefix: "user" })).map((row) => row.key)).toEqual(["user.lang", "user:editor"]);
    expect((await memory.search("helix")).map((hit) => hit.key)).toEqual(["user:editor"]);
    expect((await memory.search("friday")).map((hit) => hit.key)).toEqual(["notes-1"]);
    expect((await memory.search("rust")).map((hit) => hit.key)).toEqual(["user.lang"]);
    expect(await memory.search("nothing-like-this")).toEqual([]);
    expect(await memory.delete("notes-1")).toBe(true);
    expect(await memory.delete("notes-1")).toBe(false);
    expect(await memory.search("friday")).toEqual([]);
    const version = session.view.version;
    await expect(memory.write("bad key", 1)).rejects.toSatisfy(InvalidArgumentError.isInstance);
    await expect(memory.write("x".repeat(257), 1)).rejects.toSatisfy(InvalidArgumentError.isInstance);
    await expect(memory.write("big", "y".repeat(300))).rejects.toThrow(/over the cap of 200/);
    await expect(memory.write("fn", () => 1)).rejects.toThrow(/not JSON/);
    expect(session.view.version).toBe(version);
    // The events are the truth: a fresh memory (an empty projection elsewhere) reads the same values.
    const events = await log.readStream(`session-${session.id}`);
    expect(events.filter((event) => event.type.startsWith("memory.")).map((event) => event.type)).toEqual([
      "memory.written", "memory.written", "memory.written", "memory.written", "memory.deleted",
    ]);
  });

  it("the principal scope is shared by the principal's sessions within a tenant, never across tenants; delete removes a session's memory", async () => {
    const log = open();
    logs.push(log);
    const acme = createSessionRepository({ log, tenant: "acme" });
    const globex = createSessionRepository({ log, tenant: "globex" });
    const a1 = await acme.create({ cwd: "/w" });
    const a2 = await acme.create({ cwd: "/w" });
    const g1 = await globex.create({ cwd: "/w" });
    const m1 = memoryOf(log, a1, { principal: "alice" });
    const m2 = memoryOf(log, a2, { principal: "alice" });
    const mg = memoryOf(log, g1, { principal: "alice" });
    await m1.write("pref", "dark mode", { scope: "principal" });
    await m1.write("mine", "only a1");
    expect(await m2.read("pref", { scope: "principal" })).toBe("dark mode");
    expect(await m2.read("mine")).toBeUndefined();
    expect(await mg.read("pref", { scope: "principal" })).toBeUndefined();
    expect(await mg.search("dark", { scope: "principal" })).toEqual([]);
    expect((await m2.search("dark", { scope: "principal" })).map((hit) => hit.key)).toEqual(["pref"]);
    await expect(memoryOf(log, a1).read("pref", { scope: "principal" })).rejects.toThrow(/memory.principal/);

    await acme.delete(a1.id);
    // The session's rows are gone with it; the principal's memory is the principal's.
    expect(await log.memoryIndex!.list("acme", `session-${a1.id}`)).toEqual([]);
    expect(await m2.read("pref", { scope: "principal" })).toBe("dark mode");
  });
});

describe("memory tools through a harness", () => {
  it("memory_write needs approval when asked; memory_read and memory_search answer from memory", async () => {
    const log = createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-memory-")), "arbor.db") });
    logs.push(log);
    const model = scriptedModel([
      { toolCalls: [{ id: "w1", name: "memory_write", arguments: { key: "favourite", value: { colour: "teal" } } }] },
      { toolCalls: [{ id: "r1", name: "memory_read", arguments: { key: "favourite" } }, { id: "s1", name: "memory_search", arguments: { query: "teal" } }] },
      { text: "teal it is" },
    ]);
    const harness = await createHarness({ eventLog: log, cwd: "/w", models: { main: model }, memory: { tools: true }, requireApproval: ["memory_write"] });
    try {
      const first = await harness.prompt("remember my colour");
      expect(first.status).toBe("suspended");
      expect(await harness.memory!.read("favourite")).toBeUndefined();
      await harness.approve("w1");
      const outcome = await harness.continue();
      expect(outcome.status).toBe("done");
      expect(await harness.memory!.read("favourite")).toEqual({ colour: "teal" });
      const results = harness.session.view
        .buildContext()
        .messages.filter((message) => message.role === "toolResult")
        .map((message) => (message as { content: { text: string }[] }).content[0].text);
      expect(results[1]).toBe(JSON.stringify({ key: "favourite", value: { colour: "teal" } }));
      expect(JSON.parse(results[2])).toEqual([{ key: "favourite", value: { colour: "teal" } }]);
    } finally {
      await harness.close();
    }
  });
});
