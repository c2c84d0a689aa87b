/**
 * The inspector's run timeline (`web/inspector/timeline.ts`) folded from the real log of a run that
 * waited for approval and was resumed after the decision: no tool call is left `running`; the
 * gated call shows its decision and the resume run shows the call's execution.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/index.ts";
import { TimelineModel } from "../../web/inspector/timeline.ts";

describe("the inspector timeline after an approval", () => {
  it("shows the gated call's decision and its execution in the resume run, nothing running", async () => {
    const server = await startOpenAIServer();
    server.script(toolCallResponse([{ id: "call_1", name: "read", arguments: { path: "a.txt" } }]), textResponse("read it"));
    const log = createMemoryEventLog();
    const harness = await createHarness({
      eventLog: log,
      models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) } },
      streamOptions: { maxRetries: 0 },
      requireApproval: ["read"],
      tools: [defineTool({ name: "read", description: "Read a file", parameters: z.object({ path: z.string() }), execute: async ({ path }) => ({ content: [{ type: "text", text: `contents of ${path}` }] }) })],
    });
    try {
      expect((await harness.prompt("read a.txt")).status).toBe("suspended");
      await harness.approve("call_1");
      expect((await harness.continue()).status).toBe("done");
      const timeline = new TimelineModel();
      for (const event of await log.readStream(`session-${harness.id}`)) timeline.apply(event as never);
      const [resumed, requesting] = timeline.runs;
      expect([requesting.status, resumed.status]).toEqual(["suspended", "done"]);
      const rows = timeline.runs.flatMap((run) => run.items.flatMap((item) => ("tool" in item ? [[run.kind, item.tool.toolCallId, item.tool.outcome]] : [])));
      expect(rows.filter(([, , outcome]) => outcome === "running")).toEqual([]);
      expect(rows).toContainEqual(["resume", "call_1", "succeeded"]);
      expect(requesting.items.filter((item) => "note" in item)).toEqual([{ note: "approval requested: read" }, { note: "approval approved: read" }]);
    } finally {
      await harness.close();
      await server.close();
    }
  });
});
