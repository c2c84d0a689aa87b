/**
 * The chat POST routes that start a run (a prompt, a regenerate) share one start-and-stream path
 * (`chat-handler.ts`): while a run of the session holds its slot, each answers `409 SESSION_BUSY`
 * naming the busy session, writes no prompt, and the held run then finishes as usual.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { heldToolGate, readChunks, sessionEvents, startService, TOKEN, userMessage, type Service } from "./service.ts";

describe("chat POST while the session is busy", () => {
  let model: OpenAIServer | undefined;
  let service: Service | undefined;
  afterEach(async () => {
    await service?.close();
    await model?.close();
  });

  it("answers 409 SESSION_BUSY to a prompt and to a regenerate, and the held run ends done", async () => {
    model = await startOpenAIServer();
    model.script(turnResponse({ text: "Reading.", toolCalls: [{ id: "call_held", name: "read", arguments: { path: "held.txt" } }] }), textResponse("Done reading."));
    const { inTool, release, toolGate } = heldToolGate();
    service = await startService({
      modelUrl: model.url,
      toolGate,
    });
    const held = service.transport().sendMessages({ chatId: "busy", messages: [userMessage("read held.txt")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }).then(readChunks);
    await inTool;
    const post = (body: unknown) => fetch(`${service!.url}/api/chat`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const prompts = async () => (await sessionEvents(service!.log, "busy")).filter((event) => event.type === "entry.appended" && (event.data as { entry: { type: string; message?: { role: string } } }).entry.message?.role === "user").length;

    const again = await post({ id: "busy", messages: [userMessage("another question")], trigger: "submit-message" });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: "SESSION_BUSY" } });
    const regenerate = await post({ id: "busy", messages: [userMessage("read held.txt")], trigger: "regenerate-message" });
    expect(regenerate.status).toBe(409);
    expect(await regenerate.json()).toMatchObject({ error: { code: "SESSION_BUSY" } });
    expect(await prompts()).toBe(1);

    release();
    const chunks = await held;
    expect(chunks.at(-1)).toMatchObject({ type: "finish" });
    const ended = (await sessionEvents(service.log, "busy")).filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status);
    expect(ended).toEqual(["done"]);
  }, 60_000);
});
