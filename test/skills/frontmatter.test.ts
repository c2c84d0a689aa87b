/**
 * parseFrontmatter edge cases (shared by skills and prompt templates).
 */
import { describe, expect, it } from "vitest";
import { normalizeText, parseFrontmatter } from "../../src/adapters/frontmatter.ts";

describe("parseFrontmatter", () => {
  it("parses YAML with trailing blanks on the delimiters and keeps the body untrimmed", () => {
    expect(parseFrontmatter("---  \nname: x\n---\t\n\nbody\n")).toEqual({
      kind: "yaml",
      attributes: { name: "x" },
      body: "\nbody\n",
      closed: true,
      source: "name: x",
    });
  });

  it("only a line that is exactly --- closes the block (pi accepts ----- or ---text)", () => {
    const result = parseFrontmatter("---\nname: x\n-----\nmore: 1\n---\nbody");
    expect(result.error?.kind).toBe("invalid");
    const spaced = parseFrontmatter("---\ndescription: a --- b\n---\nbody");
    expect(spaced.attributes).toEqual({ description: "a --- b" });
  });

  it("treats an empty block as no fields, and a list or scalar as not a mapping", () => {
    expect(parseFrontmatter("---\n---\nbody")).toMatchObject({ attributes: {}, body: "body", closed: true });
    expect(parseFrontmatter("---\n- a\n- b\n---\nbody").error).toMatchObject({ kind: "not-a-mapping", message: expect.stringContaining("a list") });
    expect(parseFrontmatter("---\njust text\n---\nbody").error?.kind).toBe("not-a-mapping");
  });

  it("reports an unclosed block and keeps the whole text as body", () => {
    const result = parseFrontmatter("---\nname: x\nbody without end");
    expect(result).toMatchObject({ kind: "yaml", closed: false, body: "---\nname: x\nbody without end", error: { kind: "unclosed", line: 1 } });
  });

  it("reads the seed's JSON variant, and leaves text that merely starts with { alone", () => {
    expect(parseFrontmatter('{"a": [1, 2]}\n---\nbody')).toMatchObject({ kind: "json", attributes: { a: [1, 2] }, body: "body" });
    expect(parseFrontmatter("{not frontmatter}\nno delimiter")).toMatchObject({ kind: "none", attributes: {}, body: "{not frontmatter}\nno delimiter" });
    expect(parseFrontmatter("[1]\n---\nbody").kind).toBe("none");
    expect(parseFrontmatter('["a"]\n---\nx').kind).toBe("none");
    expect(parseFrontmatter("{ 1 }\n---\nbody").error).toMatchObject({ kind: "invalid", message: expect.stringContaining("JSON") });
  });

  it("never throws on hostile YAML (alias bombs, duplicate keys, tags)", () => {
    const bomb = ["---", "a: &a [x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [*${i === 0 ? "a" : `b${i - 1}`}, *${i === 0 ? "a" : `b${i - 1}`}, *${i === 0 ? "a" : `b${i - 1}`}]`), "---", "body"].join("\n");
    expect(() => parseFrontmatter(bomb)).not.toThrow();
    expect(parseFrontmatter(bomb).error?.kind).toBe("invalid");
    expect(parseFrontmatter("---\na: 1\na: 2\n---\n").error?.message).toMatch(/unique/);
    expect(() => parseFrontmatter("---\nx: !!js/function 'return 1'\n---\n")).not.toThrow();
  });

  it("normalizes BOM and every line-ending style", () => {
    expect(normalizeText("\uFEFFa\r\nb\rc\n")).toBe("a\nb\nc\n");
    expect(parseFrontmatter("\uFEFF---\r\nname: x\r\n---\r\nbody").attributes).toEqual({ name: "x" });
  });
});
