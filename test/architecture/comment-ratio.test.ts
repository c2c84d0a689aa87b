/**
 * Comments carry contracts, not narration: comment lines stay at most 20 % of the non-blank lines of src/, counted as
 * `grep -rcE "^\s*(//|\*|/\*)" src` over `grep -rcv "^\s*$" src` counts them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const MAX_RATIO = 0.2;
const COMMENT_LINE = /^\s*(\/\/|\*|\/\*)/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path) : [path];
  });
}

/** Comment lines and non-blank lines of `texts`, as the grep command above counts them. */
function countLines(texts: Iterable<string>): { comments: number; nonBlank: number } {
  let comments = 0;
  let nonBlank = 0;
  for (const text of texts) {
    for (const line of text.split("\n")) {
      if (COMMENT_LINE.test(line)) comments++;
      if (!/^\s*$/.test(line)) nonBlank++;
    }
  }
  return { comments, nonBlank };
}

describe("comment ratio", () => {
  it("comment lines are at most 20 % of the non-blank lines of src/", () => {
    const { comments, nonBlank } = countLines(files("src").map((file) => readFileSync(file, "utf8")));
    expect(nonBlank).toBeGreaterThan(10_000);
    expect(comments / nonBlank, `${comments} comment lines of ${nonBlank} non-blank lines`).toBeLessThanOrEqual(MAX_RATIO);
  });

  it("counts JSDoc, line and block comment lines, not code or blank lines", () => {
    const text = ["/**", " * A contract.", " */", "const a = 1; // trailing", "", "  // a reason", "/* block */", "const b = `*`;"].join("\n");
    expect(countLines([text])).toEqual({ comments: 5, nonBlank: 7 });
  });
});
