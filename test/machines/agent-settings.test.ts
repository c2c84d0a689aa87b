/**
 * Issue 10 item 2: the model, tools, active tools and thinking level are the session actor's
 * state. A change made during a run (from inside a tool's execute) changes the machine's
 * context, is used by the next model call, and is logged once the run ends; the machine's
 * snapshot shows plain data only (no model client leaves the process through it).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import type { Agent } from "../../src/machines/agent-types.ts";
import { fakeModel, memorySession } from "./helpers.ts";

interface AgentSnapshot {
  context: { settings?: { model: { modelId: string }; thinkingLevel: string; activeToolNames: string[] | null; toolNames: string[] } };
}

describe("settings are session-actor state", () => {
  it("setModel, setThinkingLevel and setTools from inside a tool go through the actor and reach the next model call", async () => {
    const { session } = await memorySession();
    const first = fakeModel([{ toolCalls: [{ id: "call_1", name: "switch", arguments: {} }], stopReason: "toolUse" }]);
    const second = { ...fakeModel([{ text: "answered by the second model" }]), modelId: "second-model" };
    const snapshots: AgentSnapshot[] = [];
    // eslint-disable-next-line prefer-const -- the tool reads the agent created below.
    let agent: Agent;
    const extra = defineTool({ name: "extra", description: "added during the run", parameters: z.object({}), execute: async () => ({ content: [{ type: "text", text: "x" }] }) });
    const switcher = defineTool({
      name: "switch",
      description: "changes the settings mid-run",
      parameters: z.object({}),
      async execute() {
        void agent.setModel(second);
        void agent.setThinkingLevel("high");
        void agent.setTools([switcher, extra], ["switch", "extra"]);
        return { content: [{ type: "text", text: "switched" }] };
      },
    });
    agent = createAgent({
      session,
      model: first,
      tools: [switcher],
      inspect: (record: { type: string; actorRef?: { id?: string; getSnapshot?: () => unknown }; snapshot?: unknown }) => {
        if (record.type === "@xstate.snapshot" && (record.snapshot as AgentSnapshot | undefined)?.context?.settings) snapshots.push(record.snapshot as AgentSnapshot);
      },
    });
    const outcome = await agent.prompt("go");
    expect(outcome.status).toBe("done");
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    expect(second.requests[0].thinkingLevel).toBe("high");
    expect(second.requests[0].tools?.map((tool) => tool.name)).toEqual(["switch", "extra"]);
    // The machine's context changed (not a closure), and shows plain data only.
    const settings = snapshots.map((snapshot) => snapshot.context.settings!);
    expect(settings[0]).toMatchObject({ model: { modelId: "fake-model" }, thinkingLevel: "off", toolNames: ["switch"] });
    expect(settings.at(-1)).toMatchObject({ model: { modelId: "second-model" }, thinkingLevel: "high", activeToolNames: ["switch", "extra"], toolNames: ["switch", "extra"] });
    expect(JSON.parse(JSON.stringify(settings.at(-1)))).toEqual({ model: { provider: "fake", modelId: "second-model", api: "fake-api" }, toolNames: ["switch", "extra"], activeToolNames: ["switch", "extra"], thinkingLevel: "high" });
    expect(agent.getState()).toMatchObject({ model: { modelId: "second-model" }, thinkingLevel: "high" });
    // Logged once the run settled, after the run's own entries.
    await agent.waitForIdle();
    const types = session.view.getBranch().map((entry) => entry.type);
    expect(types.slice(-3).sort()).toEqual(["active_tools_change", "model_change", "thinking_level_change"]);
    await agent.dispose();
  });
});
