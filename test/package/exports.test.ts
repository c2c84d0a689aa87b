/**
 * The package's public surface: every entry point in package.json `exports` maps to a source
 * barrel, its export list matches the committed snapshot (an addition or removal is a deliberate
 * diff: run `npx vitest run test/package/exports.test.ts -u` and review it), and the root entry
 * stays small.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { listExports } from "../../scripts/export-list.ts";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { exports: Record<string, string | { types: string; default: string }> };
const entries = Object.entries(pkg.exports)
  .filter((entry): entry is [string, { types: string; default: string }] => typeof entry[1] === "object")
  .map(([subpath, target]) => ({ subpath, source: target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"), target }));

describe("package exports", () => {
  it("map every entry point to dist with a types condition that matches its JavaScript", () => {
    expect(entries.length).toBeGreaterThan(5);
    for (const { target } of entries) {
      expect(target.types).toBe(target.default.replace(/\.js$/, ".d.ts"));
    }
  });

  const lists = listExports(entries.map((entry) => entry.source));

  it("match the committed export-list snapshot", async () => {
    const text = entries
      .map(({ subpath, source }) => {
        const names = lists.get(source) ?? [];
        return [`# ${subpath} (${source}): ${names.length} names`, ...names.map((name) => `${name.name} ${name.kind}`)].join("\n");
      })
      .join("\n\n");
    await expect(`${text}\n`).toMatchFileSnapshot("exports.snapshot.txt");
  });

  it("keep the root entry at about 60 names, every name exported from exactly one tier besides the root", () => {
    const root = lists.get("src/index.ts") ?? [];
    expect(root.length).toBeGreaterThan(20);
    expect(root.length).toBeLessThanOrEqual(64);
    const tiers = new Map<string, string[]>();
    for (const { subpath, source } of entries) {
      if (subpath === ".") continue;
      for (const { name } of lists.get(source) ?? []) tiers.set(name, [...(tiers.get(name) ?? []), subpath]);
    }
    const twice = [...tiers].filter(([, where]) => where.length > 1);
    expect(twice).toEqual([]);
  });

  it("hold one interface per concept: no Arbor-prefixed twin of another exported name", () => {
    const names = new Set([...lists.values()].flat().map((entry) => entry.name));
    const twins = [...names].filter((name) => /^Arbor[A-Z]/.test(name) && names.has(name.slice("Arbor".length)));
    expect(names.size).toBeGreaterThan(100);
    expect(twins).toEqual([]);
  });
});
