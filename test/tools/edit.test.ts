import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEditToolDefinition } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { createExecutionEnv, type ExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createEditTool } from "../../src/adapters/tools/edit.ts";
import { planEdits } from "../../src/adapters/tools/edit-match.ts";
import { PathEscapeError } from "../../src/core/errors.ts";
import { outcome, piOutcome, runTool, tempDir } from "./tool-harness.ts";

let root: string;
let env: ExecutionEnv;

beforeEach(() => {
  root = tempDir();
  env = createExecutionEnv({ root });
});

/** Runs the same edit with Arbor's tool on `ours.txt` and pi's on `pi.txt`, both starting from `content`. */
async function both(content: string | Buffer, edits: { oldText: string; newText: string }[]) {
  writeFileSync(join(root, "ours.txt"), content);
  writeFileSync(join(root, "pi.txt"), content);
  const ours = await outcome(createEditTool(env), { path: "ours.txt", edits });
  const theirs = await piOutcome(createEditToolDefinition(root), { path: "pi.txt", edits });
  return {
    ours,
    theirs,
    oursFile: readFileSync(join(root, "ours.txt"), "utf8"),
    piFile: readFileSync(join(root, "pi.txt"), "utf8"),
  };
}

describe("edit: fixes over pi", () => {
  it("changes only the matched region even when fuzzy matching was needed (pi #5899)", async () => {
    const content = "const s = \u201chi\u201d;\nkeep   \nconst t = a \u2013 b;\n";
    const { ours, theirs, oursFile, piFile } = await both(content, [{ oldText: 'const s = "hi";', newText: 'const s = "bye";' }]);
    expect(ours.error).toBe(false);
    expect(oursFile).toBe('const s = "bye";\nkeep   \nconst t = a \u2013 b;\n');
    expect(theirs.error).toBe(false);
    expect(piFile).not.toBe(oursFile); // pi rewrote untouched lines (lost trailing spaces, en dash)
    expect(piFile).toContain("keep\n");
  });

  it("keeps mixed line endings; the replacement gets its region's ending", async () => {
    const { oursFile, piFile } = await both("a\r\nb\nc\r\n", [{ oldText: "b\nc", newText: "x\ny\nz" }]);
    expect(oursFile).toBe("a\r\nx\ny\nz\r\n");
    expect(piFile).toBe("a\r\nx\r\ny\r\nz\r\n"); // pi converts every line to the first ending
  });

  it("judges uniqueness on exact text first", async () => {
    const { ours, theirs, oursFile } = await both("foo  \nfoo\n", [{ oldText: "foo\n", newText: "bar\n" }]);
    expect(ours.error).toBe(false);
    expect(oursFile).toBe("foo  \nbar\n");
    expect(theirs.error).toBe(true);
    expect(theirs.text).toMatch(/Found 2 occurrences/);
  });

  it("preserves the BOM and CRLF endings", async () => {
    const { ours, oursFile } = await both("\uFEFFa\r\nb\r\nc\r\n", [{ oldText: "b\n", newText: "B\nB2\n" }]);
    expect(ours.error).toBe(false);
    expect(oursFile).toBe("\uFEFFa\r\nB\r\nB2\r\nc\r\n");
  });

  it("never rewrites a file that is not valid UTF-8", async () => {
    const bytes = Buffer.concat([Buffer.from("name: caf"), Buffer.from([0xe9]), Buffer.from("\nvalue: 1\n")]);
    writeFileSync(join(root, "latin1.txt"), bytes);
    const result = await outcome(createEditTool(env), { path: "latin1.txt", edits: [{ oldText: "value: 1", newText: "value: 2" }] });
    expect(result.error).toBe(true);
    expect(result.text).toMatch(/not valid UTF-8/);
    expect(readFileSync(join(root, "latin1.txt")).equals(bytes)).toBe(true);
  });
});

describe("edit: pi-compatible behaviour", () => {
  it("gives pi's result text and diff details for an exact edit", async () => {
    const content = Array.from({ length: 30 }, (_, index) => `line ${index + 1}`).join("\n") + "\n";
    const edits = [
      { oldText: "line 5\n", newText: "line five\n" },
      { oldText: "line 20\nline 21", newText: "twenty" },
    ];
    const { ours, theirs, oursFile, piFile } = await both(content, edits);
    expect(ours.text).toBe("Successfully replaced 2 block(s) in ours.txt.");
    expect(theirs.text).toBe("Successfully replaced 2 block(s) in pi.txt.");
    expect(oursFile).toBe(piFile);
    expect(ours.result?.details).toEqual(theirs.result?.details);
  });

  it.each([
    ["not found", "abc\n", [{ oldText: "zzz", newText: "y" }]],
    ["not found (multi)", "abc\ndef\n", [{ oldText: "abc", newText: "y" }, { oldText: "zzz", newText: "y" }]],
    ["duplicate", "abc\nabc\n", [{ oldText: "abc", newText: "y" }]],
    ["duplicate (multi)", "abc\nabc\nx\n", [{ oldText: "x", newText: "y" }, { oldText: "abc", newText: "y" }]],
    ["empty oldText", "abc\n", [{ oldText: "", newText: "y" }]],
    ["overlap", "abcdef\n", [{ oldText: "abcd", newText: "1" }, { oldText: "cdef", newText: "2" }]],
    ["no change", "abc\n", [{ oldText: "abc", newText: "abc" }]],
  ])("fails like pi: %s", async (_name, content, edits) => {
    const { ours, theirs, oursFile } = await both(content, edits);
    expect(ours.error).toBe(true);
    expect(theirs.error).toBe(true);
    expect(ours.text).toBe(theirs.text.replaceAll("pi.txt", "ours.txt"));
    expect(oursFile).toBe(content);
  });

  it("fails like pi on a missing file", async () => {
    const ours = await outcome(createEditTool(env), { path: "missing.txt", edits: [{ oldText: "a", newText: "b" }] });
    const theirs = await piOutcome(createEditToolDefinition(root), { path: "missing.txt", edits: [{ oldText: "a", newText: "b" }] });
    expect(ours.text).toBe("Could not edit file: missing.txt. Error code: ENOENT.");
    expect(ours.text).toBe(theirs.text);
  });

  it("accepts the legacy single form and edits given as a JSON string", async () => {
    writeFileSync(join(root, "a.txt"), "one two three\n");
    const tool = createEditTool(env);
    await runTool(tool, { path: "a.txt", oldText: "one", newText: "1" });
    await runTool(tool, { path: "a.txt", edits: JSON.stringify([{ oldText: "two", newText: "2" }]) });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("1 2 three\n");
    const empty = await outcome(tool, { path: "a.txt", edits: [] });
    expect(empty.text).toBe("Edit tool input is invalid. edits must contain at least one replacement.");
    const extra = await outcome(tool, { path: "a.txt", edits: [{ oldText: "1", newText: "x" }], force: true });
    expect(extra.error).toBe(true);
    expect(extra.text).toMatch(/Invalid arguments for tool "edit"/);
  });

  it("mixes an exact and a fuzzy edit without touching the rest", () => {
    const raw = "a = \u2018x\u2019;   \nb = 1;\t\nc = 2;\n";
    const plan = planEdits(raw, [{ oldText: "a = 'x';", newText: "a = 'y';" }, { oldText: "c = 2;", newText: "c = 3;" }], "f");
    expect(plan.content).toBe("a = 'y';   \nb = 1;\t\nc = 3;\n");
    expect(plan.matches.map((match) => match.fuzzy)).toEqual([true, false]);
  });
});

describe("edit: whitespace runs (issue 12 item 5)", () => {
  it("matches an oldText that differs only in runs of spaces or tabs, splicing into the original bytes", () => {
    const raw = "function f() {\n\tconst  x =   1;\t// one\n\treturn x;\n}\nkeep\t\t  tabs\n";
    const plan = planEdits(raw, [{ oldText: "  const x = 1; // one\n  return x;", newText: "  const x = 2;\n  return x;" }], "f.ts");
    // Only the matched region changed (its indentation run included); the tabs elsewhere stay.
    expect(plan.content).toBe("function f() {\n  const x = 2;\n  return x;\n}\nkeep\t\t  tabs\n");
    expect(plan.matches[0].fuzzy).toBe(true);
  });

  it("keeps the uniqueness check at the whitespace level", () => {
    expect(() => planEdits("a  = 1;\na\t= 1;\n", [{ oldText: "a = 1;", newText: "b" }], "f.ts")).toThrow(/Found 2 occurrences/);
  });

  it("fails like pi when the text is not there, quoting the nearest candidate", () => {
    const raw = "one\nconst total = price * count;\nthree\n";
    let message = "";
    try {
      planEdits(raw, [{ oldText: "const total = price * amount;", newText: "x" }], "f.ts");
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Could not find the exact text in f\.ts\. The old text must match exactly/);
    expect(message).toContain("The most similar text in the file is:\nconst total = price * count;");
    // Nothing similar: no candidate is quoted.
    expect(() => planEdits(raw, [{ oldText: "zzzzzzzzzzzzzzzzzz", newText: "x" }], "f.ts")).toThrow(/whitespace and newlines\.$/);
  });

  it("pi 0.73.1 fails the same whitespace-only difference (differential)", async () => {
    const content = "if (a) {\n\treturn  1;\n}\n";
    const { ours, theirs, oursFile, piFile } = await both(content, [{ oldText: "    return 1;", newText: "    return 2;" }]);
    expect(theirs.error).toBe(true);
    expect(theirs.text).toMatch(/Could not find the exact text/);
    expect(piFile).toBe(content);
    expect(ours.error).toBe(false);
    expect(oursFile).toBe("if (a) {\n    return 2;\n}\n");
  });

  it("property: a whitespace-mangled copy of a unique line edits only that line's region", () => {
    const blank = fc.constantFrom(" ", "\t", "  ", " \t");
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom("x", "y", "=", "1"), { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 6 }), fc.array(blank, { minLength: 8, maxLength: 8 }), fc.nat(), (words, blanks, pick) => {
        const lines = [`L0${blanks[0]}${words.map((word) => word.join("")).join(blanks[1])}`, "other\tline", `L1${blanks[2]}end`];
        const raw = lines.join("\n") + "\n";
        const mangled = lines[pick % 2 === 0 ? 0 : 2].replace(/[ \t]+/g, () => blanks[3 + (pick % 5)]);
        const plan = planEdits(raw, [{ oldText: mangled, newText: "NEW" }], "f");
        const target = pick % 2 === 0 ? 0 : 2;
        const expected = lines.map((line, index) => (index === target ? "NEW" : line)).join("\n") + "\n";
        expect(plan.content).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe("edit: splice invariant (property)", () => {
  const fuzzyOf = (line: string) =>
    line
      .normalize("NFKC")
      .replace(/[\u2018\u2019]/g, "'")
      .replace(/[\u201C\u201D]/g, '"')
      .replace(/[\u2013\u2014]/g, "-")
      .replace(/\u00A0/g, " ")
      .trimEnd();
  const piece = fc.constantFrom("a", "b", " ", "\t", "\u201c", "\u2019", "\u2013", "\u00A0", "=");
  it("replaces exactly the matched line's text and leaves every other byte as it was", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(piece, { maxLength: 12 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.constantFrom("\n", "\r\n"), { minLength: 8, maxLength: 8 }),
        fc.boolean(),
        fc.nat(),
        (lineParts, endings, bom, pick) => {
          const lines = lineParts.map((parts, index) => `M${index}:${parts.join("")}`);
          const body = lines.map((line, index) => line + endings[index]).join("");
          const raw = (bom ? "\uFEFF" : "") + body;
          const target = pick % lines.length;
          const plan = planEdits(raw, [{ oldText: fuzzyOf(lines[target]), newText: "NEW" }], "f");
          const start = (bom ? 1 : 0) + lines.slice(0, target).reduce((sum, line, index) => sum + line.length + endings[index].length, 0);
          const kept = lines[target].replace(/\s+$/u, "").length;
          expect(plan.content).toBe(raw.slice(0, start) + "NEW" + raw.slice(start + kept));
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("edit: safety", () => {
  it("serializes concurrent edits of one file, keyed by realpath", async () => {
    const markers = Array.from({ length: 16 }, (_, index) => `marker-${index}`);
    writeFileSync(join(root, "shared.txt"), markers.join("\n") + "\n");
    symlinkSync(join(root, "shared.txt"), join(root, "alias.txt"));
    const tool = createEditTool(env);
    const results = await Promise.all(
      markers.map((marker, index) =>
        outcome(tool, { path: index % 2 ? "alias.txt" : "./shared.txt", edits: [{ oldText: `${marker}\n`, newText: `done-${index}\n` }] }),
      ),
    );
    expect(results.filter((result) => result.error)).toEqual([]);
    expect(readFileSync(join(root, "shared.txt"), "utf8")).toBe(markers.map((_, index) => `done-${index}`).join("\n") + "\n");
  });

  it("keeps permission bits and honours an aborted signal", async () => {
    writeFileSync(join(root, "run.sh"), "echo hi\n");
    chmodSync(join(root, "run.sh"), 0o755);
    await runTool(createEditTool(env), { path: "run.sh", edits: [{ oldText: "hi", newText: "ho" }] });
    expect(statSync(join(root, "run.sh")).mode & 0o777).toBe(0o755);
    const controller = new AbortController();
    controller.abort();
    const aborted = await outcome(createEditTool(env), { path: "run.sh", edits: [{ oldText: "ho", newText: "x" }] }, { signal: controller.signal });
    expect(aborted.text).toBe("Operation aborted");
    expect(readFileSync(join(root, "run.sh"), "utf8")).toBe("echo ho\n");
  });

  it("refuses paths outside the root", async () => {
    const result = await outcome(createEditTool(env), { path: "../x.txt", edits: [{ oldText: "a", newText: "b" }] });
    expect(result.error).toBe(true);
    expect(PathEscapeError.isInstance((result as { thrown?: unknown }).thrown)).toBe(true);
  });
});
