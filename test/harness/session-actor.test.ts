/**
 * The session actor's one operation slot (issue 10 item 2): every public operation called
 * from inside a tool's `execute`, i.e. during a run, either queues as documented or is
 * refused with `SessionBusyError`, whichever path it takes (the harness, the exported
 * `moveTo` / `compact`), and the run's tree stays well formed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { compact } from "../../src/compaction/compact.ts";
import { moveTo } from "../../src/compaction/branch-summary.ts";
import type { MessageEntry } from "../../src/core/entries.ts";
import { SessionBusyError } from "../../src/core/errors.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type Attempt = { name: string; result: "ok" | "busy" | `other: ${string}` };

async function attempt(name: string, work: () => unknown, into: Attempt[]): Promise<void> {
  try {
    await work();
    into.push({ name, result: "ok" });
  } catch (error) {
    into.push({ name, result: SessionBusyError.isInstance(error) ? "busy" : `other: ${String(error)}` });
  }
}

describe("the operation slot during a run", () => {
  it("every public operation from inside a tool's execute queues or is refused with SessionBusyError", async () => {
    const attempts: Attempt[] = [];
    let firstUserEntry = "";
    const main = scriptedModel([{ toolCalls: [{ id: "c1", name: "probe", arguments: {} }] }, { text: "finished" }, { text: "summary" }], { provider: "openai.chat", modelId: "main-1" });
    const smart = scriptedModel([{ text: "smart answer" }], { provider: "openai.chat", modelId: "smart-1" });
    harness = await createHarness({
      eventLog: createMemoryEventLog(),
      cwd: "/w",
      models: { main, smart },
      tools: [
        {
          name: "probe",
          description: "calls every session operation",
          parameters: { type: "object", properties: {} },
          execute: async () => {
            const h = harness!;
            const session = h.session;
            firstUserEntry = session.view.getEntries().find((entry) => entry.type === "message" && (entry as MessageEntry).message.role === "user")!.id;
            await attempt("harness.moveTo", () => h.moveTo(firstUserEntry), attempts);
            await attempt("harness.moveTo summarize", () => h.moveTo(firstUserEntry, { summarize: true }), attempts);
            await attempt("moveTo", () => moveTo(session, firstUserEntry), attempts);
            await attempt("moveTo summarize", () => moveTo(session, firstUserEntry, { summarize: true, model: main as never }), attempts);
            await attempt("harness.compact", () => h.compact(), attempts);
            await attempt("compact", () => compact(session, { model: main as never }), attempts);
            await attempt("harness.fork (live leaf)", () => h.fork(), attempts);
            await attempt("harness.fork (leaf id)", () => h.fork(session.view.leafId!), attempts);
            await attempt("harness.prompt", () => h.prompt("again"), attempts);
            await attempt("harness.label", () => h.label(firstUserEntry, "start"), attempts);
            await attempt("harness.setModel", () => h.setModel("smart"), attempts);
            return { content: [{ type: "text" as const, text: "probed" }] };
          },
        },
      ],
    });
    const outcome = await harness.prompt("go");
    expect(outcome.status).toBe("done");
    expect(attempts).toEqual([
      { name: "harness.moveTo", result: "busy" },
      { name: "harness.moveTo summarize", result: "busy" },
      { name: "moveTo", result: "busy" },
      { name: "moveTo summarize", result: "busy" },
      { name: "harness.compact", result: "busy" },
      { name: "compact", result: "busy" },
      { name: "harness.fork (live leaf)", result: "busy" },
      { name: "harness.fork (leaf id)", result: "busy" },
      { name: "harness.prompt", result: "busy" },
      { name: "harness.label", result: "ok" },
      { name: "harness.setModel", result: "ok" },
    ]);
    await harness.waitForIdle();
    const view = harness.session.view;
    // The run's entries chain with nothing inserted between the call and its result.
    const path = view.getBranch();
    const kinds = path.map((entry) => (entry.type === "message" ? (entry as MessageEntry).message.role : entry.type));
    expect(kinds.slice(kinds.indexOf("user"))).toEqual(["user", "assistant", "toolResult", "assistant", "label", "model_change"]);
    expect(view.buildContext().diagnostics).toEqual([]);
    // The queued label and model change were written after the run.
    expect(view.getLabel(firstUserEntry)).toBe("start");
    expect(harness.getState().modelName).toBe("smart");
    // No summary was asked of any model; the model change took effect at the next call (pi).
    expect(main.doStreamCalls).toHaveLength(1);
    expect(smart.doStreamCalls).toHaveLength(1);
    // The slot is free again: the same operations now work.
    expect((await harness.moveTo(firstUserEntry)).newLeafId).toBe(view.getEntry(firstUserEntry)!.parentId);
  });
});
