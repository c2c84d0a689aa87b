/**
 * Typed agents end to end: the real `@ai-sdk/openai` client against the loopback OpenAI server,
 * over a real SQLite log file. A schema the model gets wrong once: one repair round, then a
 * typed output, with a tool call in the same run, in both wire modes (the request carries
 * `response_format` json_schema / `text.format`), and in tool mode (a final-answer tool).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineAgent, type AgentOutcome } from "../../src/agents/define-agent.ts";
import { AgentDefinitionError, AgentInputError, AgentOutputError, AgentRunError } from "../../src/agents/errors.ts";
import { REPAIR_MESSAGE_TYPE } from "../../src/agents/structured-output.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { errorResponse, hangResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";

const Weather = z.object({ city: z.string(), celsius: z.number(), summary: z.string() });

let lookups: string[] = [];
const lookup = defineTool({
  name: "lookup_weather",
  description: "Current weather of a city",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    lookups.push(city);
    return { content: [{ type: "text", text: `${city}: 21 degrees, sunny` }] };
  },
});

const weatherAgent = defineAgent({
  name: "weather",
  instructions: "Report the weather of the city you are given.",
  input: z.object({ city: z.string().min(1) }),
  output: Weather,
  tools: [lookup],
  maxRepairs: 1,
});

describe("typed agents over the OpenAI wire", () => {
  let dir: string;
  let server: OpenAIServer;
  let log: EventLog;
  let harness: AgentHarness | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-agents-"));
    server = await startOpenAIServer();
    log = createSqliteEventLog({ path: join(dir, "arbor.db") });
    lookups = [];
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await log.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const harnessFor = async (api: "chat" | "responses") =>
    (harness = await createHarness({
      eventLog: log,
      cwd: dir,
      systemPrompt: "You are the harness's own assistant.",
      // The agent's session replaces the harness's tools with the agent's.
      tools: [defineTool({ name: "harness_only", description: "Not for agents", parameters: z.object({}), execute: async () => ({ content: [] }) })],
      models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "sk-test", api }) },
    }));

  const sessionEvents = (sessionId: string): Promise<StoredEvent[]> => log.readStream(sessionStreamId(sessionId));

  /** The text of every message of a request body, in order (Chat `messages` or Responses `input`). */
  const requestTexts = (body: any): string[] =>
    (body.messages ?? body.input ?? []).map((item: any) =>
      typeof item.content === "string" ? item.content : Array.isArray(item.content) ? item.content.map((part: any) => part.text ?? "").join("") : (item.output ?? item.arguments ?? ""),
    );

  for (const api of ["chat", "responses"] as const) {
    it(`${api}: a tool call, one wrong answer, one repair round, then the typed output; the requests carry the native JSON schema`, async () => {
      await harnessFor(api);
      server.script(
        toolCallResponse([{ id: "call_1", name: "lookup_weather", arguments: { city: "Paris" } }]),
        // Wrong: celsius is a string, summary is missing.
        textResponse(JSON.stringify({ city: "Paris", celsius: "21" })),
        textResponse(JSON.stringify({ city: "Paris", celsius: 21, summary: "sunny" })),
      );
      const outcome = await weatherAgent.run({ city: "Paris" }, { harness: harness!, metadata: { workflow: "w-1" } });

      expect(outcome.status).toBe("done");
      if (outcome.status !== "done") throw new Error("unreachable");
      expect(outcome.output).toEqual({ city: "Paris", celsius: 21, summary: "sunny" });
      expectTypeOf(outcome.output).toEqualTypeOf<{ city: string; celsius: number; summary: string }>();
      expect(outcome.repairs).toBe(1);
      expect(lookups).toEqual(["Paris"]);
      expect(outcome.usage.input).toBe(30); // three calls of the default scripted usage (10 in, 5 out)
      expect(outcome.usage.output).toBe(15);

      expect(server.requests).toHaveLength(3);
      for (const request of server.requests) {
        const body = request.body;
        expect(body.tools.map((tool: any) => tool.name ?? tool.function?.name)).toEqual(["lookup_weather"]);
        if (api === "chat") {
          expect(request.path).toBe("/v1/chat/completions");
          expect(body.response_format.type).toBe("json_schema");
          expect(body.response_format.json_schema.name).toBe("weather");
          expect(body.response_format.json_schema.schema.required).toEqual(["city", "celsius", "summary"]);
        } else {
          expect(request.path).toBe("/v1/responses");
          expect(body.text.format.type).toBe("json_schema");
          expect(body.text.format.name).toBe("weather");
          expect(body.text.format.schema.properties.celsius.type).toBe("number");
        }
      }
      const system = api === "chat" ? server.requests[0].body.messages[0] : server.requests[0].body.input[0];
      expect(["system", "developer"]).toContain(system.role);
      expect(JSON.stringify(system.content)).toContain("Report the weather of the city you are given.");
      expect(JSON.stringify(system.content)).not.toContain("harness's own assistant");
      // The repair names the failing fields and reaches the model in the third request, after the wrong answer.
      const third = requestTexts(server.requests[2].body);
      const repair = third.find((text) => text.includes("does not match the required output schema"));
      expect(repair).toContain("celsius");
      expect(repair).toContain("summary");
      expect(third.indexOf(repair!)).toBeGreaterThan(third.findIndex((text) => text.includes('"celsius":"21"')));

      // One run holds it all, in the agent's own session, between agent.started and agent.ended.
      const events = await sessionEvents(outcome.sessionId);
      const types = events.map((event) => event.type);
      expect(types.filter((type) => type === "run.started")).toHaveLength(1);
      expect(types.indexOf("agent.started")).toBeLessThan(types.indexOf("run.started"));
      expect(types.lastIndexOf("agent.ended")).toBe(types.length - 1);
      const created = events[0];
      expect(created.type).toBe("session.created");
      expect((created.data as { metadata?: unknown }).metadata).toEqual({ workflow: "w-1", agent: "weather" });
      const started = events.find((event) => isEventOfType(event, "agent.started"))!;
      expect(started.data).toMatchObject({ agent: "weather", mode: "native", maxRepairs: 1, input: { city: "Paris" } });
      const ended = events.find((event) => isEventOfType(event, "agent.ended"));
      if (!ended || !isEventOfType(ended, "agent.ended")) throw new Error("no agent.ended");
      expect(ended.data).toMatchObject({ status: "done", runId: outcome.runId, repairs: 1, output: outcome.output, invocationId: outcome.invocationId });
      const runStarted = events.find((event) => isEventOfType(event, "run.started"))!;
      expect(runStarted.metadata.runId).toBe(outcome.runId);
      const repairEntries = events.filter((event) => isEventOfType(event, "entry.appended") && JSON.stringify(event.data.entry).includes(REPAIR_MESSAGE_TYPE));
      expect(repairEntries).toHaveLength(1);
    });
  }

  it("tool mode: the answer is a final_answer call; a wrong call gets the repair as its result, then the typed output", async () => {
    await harnessFor("chat");
    const agent = defineAgent({ ...weatherAgent.definition, outputMode: "tool" });
    server.script(
      toolCallResponse([{ id: "call_1", name: "lookup_weather", arguments: { city: "Oslo" } }]),
      toolCallResponse([{ id: "call_2", name: "final_answer", arguments: { city: "Oslo", celsius: "cold" } }]),
      toolCallResponse([{ id: "call_3", name: "final_answer", arguments: { city: "Oslo", celsius: -3, summary: "snow" } }]),
    );
    const outcome = await agent.run({ city: "Oslo" }, { harness: harness! });
    expect(outcome).toMatchObject({ status: "done", output: { city: "Oslo", celsius: -3, summary: "snow" }, repairs: 1 });
    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) {
      expect(request.body.response_format).toBeUndefined();
      expect(request.body.tools.map((tool: any) => tool.function.name)).toEqual(["lookup_weather", "final_answer"]);
    }
    expect(server.requests[0].body.tools[1].function.parameters.required).toEqual(["city", "celsius", "summary"]);
    const third = server.requests[2].body.messages as { role: string; tool_call_id?: string; content: string }[];
    const repair = third.find((message) => message.role === "tool" && message.tool_call_id === "call_2");
    expect(repair?.content).toMatch(/celsius.*summary|summary.*celsius/s);
  });

  for (const [mode, maxRepairs] of [["native", 1], ["native", 2], ["tool", 1]] as const) {
    it(`${mode}, maxRepairs ${maxRepairs}: a resumed invocation goes on from the repairs and usage its log holds (the bound is the invocation's)`, async () => {
      const gated = defineTool({ name: "gate", description: "Needs a human", parameters: z.object({}), needsApproval: true, execute: async () => ({ content: [{ type: "text", text: "opened" }] }) });
      const agent = defineAgent({ ...weatherAgent.definition, tools: [gated], maxRepairs, outputMode: mode });
      const answer = (value: Record<string, unknown>, usage: { input: number; output: number }) =>
        mode === "native" ? textResponse(JSON.stringify(value), { usage }) : toolCallResponse([{ id: `call_answer_${usage.output}`, name: "final_answer", arguments: value }], { usage });
      server.script(
        answer({ city: "Oslo" }, { input: 100, output: 1 }), // invalid: repair 1
        toolCallResponse([{ id: "call_gate", name: "gate", arguments: {} }], { usage: { input: 200, output: 2 } }),
        answer({ city: "Oslo", celsius: "cold" }, { input: 300, output: 3 }), // invalid again, after the resume
        answer({ city: "Oslo", celsius: -3, summary: "snow" }, { input: 400, output: 4 }),
      );
      const first = await agent.run({ city: "Oslo" }, { harness: await harnessFor("chat") });
      expect(first).toMatchObject({ status: "suspended", pendingApprovals: ["call_gate"], repairs: 1, usage: { input: 300, output: 3 } });
      await (await harness!.openSession(first.sessionId)).approve("call_gate");
      await harness!.close();

      // Another harness over the same file resumes: the second invalid answer is the invocation's second.
      const resumed = await agent.resume(first.sessionId, { harness: await harnessFor("chat") });
      const events = await sessionEvents(first.sessionId);
      const ended = events.filter((event) => isEventOfType(event, "agent.ended"));
      expect(ended).toHaveLength(1);
      if (maxRepairs === 1) {
        // Out of repairs: no third request, the invocation fails having sent its one repair.
        expect(resumed).toMatchObject({ status: "failed", repairs: 1, usage: { input: 600, output: 6, totalTokens: 606 } });
        expect(server.requests).toHaveLength(3);
        expect(ended[0].data).toMatchObject({ status: "failed", code: "AGENT_OUTPUT_INVALID", repairs: 1, usage: { input: 600, output: 6 } });
      } else {
        expect(resumed).toMatchObject({ status: "done", repairs: 2, usage: { input: 1000, output: 10, totalTokens: 1010 } });
        expect(ended[0].data).toMatchObject({ status: "done", repairs: 2, usage: { input: 1000, output: 10 } });
        const ordinals = events.flatMap((event) => (isEventOfType(event, "entry.appended") && event.data.entry.type === "custom_message" && JSON.stringify(event.data.entry).includes("does not match") ? [JSON.stringify(event.data.entry).match(/"repair":(\d)/)?.[1]] : []));
        expect(ordinals).toEqual(["1", "2"]);
      }
    });
  }

  it("no valid answer after the repairs: a failed outcome with AgentOutputError, logged as agent.ended failed", async () => {
    await harnessFor("chat");
    server.script(textResponse("not json"), textResponse(JSON.stringify({ city: "Rome" })));
    const outcome = await weatherAgent.run({ city: "Rome" }, { harness: harness! });
    expect(outcome.status).toBe("failed");
    if (outcome.status === "done" || outcome.status === "suspended") throw new Error("unreachable");
    expect(AgentOutputError.isInstance(outcome.error)).toBe(true);
    expect(outcome.error.code).toBe("AGENT_OUTPUT_INVALID");
    expect(outcome.error.message).toContain("celsius");
    expect(outcome.repairs).toBe(1);
    expect(server.requests).toHaveLength(2);
    const ended = (await sessionEvents(outcome.sessionId)).find((event) => event.type === "agent.ended")!;
    expect(ended.data).toMatchObject({ status: "failed", code: "AGENT_OUTPUT_INVALID", repairs: 1 });

    // Resuming the ended invocation gives the outcome as recorded: the same error, message included.
    const again = await weatherAgent.resume(outcome.sessionId, { harness: harness! });
    if (again.status !== "failed") throw new Error(`expected failed, got ${again.status}`);
    expect(AgentOutputError.isInstance(again.error)).toBe(true);
    expect(again.error.message).toBe(outcome.error.message);
    expect(server.requests).toHaveLength(2);
  });

  it("a model without native structured output gets the final-answer tool (auto mode)", async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: "c1", name: "lookup_weather", arguments: { city: "Lima" } }] },
      { toolCalls: [{ id: "c2", name: "final_answer", arguments: { city: "Lima", celsius: 18, summary: "cloudy" } }] },
    ]);
    harness = await createHarness({ eventLog: log, cwd: dir, models: { main: model } });
    const outcome = await weatherAgent.run({ city: "Lima" }, { harness });
    expect(outcome).toMatchObject({ status: "done", output: { city: "Lima", celsius: 18, summary: "cloudy" }, repairs: 0 });
    expect(model.doStreamCalls).toHaveLength(2);
    for (const call of model.doStreamCalls) {
      expect(call.responseFormat).toBeUndefined();
      expect(call.tools?.map((tool) => tool.name)).toEqual(["lookup_weather", "final_answer"]);
    }
    const started = (await sessionEvents(outcome.sessionId)).find((event) => event.type === "agent.started")!;
    expect(started.data).toMatchObject({ mode: "tool" });
  });

  it("a provider error ends the invocation failed with AgentRunError; an abort ends it aborted", async () => {
    await harnessFor("chat");
    server.script(errorResponse(400, { error: { message: "bad request", type: "invalid_request_error" } }));
    const failed = await weatherAgent.run({ city: "Bern" }, { harness: harness! });
    expect(failed.status).toBe("failed");
    if (failed.status === "done" || failed.status === "suspended") throw new Error("unreachable");
    expect(AgentRunError.isInstance(failed.error)).toBe(true);
    expect(failed.error.message).toContain("bad request");
    // Resumed after it ended: the recorded outcome, its message once prefixed (`Agent "weather" run failed: …`).
    const failedAgain = await weatherAgent.resume(failed.sessionId, { harness: harness! });
    if (failedAgain.status !== "failed") throw new Error(`expected failed, got ${failedAgain.status}`);
    expect(failedAgain.error.message).toBe(failed.error.message);

    server.script(hangResponse());
    const controller = new AbortController();
    const running = weatherAgent.run({ city: "Bern" }, { harness: harness!, signal: controller.signal });
    await server.waitForRequests(2);
    controller.abort();
    const aborted = await running;
    expect(aborted.status).toBe("aborted");
    if (aborted.status === "done" || aborted.status === "suspended") throw new Error("unreachable");
    expect(aborted.error).toMatchObject({ code: "AGENT_RUN_FAILED", status: "aborted" });
    const abortedAgain = await weatherAgent.resume(aborted.sessionId, { harness: harness! });
    if (abortedAgain.status !== "aborted") throw new Error(`expected aborted, got ${abortedAgain.status}`);
    expect(abortedAgain.error.message).toBe(aborted.error.message);
    const events = await sessionEvents(aborted.sessionId);
    expect(events.map((event) => event.type).slice(-1)).toEqual(["agent.ended"]);
    expect(events.find((event) => event.type === "run.ended")!.data).toMatchObject({ status: "aborted" });
    expect(events.at(-1)!.data).toMatchObject({ status: "aborted", runId: aborted.runId });
  });

  it("model by registry name: the agent's calls go to that model; an unknown name rejects before any session", async () => {
    const other = scriptedModel([{ text: JSON.stringify({ city: "Kyiv", celsius: 5, summary: "rain" }) }], { provider: "openai.chat", modelId: "other-model" });
    harness = await createHarness({ eventLog: log, cwd: dir, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "sk-test", api: "chat" }), other } });
    const named = defineAgent({ ...weatherAgent.definition, tools: [], model: "other" });
    const outcome = await named.run({ city: "Kyiv" }, { harness });
    expect(outcome).toMatchObject({ status: "done", output: { city: "Kyiv", celsius: 5, summary: "rain" } });
    expect(other.doStreamCalls).toHaveLength(1);
    expect(other.doStreamCalls[0].responseFormat).toMatchObject({ type: "json", name: "weather" });
    expect(server.requests).toHaveLength(0);

    const before = (await log.readAll()).length;
    const missing = defineAgent({ ...weatherAgent.definition, model: "missing" });
    await expect(missing.run({ city: "Kyiv" }, { harness })).rejects.toMatchObject({ code: "MODEL_CONFIG_INVALID" });
    expect((await log.readAll()).length).toBe(before);
  });

  it("the harness's secrets: redacted from the agent's requests and log, also with the agent's own model; native mode kept", async () => {
    const SECRET = "sk-live-SECRET-agent-77aa";
    harness = await createHarness({
      eventLog: log,
      cwd: dir,
      secrets: [SECRET],
      models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "sk-test", api: "chat" }) },
    });
    const own = defineAgent({ ...weatherAgent.definition, tools: [], model: createOpenAIModel({ modelId: "gpt-own", baseURL: server.url, apiKey: "sk-test", api: "responses" }) });
    server.script(textResponse(JSON.stringify({ city: "Oslo", celsius: 1, summary: "cold" })), textResponse(JSON.stringify({ city: "Oslo", celsius: 1, summary: "cold" })));
    for (const agent of [weatherAgent, own]) {
      const outcome = await agent.run({ city: `Oslo ${SECRET}` }, { harness });
      expect(outcome.status).toBe("done");
      expect(JSON.stringify(await sessionEvents(outcome.sessionId))).not.toContain(SECRET);
    }
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0].body.response_format.type).toBe("json_schema");
    expect(server.requests[1].body.text.format.type).toBe("json_schema");
    for (const request of server.requests) expect(JSON.stringify(request.body)).not.toContain(SECRET);
  });

  it("bad input: AgentInputError naming the path, before any session, request or event", async () => {
    await harnessFor("chat");
    const before = (await log.readAll()).length;
    const error = await weatherAgent.run({ city: "" }, { harness: harness! }).catch((caught: unknown) => caught);
    expect(AgentInputError.isInstance(error)).toBe(true);
    expect((error as AgentInputError).path).toBe("city");
    expect((error as AgentInputError).message).toContain('agent "weather"');
    // @ts-expect-error: the input type is the schema's
    await expect(weatherAgent.run({ town: "x" }, { harness: harness! })).rejects.toMatchObject({ code: "AGENT_INPUT_INVALID", path: "city" });
    expect((await log.readAll()).length).toBe(before);
    expect(server.requests).toHaveLength(0);
  });

  it("without an output schema the output is the final text; the default input is a string", async () => {
    await harnessFor("responses");
    server.script(textResponse("Paris is sunny."));
    const agent = defineAgent({ name: "plain", instructions: "Answer briefly." });
    const outcome = await agent.run("Weather in Paris?", { harness: harness! });
    expectTypeOf(outcome).toEqualTypeOf<AgentOutcome<string>>();
    expect(outcome).toMatchObject({ status: "done", output: "Paris is sunny.", repairs: 0 });
    expect(server.requests[0].body.text?.format).toBeUndefined();
  });

  it("types: the outcome's output is the output schema's inferred type; run's input is the input schema's", () => {
    type Outcome = Awaited<ReturnType<typeof weatherAgent.run>>;
    expectTypeOf<Extract<Outcome, { status: "done" }>["output"]>().toEqualTypeOf<z.output<typeof Weather>>();
    expectTypeOf<Parameters<typeof weatherAgent.run>[0]>().toEqualTypeOf<{ city: string }>();
    const _list = defineAgent({ name: "list", instructions: "List.", output: z.array(z.string()) });
    expectTypeOf<Extract<Awaited<ReturnType<typeof _list.run>>, { status: "done" }>["output"]>().toEqualTypeOf<string[]>();
  });

  it("defineAgent refuses a bad definition naming the field", () => {
    expect(() => defineAgent({ name: "bad name", instructions: "x" })).toThrow(AgentDefinitionError);
    expect(() => defineAgent({ name: "a", instructions: "x", maxRepairs: -1 })).toThrow(/maxRepairs/);
    expect(() => defineAgent({ name: "a", instructions: "x", output: z.object({ when: z.date() }) })).toThrow(/"output"/);
    expect(() => defineAgent({ name: "a", instructions: "x", tools: [{ ...lookup, name: "final_answer" }] })).toThrow(/tools\[0\]\.name/);
  });
});
