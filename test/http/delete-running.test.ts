/**
 * A session deleted through the library (`harness.repository.delete`) by the program that serves it over HTTP, while a chat `POST` of that
 * session streams: the response body ends, bounded, with an `error` chunk naming the deletion (`SESSION_DELETED`), `finish` and `[DONE]`; the
 * run stops (also with its model reply still held back) and nothing of the session is written after the delete (only the tombstone stays). A
 * prompt to the same id afterwards starts a new chat, also after a delete of a session the service held open and idle. Real SQLite file, real
 * handler on a loopback port, a gated loopback model.
 */
import type { UIMessageChunk } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessSession } from "../../src/harness/harness-session-types.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { sessionEvents, startService, TOKEN, userMessage, type Service } from "./service.ts";

const REPLY = "This reply is cut short by a delete of its session, made by the program that serves it.";

/** `POST /api/chat` with one prompt; the body read fails after `timeoutMs` (a hang is a failure, not a stuck test). */
function postChat(service: Service, id: string, text: string, timeoutMs: number): Promise<Response> {
  return fetch(`${service.url}/api/chat`, {
    method: "POST",
    signal: AbortSignal.timeout(timeoutMs),
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ id, trigger: "submit-message", messages: [userMessage(text)] }),
  });
}

/** Reads SSE frames of `response` (`data:` payloads) as they come: `until` resolves once one matches, `rest` with the remaining ones. */
function frames(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const seen: string[] = [];
  let pending = "";
  const more = async (): Promise<boolean> => {
    const { done, value } = await reader.read();
    if (done) return false;
    pending += value;
    const parts = pending.split("\n\n");
    pending = parts.pop()!;
    for (const frame of parts) if (frame.startsWith("data: ")) seen.push(frame.slice("data: ".length));
    return true;
  };
  return {
    seen,
    async until(predicate: (data: string) => boolean): Promise<void> {
      while (!seen.some(predicate)) if (!(await more())) throw new Error(`The body ended first: ${seen.join(" | ")}`);
    },
    async rest(): Promise<string[]> {
      while (await more());
      return seen;
    },
  };
}

/** `promise`, or a rejection naming `what` after `ms`: a hang fails the test with a reason. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const chunksOf = (data: string[]) => data.filter((frame) => frame !== "[DONE]").map((frame) => JSON.parse(frame) as UIMessageChunk);

describe("a session deleted in-process while its chat streams", () => {
  let gated: GatedModelServer | undefined;
  let service: Service | undefined;
  afterEach(async () => {
    for (let index = 0; index < (gated?.requestCount() ?? 0); index += 1) gated!.release(index);
    await service?.close();
    await gated?.close();
    service = gated = undefined;
  });

  /** Starts the chat of "doomed" and waits for its first text delta; `live` is the session the service runs it in. */
  const streaming = async () => {
    gated = await startGatedModelServer();
    gated.script({ text: REPLY, chunkSize: 8 }, { text: "A new chat of the same id." });
    service = await startService({ modelUrl: gated.url });
    const response = await postChat(service, "doomed", "write a long reply", 20_000);
    expect(response.status).toBe(200);
    const body = frames(response);
    await gated.waitForRequests(1);
    gated.release(0, 3);
    await body.until((data) => data.includes('"text-delta"'));
    const live: HarnessSession = await service.harness.openSession("doomed");
    return { body, live };
  };

  const expectEndedByDelete = (data: string[]) => {
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = chunksOf(data);
    const errors = chunks.filter((chunk) => chunk.type === "error");
    expect(errors).toHaveLength(1);
    expect((errors[0] as { errorText: string }).errorText).toMatch(/^SESSION_DELETED: Session "doomed" was deleted/);
    expect(chunks.slice(-2).map((chunk) => chunk.type)).toEqual(["error", "finish"]);
    expect(chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "error" });
    // The text part the run had opened is closed before the error.
    const textId = (chunks.find((chunk) => chunk.type === "text-start") as { id: string }).id;
    expect(chunks).toContainEqual({ type: "text-end", id: textId });
  };

  it("ends the body with a SESSION_DELETED error, finish and [DONE]; nothing more is written; the id then starts a new chat", async () => {
    const { body, live } = await streaming();

    await service!.harness.repository!.delete("doomed");
    gated!.release(0);
    expectEndedByDelete(await body.rest());

    // The run is over and wrote nothing after the delete: the log holds the tombstone only.
    await within(10_000, "the run's end", live.waitForIdle());
    expect(live.getState().operation).toBe("idle");
    expect(await sessionEvents(service!.log, "doomed")).toEqual([]);
    expect((await service!.log.readStream("tombstone-doomed")).map((event) => event.type)).toEqual(["session.deleted"]);

    // A new prompt to the same id starts a new chat, which finishes.
    const again = postChat(service!, "doomed", "start again", 20_000).then(async (response) => ({ status: response.status, chunks: chunksOf(await frames(response).rest()) }));
    await gated!.waitForRequests(2);
    gated!.release(1);
    const { status, chunks } = await again;
    expect(status).toBe(200);
    expect(chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });
    const events = await sessionEvents(service!.log, "doomed");
    expect(events[0].type).toBe("session.created");
    expect(events.filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status)).toEqual(["done"]);
  }, 60_000);

  it("ends the body and the run at the delete, while the model still holds its reply back", async () => {
    const { body, live } = await streaming();

    await service!.harness.repository!.delete("doomed");
    expectEndedByDelete(await body.rest());
    await within(10_000, "the run's end at the delete (the model holds its reply back)", live.waitForIdle());
    expect(live.getState().operation).toBe("idle");
    expect(await sessionEvents(service!.log, "doomed")).toEqual([]);
  }, 60_000);

  it("a prompt to a session deleted just before, while the service held it open and idle, starts a new chat", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: "First answer." }, { text: "Second answer, in a new chat." });
    service = await startService({ modelUrl: gated.url });
    const answer = async (text: string, index: number) => {
      const response = postChat(service!, "doomed", text, 20_000);
      await gated!.waitForRequests(index + 1);
      gated!.release(index);
      const settled = await response;
      return { status: settled.status, chunks: chunksOf(await frames(settled).rest()) };
    };
    expect((await answer("first question", 0)).chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });

    await service.harness.repository!.delete("doomed");
    const again = await answer("second question", 1);
    expect(again.status).toBe(200);
    expect(again.chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });
    const events = await sessionEvents(service.log, "doomed");
    const prompts = events.filter((event) => event.type === "entry.appended" && (event.data as { entry: { message?: { role: string } } }).entry.message?.role === "user");
    expect(prompts.map((event) => (event.data as { entry: { message: { content: unknown } } }).entry.message.content)).toEqual(["second question"]);
  }, 60_000);
});
