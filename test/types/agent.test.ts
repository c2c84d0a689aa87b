/**
 * Type tests of the names `createHarness` and `defineAgent` can check at compile time: an agent's
 * literal model name must be one of the models of the harness `run` is given, and the harness's
 * `activeToolNames` must name its tools (tsc over test/ fails if a `@ts-expect-error` stops
 * erroring). Plain `string` names stay accepted, and checked at run time.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { defineAgent, type TypedAgent } from "../../src/agents/define-agent.ts";
import { defineTool, type AgentTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { HarnessConfigError } from "../../src/core/errors.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { scriptedModel } from "../../src/testing/index.ts";

const read = defineTool({
  name: "read",
  description: "Reads a file",
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => ({ content: [{ type: "text", text: path }] }),
});
const write = defineTool({
  name: "write",
  description: "Writes a file",
  parameters: z.object({ path: z.string(), text: z.string() }),
  execute: async ({ path }) => ({ content: [{ type: "text", text: path }] }),
});

describe("an agent's model name and the harness's models", () => {
  it("runs an agent whose model is a key of the harness's models", async () => {
    const harness = await createHarness({ models: { main: scriptedModel([{ text: "main" }]), fast: scriptedModel([{ text: "fast" }]) }, eventLog: createMemoryEventLog() });
    expectTypeOf(harness).toEqualTypeOf<AgentHarness<"main" | "fast">>();
    expectTypeOf(harness).toExtend<AgentHarness>();
    const agent = defineAgent({ name: "echo", instructions: "Echo.", model: "fast" });
    expectTypeOf(agent).toExtend<TypedAgent<z.ZodString, undefined>>();
    const outcome = await agent.run("hi", { harness });
    expect(outcome).toMatchObject({ status: "done", output: "fast" });
    await harness.close();
  });

  it("refuses a model name that is not a key of the harness's models: at compile time, and at run time", async () => {
    const harness = await createHarness({ models: { main: scriptedModel([{ text: "x" }]) }, eventLog: createMemoryEventLog() });
    const agent = defineAgent({ name: "typo", instructions: "Echo.", model: "mian" });
    // @ts-expect-error "mian" is not a key of the harness's models.
    const refused = await agent.run("hi", { harness }).catch((error: unknown) => error);
    expect(String(refused)).toMatch(/mian/);
    // @ts-expect-error the same check on resume.
    const resumed = () => agent.resume("session-1", { harness });
    expect(typeof resumed).toBe("function");
    await harness.close();
  });

  it("keeps accepting names that are only known at run time", () => {
    const name: string = "any-name";
    const agent = defineAgent({ name: "dynamic", instructions: "Echo.", model: name });
    const models: Record<string, ReturnType<typeof scriptedModel>> = { main: scriptedModel([]) };
    const later = async () => {
      const literal = await createHarness({ models: { main: scriptedModel([]) } });
      const dynamic = await createHarness({ models });
      await agent.run("hi", { harness: literal });
      await defineAgent({ name: "typed", instructions: "Echo.", model: "main" }).run("hi", { harness: dynamic });
      await defineAgent({ name: "default", instructions: "Echo." }).run("hi", { harness: literal });
    };
    expectTypeOf(later).returns.resolves.toBeVoid();
  });
});

describe("createHarness's activeToolNames and its tools", () => {
  it("accepts names of the given tools, and sends only those", async () => {
    const harness = await createHarness({ models: { main: scriptedModel([]) }, tools: [read, write], activeToolNames: ["read"], eventLog: createMemoryEventLog() });
    expect(harness.getState().activeToolNames).toEqual(["read"]);
    await harness.close();
  });

  it("refuses a name that is not one of the tools: at compile time, and at run time", async () => {
    // @ts-expect-error "raed" is not the name of a given tool.
    const refused = await createHarness({ models: { main: scriptedModel([]) }, tools: [read, write], activeToolNames: ["raed"], eventLog: createMemoryEventLog() }).catch((error: unknown) => error);
    expect(HarnessConfigError.isInstance(refused)).toBe(true);
    expect(String((refused as Error).message)).toMatch(/"raed" is not a given tool/);
  });

  it("keeps accepting any name when the tools' names are plain strings", () => {
    const tools: AgentTool<any, any, any>[] = [read, write];
    expectTypeOf(read.name).toEqualTypeOf<"read">();
    const later = () => createHarness({ models: { main: scriptedModel([]) }, tools, activeToolNames: ["anything"] });
    expectTypeOf(later).returns.resolves.not.toBeAny();
  });
});
