/**
 * The typed event catalogue: `ArborEvent` narrows by `type`, `ofType` and `on(type, …)`
 * give typed `data` (type assertions, checked by `npm run typecheck`), and at run time
 * they deliver exactly the events of the asked types.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { messageOfEntry } from "../../src/core/entries.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { ToolOutcome } from "../../src/core/vocabulary.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { EVENT_CATALOGUE, isArborEvent, ofType, type ArborEvent, type ArborEventOf } from "../../src/store/events/catalogue.ts";
import { createDefaultEventRegistry } from "../../src/store/events/index.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function harnessWithOneToolCall(): Promise<AgentHarness> {
  return createHarness({
    eventLog: createMemoryEventLog(),
    models: { main: scriptedModel([{ toolCalls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }] }, { text: "done" }], { provider: "openai.chat", modelId: "m" }) },
    tools: [defineTool({ name: "echo", description: "Echo", parameters: z.object({ text: z.string() }), execute: async ({ text }) => ({ content: [{ type: "text", text }] }) })],
  });
}

describe("the event catalogue", () => {
  it("types: events$.pipe(ofType('tool.ended')) yields typed data; switch on type narrows the union; on() types its handler", async () => {
    harness = await harnessWithOneToolCall();
    const toolEnded = harness.events$.pipe(ofType("tool.ended"));
    expectTypeOf(toolEnded).toEqualTypeOf<import("rxjs").Observable<ArborEventOf<"tool.ended">>>();
    type ToolEnded = ArborEventOf<"tool.ended">;
    expectTypeOf<ToolEnded["data"]["outcome"]>().toEqualTypeOf<ToolOutcome>();
    expectTypeOf<ToolEnded["data"]["durationMs"]>().toEqualTypeOf<number>();
    expectTypeOf<ToolEnded>().toHaveProperty("globalPosition").toEqualTypeOf<number>();
    expectTypeOf<ArborEventOf<"run.ended">["data"]["status"]>().toEqualTypeOf<"done" | "failed" | "aborted" | "interrupted" | "suspended" | "budget_exceeded">();
    expectTypeOf(harness.events$).toEqualTypeOf<import("rxjs").Observable<ArborEvent>>();
    // @ts-expect-error: not a catalogue type
    ofType("tool.finished");
    harness.on("run.ended", (event) => {
      expectTypeOf(event.data.status).toEqualTypeOf<"done" | "failed" | "aborted" | "interrupted" | "suspended" | "budget_exceeded">();
      if (event.data.status === "failed") expectTypeOf(event.data.error).toEqualTypeOf<string>();
    })();
    const describeEvent = (event: ArborEvent): string => {
      switch (event.type) {
        case "tool.ended":
          return event.data.outcome;
        case "run.ended":
          return event.data.status;
        case "entry.appended":
          return event.data.entry.id;
        default:
          return event.type;
      }
    };
    expect(describeEvent({ type: "run.ended", data: { runId: "r", status: "done", turns: 1 } } as ArborEvent)).toBe("done");
  });

  it("ofType and on(type) deliver exactly the events of the asked types, in log order", async () => {
    harness = await harnessWithOneToolCall();
    const seen: string[] = [];
    const stop = harness.on("tool.ended", (event) => seen.push(`${event.data.toolName}:${event.data.outcome}`));
    const hookCalls: string[] = [];
    harness.on("toolResult", ({ toolName }) => void hookCalls.push(toolName));
    const outcome = await harness.prompt("echo hi");
    expect(outcome.status).toBe("done");
    await harness.waitForIdle();
    const version = harness.session.view.version;
    const all = await firstValueFrom(harness.events$.pipe(takeWhile((event) => event.version < version, true), toArray()));
    const ends = await firstValueFrom(harness.events$.pipe(takeWhile((event) => event.version < version, true), ofType("run.ended", "tool.ended"), toArray()));
    expect(ends.map((event) => event.type)).toEqual(["tool.ended", "run.ended"]);
    expect(ends.map((event) => event.version)).toEqual(all.filter((event) => event.type === "tool.ended" || event.type === "run.ended").map((event) => event.version));
    expect(ends[1].data).toMatchObject({ status: "done", turns: 2 });
    expect(seen).toEqual(["echo:succeeded"]);
    expect(hookCalls).toEqual(["echo"]);
    stop();
  });

  it("isArborEvent separates catalogue events from user-registered ones; every catalogue type is in the default registry at its version", async () => {
    const registry = createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string() }));
    for (const [type, { version }] of Object.entries(EVENT_CATALOGUE)) expect(registry.latestVersion(type)).toBe(version);
    const log = createMemoryEventLog({ registry });
    await log.append("s", [{ type: "note.added", data: { text: "x" } }, { type: "leaf.moved", data: { leafId: null, fromLeafId: null } }]);
    const events: StoredEvent[] = await log.readStream("s");
    expect(events.map((event) => isArborEvent(event))).toEqual([false, true]);
  });

  it("src/ reads stored event data through the catalogue: no `data as` cast anywhere in src/ (issue 10 acceptance)", () => {
    const root = join(import.meta.dirname, "../../src");
    const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(50);
    const casts = files.flatMap((file) =>
      readFileSync(join(root, file), "utf8")
        .split("\n")
        .flatMap((line, index) => (/\bdata as\b/.test(line) ? [`src/${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(casts).toEqual([]);
  });

  it("the approval listing and the testing kit read session entries' messages by narrowing (messageOfEntry), with no entry cast", () => {
    const root = join(import.meta.dirname, "../../src");
    const files = ["machines/approvals.ts", "testing/invariants.ts", "testing/replay-record.ts", "testing/slot-runner.ts"];
    const casts = files.flatMap((file) =>
      readFileSync(join(root, file), "utf8")
        .split("\n")
        .flatMap((line, index) => (/\bentry as\b|message as never/.test(line) ? [`src/${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(casts).toEqual([]);
    const message = { role: "user" as const, content: "hi", timestamp: 1 };
    expect(messageOfEntry({ type: "message", id: "a", parentId: null, timestamp: "2026-01-01T00:00:00Z", message })).toBe(message);
    expect(messageOfEntry({ type: "label", id: "b", parentId: null, timestamp: "2026-01-01T00:00:00Z", targetId: "a" })).toBeUndefined();
    expect(messageOfEntry(undefined)).toBeUndefined();
  });
});
