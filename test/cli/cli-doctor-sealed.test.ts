/**
 * `arbor doctor` on an encrypted log (the real CLI in child processes, real SQLite files and key files): one bit flipped in a sealed batch's
 * ciphertext (a row of `arbor_sealed_batches`) or in a single sealed record's `$enc` leaves the file's structure intact, and doctor, given
 * ARBOR_ENCRYPTION_KEY, opens every sealed event and names the damaged session and the file (exit 1). Without the key it never says ok: the sealed
 * data is "not verified" (exit 2, naming the variable). `arbor sessions` lists the damaged session to its own tenant only, marked, with a warning
 * pointing at `arbor doctor` (exit 0, as for the CLI's other warnings); another tenant's list is as before and never names it.
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { NewEntry } from "../../src/store/session-types.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { flipBitInSealedBatch, flipBitInSealedRecord, sealedLayout } from "../privacy/sealed-damage.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

const dir = tempDir("arbor-doctor-sealed-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const key = randomBytes(32);
const withKey = { ARBOR_ENCRYPTION_KEY: key.toString("base64"), ARBOR_TENANT: "default" };
const withoutKey = { ARBOR_ENCRYPTION_KEY: "", ARBOR_TENANT: "default" };
const DAMAGED = "0197c0de-dead-7000-8000-00000000beef";
const message = (text: string, timestamp: number): NewEntry => ({ type: "message", message: { role: "user", content: [{ type: "text", text }], timestamp } });
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** An encrypted log (and its key file) with sessions of two tenants; `DAMAGED` is the default tenant's, one batch (version 2) and one record (5). */
async function makeLog(path: string): Promise<void> {
  const log = createSqliteEventLog({ path, encryption: { key } });
  const repository = createSessionRepository({ log });
  for (const [id, tenant] of [["intact-default", "default"], [DAMAGED, "default"], ["intact-other", "other"]] as const) {
    const session = await repository.create({ id, cwd: dir, tenant });
    await session.appendEntries([message(`${id} one`, 1_000), message(`${id} two`, 1_001), message(`${id} three`, 1_002)]);
    await session.appendEntry(message(`${id} four`, 1_003));
  }
  await log.close();
  expect(sealedLayout(path, `session-${DAMAGED}`)).toEqual({ heads: [2], records: [1, 5] });
}

/** A copy of the log and its key file. */
function copyOf(source: string, name: string): string {
  const target = join(dir, `${name}.db`);
  copyFileSync(source, target);
  copyFileSync(source.replace(/\.db$/, ".keys.db"), target.replace(/\.db$/, ".keys.db"));
  return target;
}

describe("arbor doctor on an encrypted log", () => {
  it("opens every sealed event with the key and names the session and file of one flipped bit; without the key it never says ok", async () => {
    const good = join(dir, "good.db");
    await makeLog(good);
    const batch = copyOf(good, "batch");
    flipBitInSealedBatch(batch, `session-${DAMAGED}`, 2);
    const record = copyOf(good, "record");
    flipBitInSealedRecord(record, `session-${DAMAGED}`, 5);
    for (const [file, versions] of [[batch, "versions 2-4"], [record, "version 5"]] as const) {
      const doctor = await runArbor(["--db", file, "doctor"], { env: withKey });
      expect(doctor.code, doctor.stdout + doctor.stderr).toBe(1);
      expect(doctor.stderr).toContain(`${file}: session "${DAMAGED}": `);
      expect(doctor.stderr).toContain(`do not read (${versions})`);
      expect(doctor.stderr).toContain(`damaged: ${file}: 1 problem(s) found`);
      // The structure is intact: without the key nothing tells, and doctor says it could not verify, never ok.
      const blind = await runArbor(["--db", file, "doctor"], { env: withoutKey });
      expect(blind.code).toBe(2);
      expect(blind.stderr).toContain("not verified");
    }

    const ok = await runArbor(["--db", good, "doctor"], { env: withKey });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^ok ${escape(good)} \\(\\d+ events; \\d+ sealed items opened and authenticated\\)`));
    const keyless = await runArbor(["--db", good, "doctor"], { env: withoutKey });
    expect(keyless.code, keyless.stdout).toBe(2);
    expect(keyless.stdout).not.toMatch(/^ok/);
    expect(keyless.stderr).toContain(`not verified: ${good} holds sealed data`);
    expect(keyless.stderr).toContain("ARBOR_ENCRYPTION_KEY");

    // The damaged session's own tenant sees it marked, with a warning; the other tenant's list is as before and never names it.
    const owner = await runArbor(["--db", batch, "sessions"], { env: withKey });
    expect(owner.code, owner.stderr).toBe(0);
    expect(owner.stdout).toMatch(new RegExp(`${escape(DAMAGED)}  changed \\S+  DAMAGED \\(EVENT_CORRUPT\\)`));
    expect(owner.stdout).toContain("intact-default");
    expect(owner.stderr).toContain(`warning: session ${DAMAGED} is damaged`);
    expect(owner.stderr).toContain("arbor doctor");
    const other = await runArbor(["--db", batch, "--tenant", "other", "sessions"], { env: withKey });
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toContain("intact-other");
    expect(other.stdout + other.stderr).not.toContain(DAMAGED);
    // Commands that open every listed session pass over the damaged one with the same warning, and `latest` is the newest that opens.
    for (const command of [["approvals"], ["elicitations"]]) {
      const listed = await runArbor(["--db", batch, ...command], { env: withKey });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stderr).toContain(`warning: session ${DAMAGED} is damaged`);
    }
    const latest = await runArbor(["--db", batch, "tree", "latest"], { env: withKey });
    expect(latest.code, latest.stderr).toBe(0);
    expect(latest.stdout).toContain("session intact-default");
    const json = await runArbor(["--db", record, "sessions", "--json"], { env: withKey });
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as { id: string; damaged?: { code: string } }[];
    expect(rows.find((row) => row.id === DAMAGED)?.damaged?.code).toBe("EVENT_CORRUPT");
  }, 180_000);
});
