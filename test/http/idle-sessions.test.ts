/**
 * Sessions opened by requests are closed once idle for `idleSessionMs`, never while a run is
 * going, and reopened from the log on the next request: the conversation goes on as if it had
 * stayed open (the model gets the whole history). With `openHarness` (`arbor serve`) the
 * harness's own session is closed too, last, by closing that harness.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DefaultChatTransport, type UIMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer, type ChatServer } from "../../src/http/node-adapter.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { heldToolGate, messageOf, readChunks, startService, TOKEN, userMessage, type Service } from "./service.ts";

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
    const { inTool, release, toolGate } = heldToolGate("held.txt");
    service = await startService({
      modelUrl: model.url,
      toolGate,
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

describe("idle sessions with openHarness (as arbor serve)", () => {
  let model: OpenAIServer | undefined;
  let server: ChatServer | undefined;
  let log: EventLog | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await server?.close();
    await log?.close();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("closes the harness's own session too, last, by closing that harness; the next request makes a new harness and the conversation goes on", async () => {
    model = await startOpenAIServer();
    model.script(
      turnResponse({ text: "Reading.", toolCalls: [{ id: "call_own", name: "read", arguments: { path: "own.txt" } }] }),
      turnResponse({ text: "Reading.", toolCalls: [{ id: "call_other", name: "read", arguments: { path: "other.txt" } }] }),
      textResponse("Own done."),
      textResponse("Quick answer."),
      textResponse("Other done."),
      textResponse("Second answer."),
    );
    dir = mkdtempSync(join(tmpdir(), "arbor-idle-own-"));
    log = createSqliteEventLog({ path: join(dir, "arbor.db") });
    const repository = createSessionRepository({ log });
    const gates = new Map<string, { entered: Promise<void>; enter: () => void; release: () => void; released: Promise<void> }>();
    for (const path of ["own.txt", "other.txt"]) {
      let enter!: () => void;
      let release!: () => void;
      const entered = new Promise<void>((resolve) => (enter = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      gates.set(path, { entered, enter, release, released });
    }
    const read = defineTool({
      name: "read",
      description: "Read a file",
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        const gate = gates.get(path)!;
        gate.enter();
        await gate.released;
        return { content: [{ type: "text", text: `contents of ${path}` }] };
      },
    });
    const harnesses: AgentHarness[] = [];
    const openHarness = async (sessionId: string) => {
      const harness = await createHarness({ repository, sessionId, cwd: dir, tools: [read], toolExecution: "sequential", models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: model!.url, apiKey: "test", api: "chat" }) } }, streamOptions: { maxRetries: 0 } });
      harnesses.push(harness);
      return harness;
    };
    const closed: string[] = [];
    const waiters = new Map<string, () => void>();
    const closedOnce = (id: string) => new Promise<void>((resolve) => waiters.set(id, resolve));
    const handler = createChatHandler({
      repository,
      openHarness,
      token: TOKEN,
      cwd: dir,
      idleSessionMs: 40,
      onSessionClosed: (id) => {
        closed.push(id);
        waiters.get(id)?.();
      },
    });
    server = await startChatServer({ handler });
    const transport = new DefaultChatTransport<UIMessage>({ api: `${server.url}/api/chat`, headers: { authorization: `Bearer ${TOKEN}` } });
    const send = (chatId: string, text: string) => transport.sendMessages({ chatId, messages: [userMessage(text)], trigger: "submit-message", messageId: undefined, abortSignal: undefined }).then(readChunks);

    // "own" is the first session used: the harness is made with it as its own session. Its run, then "other"'s, are held at the tool.
    const ownReply = send("own", "read own.txt");
    await gates.get("own.txt")!.entered;
    expect(harnesses.map((harness) => harness.id)).toEqual(["own"]);
    const otherReply = send("other", "read other.txt");
    await gates.get("other.txt")!.entered;
    gates.get("own.txt")!.release();
    await ownReply;
    // "own" is idle now, but "other" is open (running): only "quick" is closed, though "own" was idle longer.
    const quickClosed = closedOnce("quick");
    await send("quick", "quick question");
    await quickClosed;
    expect(closed).toEqual(["quick"]);
    // Once "other" is done and closed, "own" is the last one open: it is closed, by closing the harness.
    const ownClosed = closedOnce("own");
    gates.get("other.txt")!.release();
    await otherReply;
    await ownClosed;
    expect(closed).toEqual(["quick", "other", "own"]);
    await expect(harnesses[0]!.openSession("other")).rejects.toThrow(/closed/);

    // The next request makes a new harness (its own session is the one asked for); the model sees the first exchange.
    const second = (await messageOf(await send("own", "second question")))!;
    expect(second.parts.filter((part) => part.type === "text")).toMatchObject([{ text: "Second answer." }]);
    expect(harnesses.map((harness) => harness.id)).toEqual(["own", "own"]);
    const request = model.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    expect(request.messages.filter((message) => message.role === "user").map((message) => JSON.stringify(message.content))).toEqual([expect.stringContaining("read own.txt"), expect.stringContaining("second question")]);
    expect(request.messages.filter((message) => message.role === "tool").map((message) => JSON.stringify(message.content))).toEqual([expect.stringContaining("contents of own.txt")]);
    await harnesses[1]!.close();
  }, 60_000);
});
