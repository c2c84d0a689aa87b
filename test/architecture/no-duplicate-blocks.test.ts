/**
 * No block of six or more identical lines appears twice in `src/`: every window of 6 consecutive non-blank lines (each trimmed) of its `.ts` and
 * `.tsx` files occurs once, braces-only lines included. Only a window holding an import or re-export line (`import …`, `export … from`,
 * `} from …`) is exempt: modules may import the same things. Shared logic lives in one helper that both places call.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const WINDOW = 6;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Whether a trimmed line belongs to an import or re-export statement. */
function isImportLine(line: string): boolean {
  return /^import[\s{*"']/.test(line) || /^export\b.*\bfrom\s*["']/.test(line) || /^\}\s*from\s*["']/.test(line);
}

/** Each window of {@link WINDOW} lines found in more than one place of `files` (path → text), as `file:line ~ file:line`, in reading order. */
function duplicateBlocks(files: ReadonlyMap<string, string>): string[] {
  const places = new Map<string, string[]>();
  for (const [file, text] of files) {
    const lines = text
      .split("\n")
      .map((line, index) => ({ number: index + 1, text: line.trim() }))
      .filter((line) => line.text !== "");
    for (let start = 0; start + WINDOW <= lines.length; start++) {
      const window = lines.slice(start, start + WINDOW);
      if (window.some((line) => isImportLine(line.text))) continue;
      const key = window.map((line) => line.text).join("\n");
      places.set(key, [...(places.get(key) ?? []), `${file}:${window[0].number}`]);
    }
  }
  return [...places.values()].filter((found) => found.length > 1).map((found) => found.join(" ~ "));
}

describe("duplicate blocks in src/", () => {
  it("no six consecutive non-blank lines appear twice", () => {
    const files = new Map(sourceFiles("src").map((file) => [file, readFileSync(file, "utf8")] as const));
    expect(files.size).toBeGreaterThan(300);
    const duplicates = duplicateBlocks(files);
    expect(duplicates, `blocks of ${WINDOW} identical lines, each to be shared by one helper:\n${duplicates.join("\n")}`).toEqual([]);
  });

  it("finds a planted duplicate across files and within one, whatever the indentation and blank lines, and skips imports", () => {
    const block = ["if (closed) return;", "cursor = event.globalPosition;", "", "filter.afterVersion = undefined;", "subscriber.next(event);", "}", "});"];
    const imports = ['import { a } from "./a.ts";', "import {", "  b,", '} from "./b.ts";', 'export { c } from "./c.ts";', "const x = 1;"];
    const first = ["// first", ...block, ...imports].join("\n");
    const second = ["function f() {", ...block.map((line) => `    ${line}`), "return 2;", ...imports].join("\n");
    // Five repeated lines are not a block; six are, within one file too.
    const five = ["a();", "b();", "c();", "d();", "e();"];
    const fiveTwice = [...five, ...five, "f();"].join("\n");
    const sixTwice = [...five, "f();", ...five, "f();"].join("\n");
    expect(duplicateBlocks(new Map([["first.ts", first], ["second.ts", second], ["five.ts", fiveTwice]]))).toEqual(["first.ts:2 ~ second.ts:2"]);
    expect(duplicateBlocks(new Map([["six.ts", sixTwice]]))).toEqual(["six.ts:1 ~ six.ts:7"]);
  });
});
