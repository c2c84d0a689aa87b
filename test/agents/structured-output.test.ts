/**
 * The structured-output parts of typed agents on a real AI SDK client (the scripted v3 model
 * behind `createAiSdkModelClient`): which calls carry `responseFormat`, when a repair is queued,
 * and how non-object schemas travel.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAiSdkModelClient } from "../../src/adapters/model/ai-sdk-client.ts";
import { createAnswerJudge, judgedModel, judgeValue, outputJsonSchema, planOutput, REPAIR_MESSAGE_TYPE } from "../../src/agents/structured-output.ts";
import { SUMMARY_SYSTEM_PROMPT } from "../../src/compaction/prompts.ts";
import type { CustomMessage } from "../../src/core/messages.ts";
import type { ModelClient, ModelRequest } from "../../src/core/model-stream.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";

const drain = async (client: ModelClient, request: ModelRequest) => {
  const types: string[] = [];
  for await (const event of client.stream(request, {})) types.push(event.type);
  return types;
};
const user = (text: string): ModelRequest => ({ systemPrompt: "Answer.", messages: [{ role: "user", content: text, timestamp: 1 }], tools: [] });

describe("structured output", () => {
  it("native mode: loop calls carry responseFormat; an invalid final answer queues one repair before its done event; summary calls pass through", async () => {
    const model = scriptedModel([{ text: "{\"n\":\"one\"}" }, { text: "{\"n\":1}" }, { text: "notes" }], { provider: "openai.chat" });
    const client = createAiSdkModelClient(model);
    expect(client.structuredOutput).toBe(true);
    const plan = planOutput("count", z.object({ n: z.number() }), client, "auto");
    expect(plan.mode).toBe("native");
    const judge = createAnswerJudge(plan, 1);
    const queued: CustomMessage[] = [];
    const judged = judgedModel(client, judge, (message) => queued.push(message));

    await drain(judged, user("count"));
    expect(model.doStreamCalls[0].responseFormat).toEqual({ type: "json", schema: plan.jsonSchema, name: "count" });
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ role: "custom", customType: REPAIR_MESSAGE_TYPE });
    expect(queued[0].content).toContain("n: Invalid input: expected number, received string");

    await drain(judged, user("again"));
    expect(queued).toHaveLength(1);
    expect(judge.last).toEqual({ ok: true, value: { n: 1 } });

    await drain(judged, { ...user("summarize"), systemPrompt: SUMMARY_SYSTEM_PROMPT });
    expect(model.doStreamCalls[2].responseFormat).toBeUndefined();
    expect(judge.last).toEqual({ ok: true, value: { n: 1 } });
    expect(queued).toHaveLength(1);
  });

  it("a client without native structured output never sends responseFormat, and auto picks the tool", async () => {
    const model = scriptedModel([{ text: "x" }], { provider: "anthropic.messages" });
    const client = createAiSdkModelClient(model);
    expect(client.structuredOutput).toBeUndefined();
    expect(planOutput("a", z.object({ n: z.number() }), client, "auto").mode).toBe("tool");
    await drain(client, { ...user("x"), responseFormat: { type: "json", schema: { type: "object" } } });
    expect(model.doStreamCalls[0].responseFormat).toBeUndefined();
  });

  it("no repairs left: the invalid answer is final and nothing is queued", async () => {
    const client = createAiSdkModelClient(scriptedModel([{ text: "[]" }], { provider: "openai.responses" }));
    const judge = createAnswerJudge(planOutput("a", z.object({ n: z.number() }), client, "auto"), 0);
    const queued: CustomMessage[] = [];
    await drain(judgedModel(client, judge, (message) => queued.push(message)), user("x"));
    expect(queued).toEqual([]);
    expect(judge.last).toMatchObject({ ok: false });
    expect(judge.repairs).toBe(0);
  });

  it("a non-object schema travels as { value } and comes back unwrapped; fenced JSON is accepted", () => {
    const { jsonSchema, wrapped } = outputJsonSchema(z.array(z.string()));
    expect(wrapped).toBe(true);
    expect(jsonSchema).toMatchObject({ type: "object", required: ["value"], properties: { value: { type: "array" } } });
    const plan = { mode: "native" as const, schema: z.array(z.string()), jsonSchema, wrapped, name: "list" };
    expect(judgeValue(plan, { value: ["a"] })).toEqual({ ok: true, value: ["a"] });
    expect(judgeValue(plan, { value: [1] })).toMatchObject({ ok: false, issues: [{ path: "value.0" }] });
    const objectPlan = planOutput("a", z.object({ n: z.number() }), { provider: "", modelId: "", api: "", structuredOutput: true, stream: async function* () {} }, "auto");
    const judge = createAnswerJudge(objectPlan, 0);
    judge.onFinalMessage({ role: "assistant", content: [{ type: "text", text: "```json\n{\"n\": 2}\n```" }], api: "", provider: "", model: "", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, stopReason: "stop", timestamp: 1 });
    expect(judge.last).toEqual({ ok: true, value: { n: 2 } });
  });
});
