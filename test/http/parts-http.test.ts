/** Reasoning and errors reach the client as their own UI message part and chunk types. */
import { afterEach, describe, expect, it } from "vitest";
import { errorResponse, startOpenAIServer, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { messageOf, readChunks, startService, userMessage, type Service } from "./service.ts";

describe("part types over HTTP", () => {
  let model: OpenAIServer | undefined;
  let service: Service | undefined;
  afterEach(async () => {
    await service?.close();
    await model?.close();
  });

  it("streams reasoning as reasoning parts (OpenAI Responses wire)", async () => {
    model = await startOpenAIServer();
    model.script(turnResponse({ reasoning: "Weighing the two files.", text: "Here is the answer." }));
    service = await startService({ modelUrl: model.url, api: "responses" });
    const chunks = await readChunks(await service.transport().sendMessages({ chatId: "think", messages: [userMessage("think")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    expect(chunks.map((chunk) => chunk.type)).toContain("reasoning-delta");
    const message = await messageOf(chunks);
    expect(message?.parts.map((part: any) => [part.type, part.text])).toEqual([
      ["step-start", undefined],
      ["reasoning", "Weighing the two files."],
      ["text", "Here is the answer."],
    ]);
  });

  it("a provider error ends the stream with an error chunk naming it, then finish (error)", async () => {
    model = await startOpenAIServer();
    model.script(errorResponse(400, { error: { message: "model gpt-test does not exist", type: "invalid_request_error" } }));
    service = await startService({ modelUrl: model.url });
    const chunks = await readChunks(await service.transport().sendMessages({ chatId: "err", messages: [userMessage("hi")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    const error = chunks.find((chunk) => chunk.type === "error");
    expect(error).toEqual({ type: "error", errorText: expect.stringContaining("model gpt-test does not exist") });
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "error" });
    expect(chunks.indexOf(error!)).toBe(chunks.length - 2);
  });
});
