/**
 * A half-deleted session in the CLI: a delete that stopped after destroying the session's data key
 * (its key row is removed by hand here) leaves its events. `arbor doctor` names each such session
 * and the `arbor rm` that finishes it, instead of `ok`; `arbor rm <id>` finishes it (exit 0), and
 * for another tenant answers exactly as for a missing id, removing nothing. The real CLI in child
 * processes, real SQLite files, the real PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { currentRunOwner } from "../../src/machines/run-lease.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { tombstoneStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { runArbor, tempDir, type CliResult } from "../cli/cli-helpers.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const dir = tempDir("arbor-half-deleted-cli-");
const newSchema = useTestSchemas("halfcli");
const keySchemas: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const client = await testClient();
  for (const name of keySchemas) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  await client.end();
});

const key = randomBytes(32).toString("hex");
const env = { ARBOR_ENCRYPTION_KEY: key };

/** Sessions `ids` (id → tenant) with one message each, written through `log`, which is closed. */
async function sessions(log: EventLog, ids: Record<string, string>): Promise<void> {
  for (const [id, tenant] of Object.entries(ids)) {
    const session = await createSessionRepository({ log, tenant }).create({ id, cwd: dir });
    await session.appendEntry({ type: "message", message: { role: "user", content: `text of ${id}`, timestamp: 1 } });
  }
  await log.close();
}

/** Exit code and output with `id` replaced, to compare the answer for a session with the one for a missing id. */
const answer = (result: CliResult, id: string) => ({ code: result.code, stdout: result.stdout.split(id).join("<id>"), stderr: result.stderr.split(id).join("<id>") });

describe("a half-deleted session in the CLI", { timeout: 120_000 }, () => {
  it("SQLite: arbor doctor warns naming it and the command; arbor rm finishes it for its tenant, and another tenant's rm is a missing id", async () => {
    const db = join(dir, "arbor.db");
    const [mine, theirs, kept, busy] = ["half-default", "half-acme", "kept-default", "half-busy"];
    await sessions(createSqliteEventLog({ path: db, encryption: { key } }), { [mine]: "default", [theirs]: "acme", [kept]: "default", [busy]: "default" });
    // A session whose run is open, its stream leased by this (live) process.
    const holder = createSqliteEventLog({ path: db, encryption: { key } });
    const lease = await holder.ownership!.acquire(`session-${busy}`, { ...currentRunOwner() }, { ttlMs: 600_000 });
    await holder.append(`session-${busy}`, [{ type: "run.started", data: { runId: "r1", kind: "prompt" }, metadata: { sessionId: busy, runId: "r1", owner: currentRunOwner() } }]);
    const healthy = await runArbor(["--db", db, "doctor"], { env });
    expect(healthy.code, healthy.stderr).toBe(0);
    expect(healthy.stdout).toMatch(/^ok /);
    // The state of deletes that stopped after destroying the keys.
    const keys = new Database(join(dir, "arbor.keys.db"));
    expect(keys.prepare("DELETE FROM arbor_data_keys WHERE key_id IN (?, ?, ?)").run(mine, theirs, busy).changes).toBe(3);
    keys.close();

    const doctor = await runArbor(["--db", db, "doctor"], { env });
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(doctor.stdout).not.toMatch(/^ok /);
    expect(doctor.stdout).toContain(`warnings ${db}`);
    expect(doctor.stderr).toContain(`session ${mine} is half-deleted`);
    expect(doctor.stderr).toContain(`\`arbor rm ${mine}\``);
    expect(doctor.stderr).toContain(`session ${theirs} is half-deleted`);
    expect(doctor.stderr).toContain(`\`arbor --tenant acme rm ${theirs}\``);
    expect(doctor.stderr).not.toContain(kept);

    // Another tenant: exactly as for a missing id, and nothing is removed.
    const refused = await runArbor(["--db", db, "--tenant", "other", "rm", "--yes", theirs], { env });
    const missing = await runArbor(["--db", db, "--tenant", "other", "rm", "--yes", "no-such-session"], { env });
    expect(answer(refused, theirs)).toEqual(answer(missing, "no-such-session"));
    expect(refused.code).not.toBe(0);

    const removed = await runArbor(["--db", db, "rm", "--yes", mine], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(`deleted ${mine}`);
    const acme = await runArbor(["--db", db, "--tenant", "acme", "rm", "--yes", theirs], { env });
    expect(acme.code, acme.stderr).toBe(0);

    // While another process runs it, refused as any running session is; once the run's process let go, finished.
    const running = await runArbor(["--db", db, "rm", "--yes", busy], { env });
    expect(running.code).not.toBe(0);
    expect(running.stderr).toContain(`Session ${busy} has a run in progress in process ${process.pid}`);
    await lease.release();
    await holder.close();
    const released = await runArbor(["--db", db, "rm", "--yes", busy], { env });
    expect(released.code, released.stderr).toBe(0);

    const log = createSqliteEventLog({ path: db, encryption: { key }, readOnly: true });
    try {
      for (const id of [mine, theirs, busy]) {
        expect(await log.streamVersion(`session-${id}`)).toBe(0);
        expect((await log.readStream(tombstoneStreamId(id)))[0].data).toMatchObject({ sessionId: id, eventCount: id === busy ? 3 : 2, entryCount: 1, keyDestroyed: true });
      }
      expect((await createSessionRepository({ log }).open(kept)).view.getEntries()).toHaveLength(1);
    } finally {
      await log.close();
    }
    const after = await runArbor(["--db", db, "doctor"], { env });
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toMatch(/^ok /);
    expect(after.stderr).toBe("");
  });

  it("SQLite: a session started before encryption was turned on (a clear session.created, later events sealed) is half-deleted too", async () => {
    const db = join(dir, "mixed.db");
    const id = "half-mixed";
    const plain = createSqliteEventLog({ path: db });
    await createSessionRepository({ log: plain, tenant: "acme" }).create({ id, cwd: dir });
    await plain.close();
    const sealed = createSqliteEventLog({ path: db, encryption: { key } });
    const session = await createSessionRepository({ log: sealed, tenant: "acme" }).open(id);
    await session.appendEntry({ type: "message", message: { role: "user", content: "sealed text", timestamp: 1 } });
    await sealed.close();
    const keys = new Database(join(dir, "mixed.keys.db"));
    expect(keys.prepare("DELETE FROM arbor_data_keys WHERE key_id = ?").run(id).changes).toBe(1);
    keys.close();

    const doctor = await runArbor(["--db", db, "doctor"], { env });
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(doctor.stdout).not.toMatch(/^ok /);
    expect(doctor.stdout).toContain(`warnings ${db}`);
    expect(doctor.stderr).toContain(`session ${id} is half-deleted`);
    expect(doctor.stderr).toContain(`\`arbor --tenant acme rm ${id}\``);
    const removed = await runArbor(["--db", db, "--tenant", "acme", "rm", "--yes", id], { env });
    expect(removed.code, removed.stderr).toBe(0);
    const after = await runArbor(["--db", db, "doctor"], { env });
    expect(after.stdout).toMatch(/^ok /);
    expect(after.stderr).toBe("");
  });

  it("PostgreSQL: arbor rm finishes it for its tenant, and another tenant's rm is a missing id", async () => {
    const schema = newSchema();
    keySchemas.push(`${schema}_keys`);
    const pgEnv = { ...env, ARBOR_DB_SCHEMA: schema };
    const id = "half-pg";
    await sessions(createPostgresEventLog({ connectionString: PG_URL, schema, encryption: { key } }), { [id]: "acme" });
    const client = await testClient();
    try {
      expect((await client.query(`DELETE FROM "${schema}_keys".data_keys WHERE key_id = $1`, [id])).rowCount).toBe(1);
      const refused = await runArbor(["--db", PG_URL, "--tenant", "other", "rm", "--yes", id], { env: pgEnv });
      const missing = await runArbor(["--db", PG_URL, "--tenant", "other", "rm", "--yes", "no-such-session"], { env: pgEnv });
      expect(answer(refused, id)).toEqual(answer(missing, "no-such-session"));
      expect((await client.query(`SELECT count(*)::int AS n FROM "${schema}".events WHERE stream_id = $1`, [`session-${id}`])).rows[0].n).toBe(2);

      const removed = await runArbor(["--db", PG_URL, "--tenant", "acme", "rm", "--yes", id], { env: pgEnv });
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stdout).toContain(`deleted ${id}`);
      expect((await client.query(`SELECT count(*)::int AS n FROM "${schema}".events WHERE stream_id = $1`, [`session-${id}`])).rows[0].n).toBe(0);
      const tombstone = await client.query(`SELECT data FROM "${schema}".events WHERE stream_id = $1`, [tombstoneStreamId(id)]);
      expect(tombstone.rows[0].data).toMatchObject({ sessionId: id, tenant: "acme", keyDestroyed: true });
    } finally {
      await client.end();
    }
  });
});
