/**
 * A key rotation stopped midway (the process dies between two re-wraps): the key check is re-wrapped last, so the new master key alone is still
 * refused at open (some data keys are under the old one) instead of opening the store and failing later, session by session. Given both keys, a
 * second rotation finishes the job. A real key file; the crash is a key store whose third re-wrap throws.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EncryptionKeyMismatchError } from "../../src/core/errors.ts";
import type { DataKeyRows } from "../../src/store/crypto/data-key-rows.ts";
import { createLocalKeyProvider } from "../../src/store/crypto/master-key.ts";
import { createSessionKeys } from "../../src/store/crypto/session-keys.ts";
import { openSqliteDataKeys } from "../../src/store/crypto/sqlite-data-keys.ts";

const keyRing = (path: string, key: Buffer, previous: Buffer[] = [], rows: DataKeyRows = openSqliteDataKeys(path, { readOnly: false })) =>
  createSessionKeys({ provider: createLocalKeyProvider(key), previous: previous.map((one) => createLocalKeyProvider(one)), rows, readOnly: false, log: path });

describe("a key rotation stopped midway", () => {
  it("leaves the new key alone refused at open; both keys finish it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "arbor-rotation-")), "arbor.keys.db");
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const firstRows = openSqliteDataKeys(path, { readOnly: false });
    const first = keyRing(path, oldKey, [], firstRows);
    for (const id of ["s1", "s2", "s3", "s4"]) await first.load(id, true);
    await firstRows.close();

    const rows = openSqliteDataKeys(path, { readOnly: false });
    let rewraps = 0;
    const crashing: DataKeyRows = Object.assign(Object.create(rows) as DataKeyRows, {
      rewrap: (row: Parameters<DataKeyRows["rewrap"]>[0], from: string) => {
        rewraps += 1;
        if (rewraps === 3) throw new Error("killed");
        return rows.rewrap(row, from);
      },
    });
    await expect(keyRing(path, newKey, [oldKey], crashing).rotate()).rejects.toThrow("killed");
    expect(rewraps).toBe(3);

    expect(() => keyRing(path, newKey).verify()).toThrow(EncryptionKeyMismatchError);
    const both = keyRing(path, newKey, [oldKey]);
    expect((await both.rotate()).total).toBe(4);
    const alone = keyRing(path, newKey);
    expect(() => alone.verify()).not.toThrow();
    for (const id of ["s1", "s2", "s3", "s4"]) expect(await alone.load(id, false)).toBeInstanceOf(Buffer);
  });
});
