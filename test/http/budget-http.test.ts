/**
 * Budgets over HTTP (`docs/budgets.md`, `docs/http.md`): a per-tenant budget of
 * `createChatHandler({ budget })` stops a run; the stream ends with an `error` chunk naming the
 * limit and `finish { finishReason: "error" }`; the tenant's next run is refused too; a new chat
 * with a deleted session's id starts its session budget from zero while the tenant's use stays;
 * a bad budget is refused when the handler is made.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { readChunks, sessionEvents, startService, TOKEN, userMessage, type Service } from "./service.ts";

let model: OpenAIServer | undefined;
let service: Service | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
  await model?.close();
  model = undefined;
});

describe("budgets over HTTP", () => {
  it("a tenant budget stops the run: an error chunk names the limit, then finish error; the log says budget_exceeded", async () => {
    model = await startOpenAIServer();
    model.script(
      toolCallResponse([
        { id: "c1", name: "read", arguments: { path: "a.txt" } },
        { id: "c2", name: "read", arguments: { path: "b.txt" } },
      ]),
    );
    const tenants: string[] = [];
    service = await startService({ modelUrl: model.url, handler: { budget: { tenant: (tenant) => (tenants.push(tenant), { maxToolCalls: 1 }) } } });
    const chunks = await readChunks(await service.transport().sendMessages({ chatId: "budget-1", messages: [userMessage("read both")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    expect(tenants).toContain("default");
    const error = chunks.find((chunk) => chunk.type === "error");
    // The two calls run in parallel: the refused one finds the other settled or still in flight.
    expect(error).toEqual({ type: "error", errorText: expect.stringMatching(/^Budget exceeded: the tenant's maxToolCalls is 1 tool call \(used [01], reserved [01], requested 1\)\.$/) });
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "error" });
    expect(model.requests.length).toBe(1);
    const events = await sessionEvents(service.log, "budget-1");
    expect(events.find((event) => event.type === "budget.exceeded")?.data).toMatchObject({ scope: "tenant", limit: "maxToolCalls", max: 1 });
    expect(events.filter((event) => event.type === "run.ended").at(-1)?.data).toMatchObject({ status: "budget_exceeded" });

    // A new request of the tenant: its budget is used up, the first tool call is refused again.
    model.script(toolCallResponse([{ id: "c3", name: "read", arguments: { path: "c.txt" } }]));
    const again = await readChunks(await service.transport().sendMessages({ chatId: "budget-2", messages: [userMessage("read c")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    expect(again.find((chunk) => chunk.type === "error")).toMatchObject({ errorText: expect.stringMatching(/^Budget exceeded: the tenant's maxToolCalls is 1/) });
    expect(again.some((chunk) => chunk.type === "tool-output-available")).toBe(false);
  });

  it("a new chat with a deleted session's id starts with an empty session budget; the tenant's use still counts", async () => {
    model = await startOpenAIServer({ respond: () => textResponse("fine") });
    service = await startService({ modelUrl: model.url, handler: { budget: { session: { maxTurns: 1 }, tenant: { maxTurns: 3 } } } });
    const chat = async (text: string) => readChunks(await service!.transport().sendMessages({ chatId: "reused", messages: [userMessage(text)], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    expect((await chat("one")).find((chunk) => chunk.type === "error")).toBeUndefined();
    expect((await chat("two")).find((chunk) => chunk.type === "error")).toMatchObject({ errorText: expect.stringMatching(/^Budget exceeded: the session's maxTurns is 1/) });
    const deleted = await fetch(`${service.url}/api/sessions/reused`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(deleted.status).toBe(200);
    // The new chat of the id runs: the deleted session's turn is not its own.
    const third = await chat("three");
    expect(third.find((chunk) => chunk.type === "error")).toBeUndefined();
    expect(third.at(-1)).toMatchObject({ type: "finish" });
    // The tenant has used 2 of its 3 turns (the deleted session's included): one more chat elsewhere runs, the next is refused for the tenant.
    expect((await readChunks(await service.transport().sendMessages({ chatId: "other", messages: [userMessage("four")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }))).find((chunk) => chunk.type === "error")).toBeUndefined();
    expect((await readChunks(await service.transport().sendMessages({ chatId: "other-2", messages: [userMessage("five")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }))).find((chunk) => chunk.type === "error")).toMatchObject({ errorText: expect.stringMatching(/^Budget exceeded: the tenant's maxTurns is 3/) });
  });

  it("a bad budget is refused when the handler is made, naming the field", async () => {
    model = await startOpenAIServer();
    service = await startService({ modelUrl: model.url });
    expect(() => createChatHandler({ harness: service!.harness, budget: { run: { maxTurns: 2.5 } } })).toThrow(/createChatHandler\(\): budget\.run\.maxTurns must be a whole number/);
  });
});
