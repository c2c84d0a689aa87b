/**
 * docs/events.md is checked against the event catalogue: every catalogue type has a row with its
 * current schema version in a catalogue table, and every row names a catalogue type at that version.
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

  it("the row reader finds types and versions", () => {
    const rows = documentedTypes("| `run.resumed` | 2 | x | y |\n| not a row |\n| `tool.ended` | 1 | a | b |");
    expect([...rows]).toEqual([["run.resumed", [2]], ["tool.ended", [1]]]);
  });
});
