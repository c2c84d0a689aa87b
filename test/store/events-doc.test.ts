/**
 * docs/events.md is checked against the event catalogue: every catalogue type has a row with its
 * current schema version in a catalogue table, every row names a catalogue type at that version, and
 * the row of the current version names every field of the type's schema (each `data` field in backquotes).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EVENT_CATALOGUE } from "../../src/store/events/catalogue.ts";

/** `type → version` of every table row whose first cell is a backquoted dotted type and second a number. */
function documentedTypes(markdown: string): Map<string, number[]> {
  const rows = new Map<string, number[]>();
  for (const line of markdown.split("\n")) {
    const match = /^\|\s*`([a-z_]+(?:\.[a-z_]+)+)`\s*\|\s*(\d+)\s*\|/.exec(line);
    if (!match) continue;
    rows.set(match[1], [...(rows.get(match[1]) ?? []), Number(match[2])]);
  }
  return rows;
}

/** The data cell (the last) of the row of `type` at `version`, or undefined. */
function dataCell(markdown: string, type: string, version: number): string | undefined {
  for (const line of markdown.split("\n")) {
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    if (cells[1] === `\`${type}\`` && cells[2] === String(version)) return cells.at(-2);
  }
  return undefined;
}

/** The top-level field names of a zod object schema, or of every option of a union of them. */
function fieldsOf(schema: unknown): string[] {
  const def = (schema as { _zod?: { def?: { type: string; shape?: object; options?: unknown[]; innerType?: unknown; in?: unknown } } })._zod?.def;
  if (!def) return [];
  if (def.type === "object") return Object.keys(def.shape ?? {});
  if (def.type === "union") return [...new Set((def.options ?? []).flatMap(fieldsOf))];
  if (def.type === "pipe") return fieldsOf(def.in);
  if (def.innerType !== undefined) return fieldsOf(def.innerType);
  return [];
}

describe("docs/events.md and the catalogue", () => {
  const documented = documentedTypes(readFileSync("docs/events.md", "utf8"));

  it("every catalogue type is documented at its current version", () => {
    const missing = Object.entries(EVENT_CATALOGUE)
      .filter(([type, { version }]) => !(documented.get(type) ?? []).includes(version))
      .map(([type, { version }]) => `${type} v${version}`);
    expect(missing).toEqual([]);
  });

  it("every documented type is in the catalogue at a version it has", () => {
    const catalogue: Record<string, { version: number }> = EVENT_CATALOGUE;
    const stale = [...documented].filter(([type, versions]) => !catalogue[type] || versions.some((version) => version > catalogue[type].version)).map(([type]) => type);
    expect(stale).toEqual([]);
  });

  it("the row of each type's current version names every field of its schema", () => {
    const markdown = readFileSync("docs/events.md", "utf8");
    const undocumented = Object.entries(EVENT_CATALOGUE).flatMap(([type, { version, schema }]) => {
      const fields = fieldsOf(schema);
      if (fields.length === 0) return [`${type}: no fields read from its schema`];
      const cell = dataCell(markdown, type, version) ?? "";
      return fields.filter((field) => !cell.includes(`\`${field}\``) && !cell.includes(`\`${field}?\``)).map((field) => `${type}.${field}`);
    });
    expect(undocumented).toEqual([]);
  });

  it("the field reader finds what a row leaves out", () => {
    const markdown = "| `tool.ended` | 2 | the result | `toolCallId`, `outcome` (`succeeded` \\| `failed`) |";
    expect(dataCell(markdown, "tool.ended", 2)).toBe("`toolCallId`, `outcome` (`succeeded` \\| `failed`)");
    const fields = fieldsOf(EVENT_CATALOGUE["tool.ended"].schema);
    expect(fields).toContain("durationMs");
    expect(fields.filter((field) => !dataCell(markdown, "tool.ended", 2)!.includes(`\`${field}\``))).toContain("durationMs");
  });

  it("the row reader finds types and versions", () => {
    const rows = documentedTypes("| `run.resumed` | 2 | x | y |\n| not a row |\n| `tool.ended` | 1 | a | b |");
    expect([...rows]).toEqual([["run.resumed", [2]], ["tool.ended", [1]]]);
  });
});
