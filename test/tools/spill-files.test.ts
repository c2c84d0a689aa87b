/**
 * Bash spill files (issue 19 finding 3): redacted by the env's secrets (also a key split across
 * output chunks and in its encodings), cut at the size cap, swept by age and total size, and
 * deleted with their env. Real bash commands, real files.
 */
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createBashTool } from "../../src/adapters/tools/bash.ts";
import { sweepSpillFiles } from "../../src/adapters/tools/spill-files.ts";
import { outcome, tempDir } from "./tool-harness.ts";

const KEY = "sk-spill-Hq4Wm9Xr2Tn7Lb5Vc8Kd3Fz";

const spillOf = (result: Awaited<ReturnType<typeof outcome>>) => (result.result?.details as { fullOutputPath: string }).fullOutputPath;

describe("bash spill files", () => {
  it("hold no secret: literal, split across chunks, base64, hex, reversed, folded", async () => {
    const root = tempDir();
    writeFileSync(join(root, "k"), KEY);
    const env = createExecutionEnv({ root, spillDir: join(tempDir(), "spill"), secrets: [KEY] });
    // The key is written 4 bytes at a time, each piece flushed separately, between 3000 lines.
    const command =
      "seq 1500; for i in $(seq 0 4 40); do printf '%s' \"$(cut -c$((i+1))-$((i+4)) k)\"; sleep 0.01; done; echo; base64 k; xxd -p k; rev k; echo; fold -w 9 k; echo; seq 1500";
    const result = await outcome(createBashTool(env), { command });
    const text = readFileSync(spillOf(result), "utf8");
    expect(text.startsWith("1\n2\n")).toBe(true);
    expect(text.endsWith("1499\n1500\n")).toBe(true);
    expect(text).toContain("[redacted]");
    const flat = text.replaceAll("\n", "");
    for (const form of [KEY, Buffer.from(KEY).toString("base64").slice(0, 40), Buffer.from(KEY).toString("hex"), [...KEY].reverse().join("")]) {
      expect(flat).not.toContain(form);
    }
    // Without secrets the raw bytes are kept (the redaction is what removed them).
    const plain = createExecutionEnv({ root, spillDir: join(tempDir(), "spill") });
    expect(readFileSync(spillOf(await outcome(createBashTool(plain), { command: "cat k; echo; seq 3000" })), "utf8")).toContain(KEY);
  });

  it("are cut at spillMaxBytes with a notice", async () => {
    const env = createExecutionEnv({ root: tempDir(), spillDir: join(tempDir(), "spill"), spillMaxBytes: 10_000 });
    const path = spillOf(await outcome(createBashTool(env), { command: "seq 100000" }));
    const text = readFileSync(path, "utf8");
    expect(statSync(path).size).toBeLessThanOrEqual(10_000);
    expect(text).toMatch(/\[arbor: spill file cut at 9\.8KB\]\n$/);
  });

  it("are swept by age and total size, and removed with their env", async () => {
    const spillRoot = tempDir();
    const folder = join(spillRoot, "env-a");
    mkdirSync(folder);
    const now = Date.now();
    const file = (name: string, size: number, ageMs: number) => {
      const path = join(folder, name);
      writeFileSync(path, "x".repeat(size));
      utimesSync(path, (now - ageMs) / 1000, (now - ageMs) / 1000);
      return path;
    };
    const expired = file("arbor-bash-01.log", 10, 10_000);
    const oldest = file("arbor-bash-02.log", 600, 3000);
    const newer = file("arbor-bash-03.log", 600, 1000);
    const other = file("notes.txt", 10, 10_000);
    const swept = await sweepSpillFiles({ root: spillRoot, retentionMs: 5000, maxBytes: 1000, now });
    expect(swept.removed).toEqual([expired, oldest]);
    expect(swept.keptBytes).toBe(600);
    expect([existsSync(newer), existsSync(other)]).toEqual([true, true]);

    // An env's own sweep runs after each spill; removeSpillFiles deletes its folder.
    const env = createExecutionEnv({ root: tempDir(), spillDir: join(tempDir(), "spill"), spillRetentionMs: 30_000, spillMaxBytes: 1_000_000 });
    const first = spillOf(await outcome(createBashTool(env), { command: "seq 3000" }));
    utimesSync(first, (now - 60_000) / 1000, (now - 60_000) / 1000);
    const second = spillOf(await outcome(createBashTool(env), { command: "seq 3001" }));
    expect(existsSync(first)).toBe(false);
    await env.removeSpillFiles();
    expect(existsSync(second)).toBe(false);
  });
});
