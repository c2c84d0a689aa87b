/**
 * A full disk during a checkpoint, for real: the store's files sit on a small tmpfs (SQLite: the
 * log file itself; PostgreSQL: the `workspace_blobs` table moved to a tablespace on one), and a
 * bash call writes a 3 MB incompressible file. The checkpoint fails with the file system's
 * ENOSPC (SQLite `database or disk is full`, PostgreSQL `could not extend file`): the call gets an
 * error result naming the cause and no checkpoint, no blob of that checkpoint stays in the store,
 * and the next call's checkpoint records what the failed one could not, so the log and the
 * folder agree at the end. Needs `mount -t tmpfs` (root); left out, saying so, without it.
 */
import { execFileSync } from "node:child_process";
import { chownSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createCodingTools } from "../../src/adapters/tools/index.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { blobHash } from "../../src/store/workspace/blob-store.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { PG_URL, testSchemaName } from "../store/pg-test-db.ts";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A tmpfs of `size` mounted on a new folder (unmounted after the test). */
function smallDisk(size: string): string {
  const at = mkdtempSync(join(tmpdir(), "arbor-full-disk-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", at]);
  cleanups.push(() => execFileSync("umount", ["-l", at]));
  return at;
}

const canMount = (() => {
  if (process.platform !== "linux" || userInfo().uid !== 0) return false;
  try {
    const at = mkdtempSync(join(tmpdir(), "arbor-mount-probe-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", at], { stdio: "ignore" });
    execFileSync("umount", [at]);
    return true;
  } catch {
    return false;
  }
})();
if (!canMount) console.warn("workspace-disk-full: left out (needs root and mount -t tmpfs for a real full disk)");

const BIG = "head -c 3000000 /dev/urandom > big.bin && printf 'small' > small.txt";

async function runOnFullStore(log: EventLog, causeOf: RegExp) {
  const root = mkdtempSync(join(tmpdir(), "arbor-full-root-"));
  writeFileSync(join(root, "a.txt"), "a\n");
  const model = scriptedModel([
    { toolCalls: [{ id: "c_big", name: "bash", arguments: { command: BIG } }] },
    { toolCalls: [{ id: "c_clean", name: "bash", arguments: { command: "rm big.bin && printf 'n' > note.txt" } }] },
    { text: "done" },
  ]);
  const harness = await createHarness({ eventLog: log, cwd: root, models: { main: model }, tools: createCodingTools(createExecutionEnv({ root })), workspace: { root, maxFileBytes: 16 * 1024 * 1024 } });
  cleanups.push(() => harness.close());
  return { root, harness, prompt: () => harness.prompt("work"), causeOf };
}

async function check(log: EventLog, setup: Awaited<ReturnType<typeof runOnFullStore>>) {
  const { root, harness, prompt, causeOf } = setup;
  const outcome = await prompt();
  expect(outcome.status, outcome.error).toBe("done");
  const events = await log.readStream(`session-${harness.session.id}`);
  const checkpointOf = (callId: string) => events.find((event) => event.type === "workspace.checkpointed" && (event.data as { toolCallId?: string }).toolCallId === callId);
  const resultOf = (callId: string) =>
    events
      .filter((event: StoredEvent) => event.type === "entry.appended")
      .map((event) => (event.data as { entry: { message?: { role: string; toolCallId?: string; isError?: boolean; content: { text?: string }[] } } }).entry.message)
      .find((message) => message?.role === "toolResult" && message.toolCallId === callId)!;
  // The failed checkpoint: an error result naming the cause, no checkpoint, no blob of it kept.
  const failed = resultOf("c_big");
  expect(failed.isError).toBe(true);
  expect(failed.content[0].text).toMatch(/The call ran, but its workspace checkpoint failed/);
  expect(failed.content[0].text).toMatch(causeOf);
  expect(checkpointOf("c_big")).toBeUndefined();
  const smallHash = blobHash(Buffer.from("small"));
  // The next checkpoint (a full scan) records what the failed one could not: small.txt, and no big.bin.
  const next = checkpointOf("c_clean")!.data as { changes: { path: string; node: { blob?: string } | null }[] };
  expect(next.changes.map((change) => change.path).sort()).toEqual(["note.txt", "small.txt"]);
  const stored = await log.workspaceBlobs!.list("default");
  expect(stored.every((row) => row.bytes < 1_000_000)).toBe(true);
  expect(stored.map((row) => row.hash)).toContain(smallHash);
  expect(await harness.workspace!.diff()).toEqual([]);
  expect(readFileSync(join(root, "small.txt"), "utf8")).toBe("small");
}

describe.skipIf(!canMount)("a full disk during a workspace checkpoint", { timeout: 120_000 }, () => {
  it("SQLite file on a full tmpfs: the call fails with the cause, nothing of its checkpoint is kept, the next one records it", async () => {
    const disk = smallDisk("1536k");
    const log = createSqliteEventLog({ path: join(disk, "arbor.db") });
    cleanups.push(() => log.close());
    await check(log, await runOnFullStore(log, /database or disk is full/));
  });

  it("PostgreSQL with workspace_blobs in a tablespace on a full tmpfs: the same", async () => {
    const disk = smallDisk("1m");
    const location = join(disk, "ts");
    mkdirSync(location);
    const postgresUser = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const postgresGroup = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(location, postgresUser, postgresGroup);
    const schema = testSchemaName("wsfull");
    const tablespace = `arbor_full_${schema}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE TABLESPACE ${tablespace} LOCATION '${location}'`);
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.query(`DROP TABLESPACE IF EXISTS ${tablespace}`);
      await admin.end();
    });
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
    cleanups.push(() => log.close());
    const setup = await runOnFullStore(log, /could not extend file|No space left on device/);
    // The baseline created the table; its rows (and their TOAST) now live on the small disk.
    await admin.query(`ALTER TABLE "${schema}".workspace_blobs SET TABLESPACE ${tablespace}`);
    await check(log, setup);
  });
});
