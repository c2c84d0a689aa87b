/**
 * A reconnect at any point of a run rebuilds exactly the message an uninterrupted client saw.
 * The model's frames and the tools are held by the test, so each reconnect happens at a known
 * point of the log (waited for through the log itself, never by time).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { UIMessage, UIMessageChunk } from "ai";
import { splitText } from "../../src/testing/openai-wire.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { messageOf, readChunks, startService, TOKEN, userMessage, waitForEvent, type Service } from "./service.ts";

const FIRST = "Let me read both files now.";
const SECOND = "Both files are read, all done.";
const CALLS = [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }, { id: "call_2", name: "read", arguments: { path: "b.txt" } }];

const deltas = (all: StoredEvent[], kind: string, toolCallId?: string) =>
  all
    .filter((event) => event.type === "message.delta" && (event.data as any).kind === kind && (toolCallId === undefined || (event.data as any).toolCallId === toolCallId))
    .map((event) => (event.data as any).delta as string)
    .join("");

describe("reconnect points", () => {
  let service: Service | undefined;
  let gated: GatedModelServer | undefined;
  afterEach(async () => {
    await service?.close();
    await gated?.close();
  });

  it("a reconnect at each of 10 points of a run rebuilds the uninterrupted client's message, no part duplicated or merged", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: FIRST, toolCalls: CALLS, chunkSize: 5 }, { text: SECOND, chunkSize: 5 });
    const gates = new Map<string, () => void>();
    const opened = new Map<string, Promise<void>>();
    for (const path of ["a.txt", "b.txt"]) opened.set(path, new Promise<void>((resolve) => gates.set(path, resolve)));
    service = await startService({ modelUrl: gated.url, toolGate: (path) => opened.get(path)! });
    const id = "points";
    const log = service.log;
    const until = (predicate: (event: StoredEvent, all: StoredEvent[]) => boolean) => waitForEvent(log, id, predicate);

    const reference = readChunks(await service.transport().sendMessages({ chatId: id, messages: [userMessage("read both")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    const resumes: { point: string; chunks: Promise<UIMessageChunk[] | null> }[] = [];
    const reconnect = async (point: string) => {
      const stream = await service!.transport().reconnectToStream({ chatId: id });
      resumes.push({ point, chunks: stream ? readChunks(stream) : Promise.resolve(null) });
    };

    await gated.waitForRequests(1);
    await reconnect("before the first delta");
    const text1 = splitText(FIRST, 5);
    gated.release(0, 2); // the role frame and the first text piece
    await until((_, all) => deltas(all, "text") === text1[0]);
    await reconnect("mid text");
    gated.release(0, 1);
    await until((_, all) => deltas(all, "text") === text1[0] + text1[1]);
    await reconnect("mid text, later");
    gated.release(0, text1.length - 2 + 2); // the rest of the text, call_1's header and first arguments piece
    await until((_, all) => deltas(all, "toolCall", "call_1") !== "");
    await reconnect("mid tool input");
    const args1 = splitText(JSON.stringify(CALLS[0].arguments), 5);
    gated.release(0, args1.length - 1 + 2); // the rest of call_1, call_2's header and first piece
    await until((_, all) => deltas(all, "toolCall", "call_2") !== "");
    await reconnect("mid second tool input");
    gated.release(0); // the rest of the first response
    await until((event) => event.type === "tool.started" && (event.data as any).toolCallId === "call_2");
    await reconnect("tools running, no result yet");
    gates.get("a.txt")!();
    await until((event) => event.type === "tool.ended" && (event.data as any).toolCallId === "call_1");
    await reconnect("between the two tool results");
    gates.get("b.txt")!();
    await gated.waitForRequests(2);
    await reconnect("between the tool results and the next step");
    gated.release(1, 2);
    await until((_, all) => deltas(all, "text").endsWith(splitText(SECOND, 5)[0]));
    await reconnect("mid text of the second step");
    gated.release(1);
    await until((event) => event.type === "run.ended");
    await reconnect("after finish");

    const expected = await messageOf(await reference);
    expect(expected?.parts.map((part) => part.type)).toEqual(["step-start", "text", "tool-read", "tool-read", "step-start", "text"]);
    expect(resumes).toHaveLength(10);
    for (const { point, chunks } of resumes) {
      const got = await chunks;
      if (point === "after finish") {
        // Nothing to resume (204); the page's history from the log is the same message.
        expect(got).toBeNull();
        const detail = (await (await fetch(`${service.url}/api/sessions/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { messages: UIMessage[] };
        expect({ point, message: detail.messages.at(-1) }).toEqual({ point, message: expected });
        continue;
      }
      expect({ point, message: await messageOf(got!) }).toEqual({ point, message: expected });
      const starts = got!.filter((chunk) => chunk.type === "text-start" || chunk.type === "tool-input-start").map((chunk) => ("id" in chunk ? chunk.id : chunk.toolCallId));
      expect({ point, starts: new Set(starts).size }).toEqual({ point, starts: starts.length });
      expect({ point, first: got![0].type, last: got!.at(-1)!.type }).toEqual({ point, first: "start", last: "finish" });
    }
  });
});
