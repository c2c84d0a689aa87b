/**
 * Type tests of "one name per concept": a new tool-execution mode, event type, run status or
 * tool outcome fails to compile where it must be handled (tsc over test/ fails if a
 * `@ts-expect-error` stops erroring), and every switch over the catalogue's event types in src/
 * ends in that check.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { assertNever, ignoreUnknown } from "../../src/core/exhaustive.ts";
import { TOOL_EXECUTION_MODES, type ToolExecutionMode } from "../../src/core/tools.ts";
import { RUN_STATUSES, TOOL_OUTCOMES, type RunStatus, type ToolOutcome } from "../../src/core/vocabulary.ts";
import { BATCH_MODES, type BatchModePolicy } from "../../src/machines/batch-modes.ts";
import type { RunOutcome } from "../../src/machines/agent-types.ts";
import { EVENT_CATALOGUE, type ArborEvent, type ArborEventData } from "../../src/store/events/catalogue.ts";
import { skipsEvents, type EventTypesIn } from "../../src/store/events/event-families.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";

describe("a new union member fails to compile where it must be handled", () => {
  it("a tool-execution mode needs a row in the batch's mode table; the options schema follows the list", () => {
    const policies: Readonly<Record<ToolExecutionMode, BatchModePolicy>> = BATCH_MODES;
    // @ts-expect-error "batched" has no row: adding it to ToolExecutionMode fails at BATCH_MODES.
    const extended: Readonly<Record<ToolExecutionMode | "batched", BatchModePolicy>> = BATCH_MODES;
    expect(Object.keys(policies).sort()).toEqual([...TOOL_EXECUTION_MODES].sort());
    expect(extended).toBe(policies);
    expectTypeOf(z.enum(TOOL_EXECUTION_MODES).parse("parallel")).toEqualTypeOf<ToolExecutionMode>();
  });

  it("an event type needs a case in every switch over event types", () => {
    type NewEvent = StoredEvent<"note.pinned", { note: string }>;
    const withNew = (event: ArborEvent | NewEvent): string | undefined => {
      switch (event.type) {
        case "session.created": case "entry.appended": case "leaf.moved": case "session.deleted":
        case "run.started": case "run.ended": case "run.resumed": case "turn.started": case "turn.ended":
        case "message.started": case "message.delta": case "message.ended":
        case "tool.started": case "tool.updated": case "tool.ended": case "queue.changed":
        case "retry.scheduled": case "retry.started": case "retry.ended": case "approval.requested": case "approval.ended":
        case "hook.applied": case "hook.failed": case "agent.started": case "agent.ended": case "summary.started": case "summary.ended":
        case "workflow.started": case "workflow.ended": case "step.started": case "step.updated": case "step.ended":
        case "workspace.checkpointed": case "workspace.restored": case "memory.written": case "memory.deleted":
        case "task.queued": case "task.claimed": case "task.released": case "task.ended":
        case "control.requested": case "control.ended": case "elicitation.requested": case "elicitation.answered":
        case "budget.reserved": case "budget.settled": case "budget.exceeded": case "budget.reset":
          return event.type;
        default:
          // @ts-expect-error "note.pinned" has no case: the switch no longer type-checks.
          return ignoreUnknown(event);
      }
    };
    expect(withNew({ type: "note.pinned" } as NewEvent)).toBeUndefined();
    expect(Object.keys(EVENT_CATALOGUE).map((type) => withNew({ type } as ArborEvent))).toEqual(Object.keys(EVENT_CATALOGUE));
  });

  it("a consumer that leaves out whole families still fails to compile on a new type outside them", () => {
    type NewEvent = StoredEvent<"note.pinned", { note: string }>;
    const families = ["session", "entry", "leaf", "run", "turn", "message", "tool", "queue", "retry", "approval", "hook", "agent", "summary", "workflow", "step", "workspace", "memory", "task", "control", "elicitation"] as const;
    const quiet = skipsEvents(families, ["budget.reserved"]);
    const withNew = (event: ArborEvent | NewEvent): string | undefined => {
      if (quiet(event)) return "skipped";
      switch (event.type) {
        case "budget.settled": case "budget.exceeded": case "budget.reset":
          return event.type;
        default:
          // @ts-expect-error "note.pinned" is neither handled nor in a family left out.
          return ignoreUnknown(event);
      }
    };
    const narrowed = (event: ArborEvent) => {
      if (quiet(event)) expectTypeOf(event.type).toEqualTypeOf<EventTypesIn<(typeof families)[number], "budget.reserved">>();
      // @ts-expect-error "message.delta" is left out above, so it cannot reach the switch.
      else if (event.type === "message.delta") return event;
      return undefined;
    };
    expect(narrowed({ type: "message.delta" } as ArborEvent)).toBeUndefined();
    expect(withNew({ type: "note.pinned" } as NewEvent)).toBeUndefined();
    expect(withNew({ type: "run.ended" } as ArborEvent)).toBe("skipped");
    expect(withNew({ type: "budget.reserved" } as ArborEvent)).toBe("skipped");
    expect(withNew({ type: "budget.settled" } as ArborEvent)).toBe("budget.settled");
    // A type added later to a family left out is left out too, at run time as in the types.
    expect(quiet({ type: "retry.cancelled" })).toBe(true);
    expect(quiet({ type: "note.pinned" })).toBe(false);
  });

  it("run statuses and tool outcomes are one list each, and the log's schemas follow them", () => {
    expectTypeOf<ArborEventData<"run.ended">["status"]>().toEqualTypeOf<RunStatus>();
    expectTypeOf<RunOutcome["status"]>().toEqualTypeOf<RunStatus>();
    expectTypeOf<ArborEventData<"tool.ended">["outcome"]>().toEqualTypeOf<ToolOutcome>();
    expect(EVENT_CATALOGUE["tool.ended"].schema.shape.outcome.options).toEqual([...TOOL_OUTCOMES]);
    expect(RUN_STATUSES).toContain("budget_exceeded");
    const status = (value: RunStatus | "paused"): string => {
      switch (value) {
        case "done": case "failed": case "aborted": case "interrupted": case "suspended": case "budget_exceeded":
          return value;
        default:
          // @ts-expect-error "paused" has no case.
          return assertNever(value, "run status");
      }
    };
    expect(() => status("paused")).toThrow(/Unhandled run status: "paused"/);
  });
});

/** The `.ts` files under `dir`. */
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []));

/** Each `switch (...) {` block of `text` that has a case naming a catalogue type, with its line. */
function eventSwitches(text: string): { line: number; body: string }[] {
  const found: { line: number; body: string }[] = [];
  const catalogue = new Set(Object.keys(EVENT_CATALOGUE));
  for (const match of text.matchAll(/^([ \t]*)switch \([^)]*\) \{\n/gm)) {
    const close = text.indexOf(`\n${match[1]}}`, match.index);
    const body = text.slice(match.index, close);
    const cases = [...body.matchAll(/case "([^"]+)":/g)].map((hit) => hit[1]);
    if (cases.some((type) => catalogue.has(type))) found.push({ line: text.slice(0, match.index).split("\n").length, body });
  }
  return found;
}

describe("switches over event types in src/", () => {
  it("every one ends in a compile-time exhaustiveness check", () => {
    const open = sources("src").flatMap((file) =>
      eventSwitches(readFileSync(file, "utf8"))
        .filter(({ body }) => !/default:\s*(return )?(ignoreUnknown|assertNever)\(/.test(body))
        .map(({ line }) => `${file}:${line}`),
    );
    expect(open).toEqual([]);
  });

  it("the scan finds a switch without the check", () => {
    const text = 'function f(event) {\n  switch (event.type) {\n    case "run.ended":\n      return 1;\n    default:\n      return 0;\n  }\n}\n';
    expect(eventSwitches(text)).toHaveLength(1);
    expect(/default:\s*(return )?(ignoreUnknown|assertNever)\(/.test(eventSwitches(text)[0].body)).toBe(false);
  });
});
