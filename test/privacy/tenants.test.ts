/**
 * Tenants: a session of tenant A is invisible to tenant B on every read and write path of the
 * library (repository over SQLite and PostgreSQL, the harness) and of the CLI (a real child
 * process per command), and a wrong tenant looks exactly like a missing session: the same error
 * class, code, message and details (CLI: the same exit code and stderr), the ids aside.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const MISSING = "0190aaaa-0000-7000-8000-000000000000";

/** The rejection of `work`, as comparable data with `id` replaced by `<id>`. */
async function failureOf(work: () => Promise<unknown>, id: string) {
  try {
    await work();
  } catch (error) {
    const { name, code, message, details } = error as { name: string; code: string; message: string; details?: unknown };
    return JSON.parse(JSON.stringify({ name, code, message, details }).split(id).join("<id>"));
  }
  return "resolved";
}

let dir: string;
let server: OpenAIServer;
const schema = useTestSchemas("tenants");
beforeAll(async () => {
  dir = tempDir("arbor-tenants-");
  server = await startOpenAIServer({ respond: () => textResponse("ok") });
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ["SQLite", () => createSqliteEventLog({ path: join(dir, `lib-${Math.random().toString(36).slice(2)}.db`) })],
  ["PostgreSQL", () => createPostgresEventLog({ connectionString: "postgres://postgres@127.0.0.1:5432/test", schema: schema() })],
  ["memory", () => createMemoryEventLog()],
] as [string, () => EventLog][])("the library over %s", (_name, makeLog) => {
  it("hides tenant A's session from tenant B on every repository path, exactly like a missing one", async () => {
    const log = makeLog();
    try {
      const a = createSessionRepository({ log, tenant: "a" });
      const b = createSessionRepository({ log, tenant: "b" });
      const session = await a.create({ cwd: dir });
      await session.appendEntry({ type: "custom", customType: "note", data: { text: "tenant a's note" } });
      const id = session.id;
      expect(session.view.info.tenant).toBe("a");

      for (const [path, wrong, missing] of [
        ["open", () => b.open(id), () => b.open(MISSING)],
        ["fork", () => b.fork(id), () => b.fork(MISSING)],
        ["delete", () => b.delete(id), () => b.delete(MISSING)],
      ] as const) {
        const failure = await failureOf(wrong, id);
        expect(failure, path).toMatchObject({ code: "SESSION_NOT_FOUND" });
        expect(failure, path).toEqual(await failureOf(missing, MISSING));
      }
      expect((await b.list()).map((row) => row.id)).toEqual([]);
      expect((await a.list()).map((row) => row.id)).toEqual([id]);
      // Writes into another tenant are refused; nothing of A changed.
      await expect(b.create({ tenant: "a" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(b.importEntries({ tenant: "a", entries: [] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect((await a.open(id)).view.getEntries()).toHaveLength(1);
      // A fork stays in its tenant; an unscoped repository (an admin's) sees both tenants.
      const fork = await a.fork(id);
      expect(fork.view.info.tenant).toBe("a");
      const own = await b.create({ cwd: dir });
      expect((await createSessionRepository({ log }).list()).map((row) => row.id).sort()).toEqual([id, fork.id, own.id].sort());
      // A session that names no tenant belongs to `default`.
      const legacy = await createSessionRepository({ log }).create({ cwd: dir });
      expect((await createSessionRepository({ log, tenant: "default" }).open(legacy.id)).id).toBe(legacy.id);
      await expect(b.open(legacy.id)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    } finally {
      await log.close();
    }
  });
});

describe("the harness", () => {
  it("with tenant B cannot open, resume or subscribe to tenant A's session", async () => {
    const log = createSqliteEventLog({ path: join(dir, "harness.db") });
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    try {
      const harnessA = await createHarness({ eventLog: log, tenant: "a", models: { main: model }, cwd: dir });
      await harnessA.prompt("hello from a");
      expect(harnessA.session.view.info.tenant).toBe("a");
      await harnessA.close();
      const wrong = await failureOf(() => createHarness({ eventLog: log, tenant: "b", sessionId: harnessA.id, models: { main: model }, cwd: dir }), harnessA.id);
      expect(wrong).toEqual(await failureOf(() => createHarness({ eventLog: log, tenant: "b", sessionId: MISSING, models: { main: model }, cwd: dir }), MISSING));
      const harnessB = await createHarness({ eventLog: log, tenant: "b", models: { main: model }, cwd: dir });
      expect(await failureOf(() => harnessB.openSession(harnessA.id), harnessA.id)).toEqual(await failureOf(() => harnessB.openSession(MISSING), MISSING));
      expect((await harnessB.repository!.list()).map((row) => row.id)).toEqual([harnessB.id]);
      await harnessB.close();
    } finally {
      await log.close();
    }
  });
});

describe("the CLI with --tenant", { timeout: 240_000 }, () => {
  it("shows tenant B nothing of tenant A: every read and write command answers as for a missing session", async () => {
    const db = join(dir, "cli.db");
    const env = { OPENAI_API_KEY: "test-key" };
    const created = await runArbor(["--db", db, "--tenant", "a", "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "hello from tenant a"], { env });
    expect(created.code).toBe(0);
    const id = /session (\S+)/.exec(created.stderr)![1];
    const exported = join(dir, "a.jsonl");
    const exportA = await runArbor(["--db", db, "--tenant", "a", "export", id, "-o", exported]);
    expect(exportA.code).toBe(0);

    const commands: string[][] = [
      ["tree", "<ref>"],
      ["context", "<ref>", "--json"],
      ["events", "<ref>", "--json"],
      ["export", "<ref>"],
      ["fork", "<ref>"],
      ["label", "<ref>", "x", "y"],
      ["rm", "<ref>"],
      ["run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "--session", "<ref>", "go on"],
    ];
    const as = (tenant: string, command: string[], ref: string) =>
      runArbor(["--db", db, ...command.map((word) => (word === "<ref>" ? ref : word))], { env: { ...env, ARBOR_TENANT: tenant } });
    const results = await Promise.all(commands.map((command) => Promise.all([as("b", command, id), as("a", command, MISSING)])));
    results.forEach(([wrong, missing], index) => {
      const label = commands[index][0];
      expect(wrong.code, label).not.toBe(0);
      expect(wrong.code, label).toBe(missing.code);
      expect(wrong.stderr.split(id).join("<ref>"), label).toBe(missing.stderr.split(MISSING).join("<ref>"));
      expect(wrong.stdout, label).toBe(missing.stdout);
    });
    const sessionsB = await runArbor(["--db", db, "--tenant", "b", "sessions", "--json"]);
    expect(JSON.parse(sessionsB.stdout)).toEqual([]);
    // An import lands in the importing tenant only.
    const imported = await runArbor(["--db", db, "--tenant", "b", "import", exported]);
    expect(imported.code).toBe(0);
    const [sessionsA, sessionsBAfter] = await Promise.all([runArbor(["--db", db, "--tenant", "a", "sessions", "--json"]), runArbor(["--db", db, "--tenant", "b", "sessions", "--json"])]);
    expect((JSON.parse(sessionsA.stdout) as { id: string }[]).map((row) => row.id)).toEqual([id]);
    expect(JSON.parse(sessionsBAfter.stdout)).toHaveLength(1);
    expect((JSON.parse(sessionsBAfter.stdout) as { id: string }[])[0].id).not.toBe(id);
  });
});
