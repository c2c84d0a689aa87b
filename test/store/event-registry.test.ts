import { describe, expect, it } from "vitest";
import { z } from "zod";
import { EventSchemaError } from "../../src/core/errors.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDefaultEventRegistry, createEventRegistry } from "../../src/store/events/index.ts";
import { preservesJson } from "../../src/store/events/json-preserving.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";

describe("event registry", () => {
  it("rejects names that are not noun.verb", () => {
    expect(() => createEventRegistry().register("RunStarted", 1, z.object({}))).toThrow(EventSchemaError);
  });

  it("names the failing field when data does not match", () => {
    const registry = createDefaultEventRegistry();
    expect(() => registry.validate("leaf.moved", 1, { leafId: 3, fromLeafId: null })).toThrow(/leafId/);
  });

  it("rejects unknown types and unknown versions", () => {
    const registry = createDefaultEventRegistry();
    expect(() => registry.validate("nope.happened", 1, {})).toThrow(/Unknown event type/);
    expect(() => registry.validate("leaf.moved", 9, { leafId: null, fromLeafId: null })).toThrow(/no schema version 9/);
  });

  it("validates a pi-shaped entry and keeps unknown entry kinds", () => {
    const registry = createDefaultEventRegistry();
    const entry = { type: "message", id: "a", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: "hi", timestamp: 1 } };
    expect(registry.validate("entry.appended", 1, { entry })).toEqual({ entry });
    const odd = { type: "future_kind", id: "b", parentId: "a", timestamp: "t", payload: [1] };
    expect(registry.validate("entry.appended", 1, { entry: odd })).toEqual({ entry: odd });
    expect(() => registry.validate("entry.appended", 1, { entry: { ...entry, message: { role: "user" } } })).toThrow(EventSchemaError);
  });
});

describe("JSON-preserving schemas (one JSON check per event, issue 17)", () => {
  it("knows every built-in schema outputs JSON for JSON input", () => {
    const registry = createDefaultEventRegistry();
    const types = registry.types();
    expect(types.length).toBeGreaterThan(10);
    for (const type of types) expect({ type, preserving: registry.preservesJson?.(type, registry.latestVersion(type)!) }).toEqual({ type, preserving: true });
    expect(registry.preservesJson?.("nope.happened", 1)).toBe(false);
  });

  it("tells copying schemas from ones that may make values", () => {
    type Node = { name: string; children: Node[] };
    const tree: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(tree) }));
    const copying = [
      z.object({ a: z.string().min(1).refine((s) => s !== "x"), b: z.number().int().optional(), c: z.enum(["p", "q"]).nullable() }),
      z.object({ kind: z.literal("k") }).passthrough(),
      z.strictObject({ a: z.boolean() }),
      z.union([z.tuple([z.string()], z.number()), z.record(z.string(), z.unknown()), z.null()]),
      z.intersection(z.object({ a: z.any() }), z.object({ b: z.string() })).readonly(),
      tree,
    ];
    for (const schema of copying) expect(preservesJson(schema)).toBe(true);
    const making = [
      z.string().transform((s) => new Date(s)),
      z.object({ at: z.date() }),
      z.object({ at: z.string().default("now") }),
      z.string().pipe(z.string()),
      z.object({ a: z.string().trim() }),
      z.map(z.string(), z.string()),
      z.bigint(),
      z.custom<unknown>(() => true),
      z.string().catch("x"),
    ];
    for (const schema of making) expect(preservesJson(schema)).toBe(false);
  });

  it("still rejects what a transforming schema makes of JSON data (the second check runs for it)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-registry-"));
    const registry = createEventRegistry()
      .register("when.set", 1, z.object({ at: z.string().transform((s) => new Date(s)) }))
      .register("note.added", 1, z.object({ text: z.string() }));
    const log = createSqliteEventLog({ path: join(dir, "events.db"), registry });
    try {
      await expect(log.append("s", [{ type: "when.set", data: { at: "2026-01-01T00:00:00Z" } }])).rejects.toThrow(/data\.at is a Date \(not a plain object\)/);
      await expect(log.append("s", [{ type: "note.added", data: { text: "hi", extra: () => 1 } as never }])).rejects.toThrow(/data\.extra is a function/);
      await log.append("s", [{ type: "note.added", data: { text: "ok" } }]);
      expect((await log.readStream("s")).map((event) => event.data)).toEqual([{ text: "ok" }]);
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
