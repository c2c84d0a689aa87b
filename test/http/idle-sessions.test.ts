/**
 * Sessions opened by requests are closed once idle for `idleSessionMs`, never while a run is
 * going, and reopened from the log on the next request: the conversation goes on as if it had
 * stayed open (the model gets the whole history).
 */
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { messageOf, readChunks, startService, userMessage, type Service } from "./service.ts";

describe("idle sessions", () => {
  let model: OpenAIServer | undefined;
  let service: Service | undefined;
  afterEach(async () => {
    await service?.close();
    await model?.close();
  });

  it("closes an idle session, not a running one, and reopens it transparently on the next prompt", async () => {
    model = await startOpenAIServer();
    model.script(
      turnResponse({ text: "Reading.", toolCalls: [{ id: "call_held", name: "read", arguments: { path: "held.txt" } }] }),
      textResponse("First answer."),
      textResponse("Held one done."),
      textResponse("Second answer."),
    );
    const closed: string[] = [];
    const waiters = new Map<string, () => void>();
    const closedOnce = (id: string) => new Promise<void>((resolve) => waiters.set(id, resolve));
    let entered!: () => void;
    const inTool = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    service = await startService({
      modelUrl: model.url,
      toolGate: async (path) => {
        if (path !== "held.txt") return;
        entered();
        await gate;
      },
      handler: {
        idleSessionMs: 40,
        onSessionClosed: (id) => {
          closed.push(id);
          waiters.get(id)?.();
        },
      },
    });
    const send = (chatId: string, text: string) =>
      service!.transport().sendMessages({ chatId, messages: [userMessage(text)], trigger: "submit-message", messageId: undefined, abortSignal: undefined }).then(readChunks);

    // "busy" holds its run at the tool; "quick" answers and goes idle after it.
    const busy = send("busy", "read held.txt");
    await inTool;
    const quickClosed = closedOnce("quick");
    const first = (await messageOf(await send("quick", "first question")))!;
    expect(first.parts.filter((part) => part.type === "text")).toMatchObject([{ text: "First answer." }]);
    const before = await service.harness.openSession("busy");
    await quickClosed;
    // "busy" was unused longer than "quick" when "quick" was closed, but its run holds the slot.
    expect(closed).toEqual(["quick"]);
    expect(await service.harness.openSession("busy")).toBe(before);
    release();
    await busy;

    // The next prompt reopens "quick" from the log: the model sees the first exchange.
    const second = (await messageOf(await send("quick", "second question")))!;
    expect(second.parts.filter((part) => part.type === "text")).toMatchObject([{ text: "Second answer." }]);
    const request = model.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    expect(request.messages.filter((message) => message.role !== "system").map((message) => [message.role, typeof message.content === "string" ? message.content : JSON.stringify(message.content)])).toEqual([
      ["user", expect.stringContaining("first question")],
      ["assistant", expect.stringContaining("First answer.")],
      ["user", expect.stringContaining("second question")],
    ]);
    const events = await service.log.readStream("session-quick");
    expect(events.filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status)).toEqual(["done", "done"]);
  }, 60_000);
});
