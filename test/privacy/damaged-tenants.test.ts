/**
 * A damaged session (one bit of a sealed event's ciphertext flipped) and the library's tenant scope, on a real encrypted SQLite file: another
 * tenant's `repository.open` and `delete` answer exactly as for a missing session (error, message and details, the id aside), whether the damage
 * is in `session.created` or a later event; its owner's open is `EventCorruptError`, and so is an open without a tenant scope. The CLI (a child
 * process) answers `arbor --tenant other tree <id>` as for a missing id.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { flipBitInSealedRecord } from "./sealed-damage.ts";

const dir = tempDir("arbor-damaged-tenants-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const shape = (error: unknown, sessionId: string) => {
  const typed = error as { name: string; code: string; message: string; details: unknown };
  return JSON.parse(JSON.stringify({ name: typed.name, code: typed.code, message: typed.message, details: typed.details }).split(sessionId).join("<id>")) as unknown;
};

it("another tenant's open and delete of a damaged session see a missing session; its owner sees EVENT_CORRUPT", { timeout: 60_000 }, async () => {
  const path = join(dir, "log.db");
  const key = randomBytes(32);
  const writer = createSqliteEventLog({ path, encryption: { key } });
  for (const id of ["dmg-first", "dmg-later"]) {
    const session = await createSessionRepository({ log: writer, tenant: "acme" }).create({ id });
    await session.appendEntry({ type: "message", message: { role: "user", content: `secret of ${id}`, timestamp: 1 } });
  }
  await writer.close();
  flipBitInSealedRecord(path, "session-dmg-first", 1);
  flipBitInSealedRecord(path, "session-dmg-later", 2);

  const log = createSqliteEventLog({ path, encryption: { key } });
  try {
    const other = createSessionRepository({ log, tenant: "other" });
    for (const id of ["dmg-first", "dmg-later"]) {
      for (const run of [(sessionId: string) => other.open(sessionId), (sessionId: string) => other.delete(sessionId)]) {
        const [mine, absent] = [await run(id).catch((error: unknown) => error), await run("no-such-session").catch((error: unknown) => error)];
        expect(shape(mine, id)).toEqual(shape(absent, "no-such-session"));
        expect((mine as { code: string }).code).toBe("SESSION_NOT_FOUND");
      }
      await expect(createSessionRepository({ log, tenant: "acme" }).open(id)).rejects.toMatchObject({ code: "EVENT_CORRUPT" });
      await expect(createSessionRepository({ log }).open(id)).rejects.toMatchObject({ code: "EVENT_CORRUPT" });
      expect(await log.streamVersion(`session-${id}`)).toBe(2);
    }
  } finally {
    await log.close();
  }
  const env = { ARBOR_ENCRYPTION_KEY: key.toString("hex") };
  for (const id of ["dmg-first", "dmg-later"]) {
    const run = async (tenant: string, sessionId: string) => {
      const result = await runArbor(["--db", path, "--tenant", tenant, "tree", sessionId], { env });
      return { code: result.code, stdout: result.stdout.split(sessionId).join("<id>"), stderr: result.stderr.split(sessionId).join("<id>") };
    };
    const theirs = await run("other", id);
    expect(theirs).toEqual(await run("other", "no-such-session"));
    expect(theirs.code).not.toBe(0);
    expect((await run("acme", id)).stderr).toContain("does not authenticate");
  }
});
