/**
 * `Chat.regenerate()` over HTTP, through the `ai` package's own chat client (`AbstractChat` with
 * `DefaultChatTransport`): the last assistant message is generated again; in the log the leaf
 * moved back to the user message (a new branch: the old reply stays in the tree) and the model
 * was asked again with the history up to that user message only.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { NodeChat } from "./node-chat.ts";
import { startService, TOKEN, type Service } from "./service.ts";

const textOf = (message: UIMessage | undefined) => message?.parts.filter((part) => part.type === "text").map((part) => (part as { text: string }).text).join("");

describe("regenerate-message over HTTP", () => {
  let model: OpenAIServer | undefined;
  let service: Service | undefined;
  afterEach(async () => {
    await service?.close();
    await model?.close();
  });

  it("generates the last assistant message again on a new branch from its user message", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("First answer."), textResponse("Second answer."), textResponse("Regenerated answer."));
    service = await startService({ modelUrl: model.url });
    const chat = new NodeChat({ id: "regen", transport: service.transport(TOKEN) });
    await chat.sendMessage({ text: "first question" });
    await chat.sendMessage({ text: "second question" });
    expect(chat.messages.map((message) => [message.role, message.role === "user" ? textOf(message) : textOf(message)])).toEqual([
      ["user", "first question"],
      ["assistant", "First answer."],
      ["user", "second question"],
      ["assistant", "Second answer."],
    ]);
    const replaced = chat.messages[3].id;
    await chat.regenerate();
    expect(chat.error).toBeUndefined();
    expect(chat.messages.map((message) => [message.role, textOf(message)])).toEqual([
      ["user", "first question"],
      ["assistant", "First answer."],
      ["user", "second question"],
      ["assistant", "Regenerated answer."],
    ]);
    expect(chat.messages[3].id).not.toBe(replaced);

    // The model saw the history up to the second question, without the replaced answer.
    const sent = model.requests[2].body as { messages: { role: string; content: unknown }[] };
    expect(JSON.stringify(sent.messages)).toContain("second question");
    expect(JSON.stringify(sent.messages)).not.toContain("Second answer.");
    // In the tree: the old answer is still there, on the branch the leaf left.
    const session = service.harness.repository!.open("regen");
    const view = (await session).view;
    const branch = view.getBranch().map((entry) => (entry.type === "message" ? JSON.stringify((entry.message as { content: unknown }).content) : entry.type));
    expect(branch.some((text) => text.includes("Regenerated answer."))).toBe(true);
    expect(branch.some((text) => text.includes("Second answer."))).toBe(false);
    expect(view.getEntries().some((entry) => entry.type === "message" && JSON.stringify((entry.message as { content: unknown }).content).includes("Second answer."))).toBe(true);
  });

  it("answers 404 for an assistant message that is not in the session", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("An answer."));
    service = await startService({ modelUrl: model.url });
    const chat = new NodeChat({ id: "regen-404", transport: service.transport(TOKEN) });
    await chat.sendMessage({ text: "a question" });
    const response = await fetch(`${service.url}/api/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ id: "regen-404", messages: chat.messages.slice(0, 1), trigger: "regenerate-message", messageId: "no-such-run" }),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "MESSAGE_NOT_FOUND", message: 'No assistant message "no-such-run" to regenerate.' } });
  });
});
