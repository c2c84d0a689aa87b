import { describe, expect, it } from "vitest";
import { z } from "zod";
import { EventSchemaError } from "../../src/core/errors.ts";
import { createDefaultEventRegistry, createEventRegistry } from "../../src/store/events/index.ts";

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
