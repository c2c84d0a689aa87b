/**
 * A session deleted by another process (`repository.delete` on the test's own connection to the log) while a replica runs it: two real
 * `arbor serve` processes on one log (a PostgreSQL schema; one SQLite file). Replica A answers the chat `POST`, replica B follows the run
 * (`GET /api/chat/:id/stream`). Both bodies end with a `SESSION_DELETED` error chunk, `finish` and `[DONE]`, and once the model lets the
 * rest of its reply go, the session's stream is still empty: replica A wrote nothing after the delete.
 */
import type { UIMessageChunk } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { call, postPrompt, startFleet, waitForSessionEvent, type Backend, type Fleet } from "./replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const REPLY = "One replica writes this reply while another process deletes the session under it.";
const schema = useTestSchemas("delrun");

/** The `data:` payloads of an SSE body, read to its end. */
async function dataFrames(response: Response): Promise<string[]> {
  return (await response.text())
    .split("\n\n")
    .map((frame) => frame.trim())
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => frame.slice("data: ".length));
}

describe.each([["PostgreSQL"], ["SQLite"]])("a session another process deletes while a replica runs it (%s)", (name) => {
  let gated: GatedModelServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    if (gated && gated.requestCount() > 0) gated.release(0);
    await fleet?.close();
    await gated?.close();
  });

  it("ends the running chat and its follower on another replica with SESSION_DELETED; nothing is written after the delete", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: REPLY, chunkSize: 8 });
    const backend: Backend = name === "PostgreSQL" ? { kind: "pg", schema: schema() } : { kind: "sqlite" };
    fleet = await startFleet(backend, gated.url);
    const [a, b] = fleet.replicas;

    const running = postPrompt(a.url, "doomed", "write the reply", AbortSignal.timeout(30_000));
    await gated.waitForRequests(1);
    gated.release(0, 3);
    await waitForSessionEvent(fleet.log, "doomed", (event) => event.type === "message.delta");
    const following = await call(b.url, "/api/chat/doomed/stream", { signal: AbortSignal.timeout(30_000) });
    expect(following.status).toBe(200);

    await createSessionRepository({ log: fleet.log }).delete("doomed");
    for (const response of [await running, following]) {
      expect(response.status).toBe(200);
      const data = await dataFrames(response);
      expect(data.at(-1)).toBe("[DONE]");
      const chunks = data.slice(0, -1).map((frame) => JSON.parse(frame) as UIMessageChunk);
      expect(chunks.slice(-2)).toEqual([
        { type: "error", errorText: expect.stringMatching(/^SESSION_DELETED: Session "doomed" was deleted/) as unknown },
        { type: "finish", finishReason: "error" },
      ]);
    }

    gated.release(0);
    // Replica A stops the run at the tombstone; until its stale copy is idle a prompt there answers 404, or 409 while the stopped run still holds
    // the session (retry in a moment), then it starts the session of that id anew. Its log holding only the new prompt shows the stopped run
    // wrote nothing after the delete.
    gated.script({ text: "A new chat of the same id." });
    const promptAgain = async (): Promise<Response> => {
      for (let attempt = 1; ; attempt++) {
        const response = await postPrompt(a.url, "doomed", "start again", AbortSignal.timeout(30_000));
        if ((response.status !== 404 && response.status !== 409) || attempt === 100) return response;
        expect(await response.json()).toMatchObject({ error: { code: response.status === 404 ? "SESSION_NOT_FOUND" : "SESSION_BUSY" } });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const again = promptAgain();
    // A prompt answered before it reached the model fails here with its answer, instead of waiting for a request that never comes.
    const model = gated;
    const early = await Promise.race([model.waitForRequests(2).then(() => undefined), again.then((response) => (response.status === 200 ? model.waitForRequests(2).then(() => undefined) : response))]);
    if (early) throw new Error(`the new prompt was answered ${early.status} before it reached the model: ${await early.text()}`);
    gated.release(1);
    const fresh = await again;
    expect(fresh.status).toBe(200);
    expect((await dataFrames(fresh)).at(-1)).toBe("[DONE]");
    const events = await fleet.log.readStream("session-doomed");
    const prompts = events.filter((event) => event.type === "entry.appended" && (event.data as { entry: { message?: { role: string } } }).entry.message?.role === "user");
    expect(prompts.map((event) => (event.data as { entry: { message: { content: unknown } } }).entry.message.content)).toEqual(["start again"]);
    expect((await fleet.log.readStream("tombstone-doomed")).map((event) => event.type)).toEqual(["session.deleted"]);
  }, 120_000);
});
