/**
 * No error disappears silently in `src/`: eslint refuses an empty catch block and a rejection
 * handler or error listener that drops its error (`() => undefined`, `() => {}`, `() => ({})`,
 * `() => []`, `() => null`). A deliberate drop goes through `src/core/ignored.ts`, which states
 * why it is safe and counts it. Only the files of `swallowedErrorAllowlist` are exempt.
 */
import { existsSync, readFileSync } from "node:fs";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });
// A specifier TypeScript does not resolve: the config is plain JavaScript without types.
const CONFIG: string = "../../eslint.config.js";
const { swallowedErrorAllowlist } = (await import(CONFIG)) as { swallowedErrorAllowlist: string[] };

/** The `no-restricted-syntax` findings of `code` linted as if it were the file `filePath`. */
async function swallowed(code: string, filePath: string): Promise<number[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.filter((message) => message.ruleId === "no-restricted-syntax").map((message) => message.line);
}

const SNIPPET = `export async function f(p: Promise<number>, e: { on(name: string, listener: () => void): void }) {
  try { await p; } catch {}
  try { await p; } catch (_error) { /* a comment only */ }
  await p.catch(() => undefined);
  await p.catch(() => {});
  await p.catch(() => ({}));
  await p.catch(() => []);
  await p.then(() => true, () => false);
  e.on("error", () => undefined);
}
`;

describe("swallowed errors in src/", () => {
  it("fails lint on each kind of silent drop in src/, and only there", async () => {
    expect(await swallowed(SNIPPET, "src/core/example.ts")).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await swallowed(SNIPPET, "test/core/example.ts")).toEqual([]);
  }, 60_000);

  it("passes a drop that states its reason, and an error that is handled", async () => {
    const code = `import { ignored, ignoreError } from "./ignored.ts";
export async function f(p: Promise<number>, e: { on(name: string, listener: () => void): void }) {
  try { await p; } catch (error) { ignored("an observer threw", error); }
  await p.catch(ignoreError("closing a closed handle"));
  await p.catch((error: unknown) => { throw new Error("wrapped", { cause: error }); });
  e.on("data", () => undefined);
}
`;
    expect(await swallowed(code, "src/core/example.ts")).toEqual([]);
  }, 60_000);

  it("allowlists only files that exist and still drop an error silently", async () => {
    for (const file of swallowedErrorAllowlist) {
      expect(existsSync(file), file).toBe(true);
      expect(await swallowed(readFileSync(file, "utf8"), "src/core/allowlist-probe.ts"), file).not.toEqual([]);
    }
  }, 120_000);
});
