/**
 * What ships in `src/` must make sense to a reader of the package or of a fork: no comment may point
 * into `../shared` (a team folder that ships with nothing) or cite a tracker's issue number. pi
 * parity notes link to `docs/pi-parity.md` instead.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const REFUSED: Array<{ name: string; pattern: RegExp }> = [
  { name: "a path into ../shared", pattern: /\.\.\/shared/ },
  { name: "an issue number", pattern: /\bissues? #?\d+/i },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

/** `file:line: text` for every refused reference in `files`. */
function findReferences(files: string[], read: (file: string) => string): string[] {
  const found: string[] = [];
  for (const file of files) {
    read(file).split("\n").forEach((line, index) => {
      for (const { name, pattern } of REFUSED) if (pattern.test(line)) found.push(`${file}:${index + 1}: ${name}: ${line.trim()}`);
    });
  }
  return found;
}

describe("source references", () => {
  it("no file in src/ points into ../shared or cites an issue number", () => {
    const files = sourceFiles("src");
    expect(files.length).toBeGreaterThan(100);
    expect(findReferences(files, (file) => readFileSync(file, "utf8"))).toEqual([]);
  });

  it("the check finds both kinds of reference", () => {
    const text: Record<string, string> = {
      "a.ts": "/** semantics pi's, `../shared/reference/pi-behaviour.md` §1 */",
      "b.ts": "// ours, issue 13: approvals\nconst x = 1;",
      "c.ts": "/** see docs/pi-parity.md */",
    };
    const found = findReferences(Object.keys(text), (file) => text[file]);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^a\.ts:1: a path into \.\.\/shared/);
    expect(found[1]).toMatch(/^b\.ts:1: an issue number/);
  });
});
