/**
 * A durable workspace on an encrypted log: the files a run writes are checkpointed with their
 * contents sealed (with the tenant's workspace key), so a marker in a file's content is in no byte
 * of the SQLite file or its WAL, nor of the PostgreSQL blob rows or a pg_dump of the log's schema, and a
 * restore (also from a log reopened in another harness) puts the recorded bytes back. A real
 * harness with the coding tools, real SQLite files, the real PostgreSQL and pg_dump.
 */
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createCodingTools } from "../../src/adapters/tools/index.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const execFileAsync = promisify(execFile);
const newSchema = useTestSchemas("encws");
const call = (id: string, name: string, args: Record<string, unknown>) => ({ toolCalls: [{ id, name, arguments: args }] });
const fileBytes = (path: string) =>
  ["", "-wal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1")).join("");

describe("workspace checkpoints on an encrypted log", { timeout: 120_000 }, () => {
  let dir: string;
  const key = randomBytes(32);
  beforeAll(() => {
    dir = tempDir("arbor-encws-");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A run that writes `marker` into a new file and edits an existing one; restores before and after it, in a second harness on a reopened log. */
  async function recordAndRestore(open: () => EventLog, marker: string): Promise<string> {
    const root = join(dir, `root-${marker}`);
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, "kept.txt"), `original ${marker} line\n`);
    // Incompressible bytes around the marker: deflate stores them as they are, so only sealing hides it.
    const binary = Buffer.concat([randomBytes(4096), Buffer.from(marker), randomBytes(4096)]);
    writeFileSync(join(root, "data.bin"), binary);
    const model = scriptedModel([
      call("c1", "write", { path: "secret.txt", content: `the file holds ${marker}\n`.repeat(20) }),
      call("c2", "edit", { path: "kept.txt", edits: [{ oldText: "original", newText: "edited" }] }),
      call("c3", "bash", { command: "rm data.bin" }),
      { text: "done" },
    ]);
    const log = open();
    const harness = await createHarness({ eventLog: log, cwd: root, models: { main: model }, tools: createCodingTools(createExecutionEnv({ root })), workspace: { root } });
    expect((await harness.prompt("write it")).status).toBe("done");
    const id = harness.id;
    const entries = harness.session.view.getBranch();
    const user = entries.find((entry) => entry.type === "message" && (entry as { message: { role: string } }).message.role === "user")!;
    const last = entries[entries.length - 1];
    await harness.close();
    await log.close();

    rmSync(join(root, "secret.txt"));
    writeFileSync(join(root, "kept.txt"), "clobbered\n");
    const reopenedLog = open();
    const reopened = await createHarness({ eventLog: reopenedLog, cwd: root, models: { main: scriptedModel([]) }, sessionId: id, workspace: { root } });
    try {
      await reopened.workspace!.restore(user.id);
      expect(existsSync(join(root, "secret.txt"))).toBe(false);
      expect(readFileSync(join(root, "data.bin")).equals(binary)).toBe(true);
      expect(readFileSync(join(root, "kept.txt"), "utf8")).toBe(`original ${marker} line\n`);
      await reopened.workspace!.restore(last.id);
      expect(readFileSync(join(root, "secret.txt"), "utf8")).toBe(`the file holds ${marker}\n`.repeat(20));
      expect(readFileSync(join(root, "kept.txt"), "utf8")).toBe(`edited ${marker} line\n`);
      expect(existsSync(join(root, "data.bin"))).toBe(false);
    } finally {
      await reopened.close();
      await reopenedLog.close();
    }
    return id;
  }

  it("SQLite: the file contents are in no byte of the file or its WAL; restore gives them back", async () => {
    const path = join(dir, "ws.db");
    const marker = `WSMARK${randomBytes(5).toString("hex")}`;
    const id = await recordAndRestore(() => createSqliteEventLog({ path, encryption: { key } }), marker);
    expect(fileBytes(path)).not.toContain(marker);
    // The delete's purge reads the sealed checkpoints and removes the session's blobs.
    const log = createSqliteEventLog({ path, encryption: { key } });
    expect((await log.workspaceBlobs!.list("default")).length).toBeGreaterThan(0);
    await createSessionRepository({ log }).delete(id);
    expect(await log.workspaceBlobs!.list("default")).toEqual([]);
    await log.close();
  });

  it("PostgreSQL: the file contents are in no row of a dump of the log's schema; restore gives them back", async () => {
    const schema = newSchema();
    const marker = `WSMARK${randomBytes(5).toString("hex")}`;
    const client = await testClient();
    try {
      await recordAndRestore(() => createPostgresEventLog({ connectionString: PG_URL, schema, encryption: { key } }), marker);
      // The stored bytes themselves (a dump shows bytea as hex): none holds the marker.
      const blobs = await client.query(`SELECT data FROM "${schema}".workspace_blobs`);
      expect(blobs.rows.length).toBeGreaterThan(0);
      for (const row of blobs.rows) expect((row.data as Buffer).includes(marker)).toBe(false);
      const dump = join(dir, `${schema}.sql`);
      await execFileAsync("pg_dump", ["--dbname", PG_URL, "--schema", schema, "--file", dump]);
      expect(readFileSync(dump, "latin1")).not.toContain(marker);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}_keys" CASCADE`);
      await client.end();
    }
  });
});
