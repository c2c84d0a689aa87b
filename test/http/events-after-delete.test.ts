/**
 * `GET /api/sessions/:id/events` of a session that is deleted while the stream is open: the stream ends with an `error` event naming the delete
 * (`SESSION_DELETED`), and never carries a session created afterwards with the same id, of another tenant or the same one, however fast it is
 * written after the delete. Through the HTTP service with two tenants (delete by route and by the library), and through the route's function with
 * the delete and the new session written back to back. Real SQLite files, a loopback model.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer } from "../../src/http/node-adapter.ts";
import { sessionEvents } from "../../src/http/session-routes.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse } from "../../src/testing/index.ts";

const TOKENS: Record<string, string> = { "Bearer token-a": "tenant-a", "Bearer token-b": "tenant-b" };

/** Reads an SSE body as it comes; `until` resolves once a frame contains `text`, `rest` once the body ends (a hang fails within `ms`). */
function sse(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const more = async (): Promise<boolean> => {
    const { done, value } = await reader.read();
    if (done) return false;
    text += value;
    return true;
  };
  return {
    text: () => text,
    async until(part: string): Promise<void> {
      while (!text.includes(part)) if (!(await more())) throw new Error(`The stream ended first: ${text.slice(-400)}`);
    },
    async rest(ms: number): Promise<string> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`The events stream did not end within ${ms} ms of the delete`)), ms)));
      try {
        await Promise.race([(async () => { while (await more()); })(), late]);
      } finally {
        clearTimeout(timer);
      }
      return text;
    },
  };
}

describe("the events stream of a deleted session", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const service = async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-events-delete-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const model = await startOpenAIServer({ respond: (request) => textResponse(JSON.stringify(request.body).includes("SECRET-OF-B") ? "B-ONLY-REPLY" : "reply to A") });
    cleanups.push(() => model.close());
    const harness = await createHarness({ eventLogPath: join(dir, "arbor.db"), cwd: dir, models: { main: { model: createOpenAIModel({ modelId: "m", baseURL: model.url, apiKey: "x", api: "chat" }) } } });
    cleanups.push(() => harness.close());
    const server = await startChatServer({ handler: createChatHandler({ harness, cwd: dir, authenticate: (request: Request) => TOKENS[request.headers.get("authorization") ?? ""] }) });
    cleanups.push(() => server.close());
    const call = (token: string, path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}`, "content-type": "application/json" } });
    const chat = async (token: string, text: string) => {
      const response = await call(token, "/api/chat", { method: "POST", body: JSON.stringify({ id: "shared", trigger: "submit-message", messages: [{ id: `u-${text}`, role: "user", parts: [{ type: "text", text }] }] }) });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('"finish"');
    };
    return { harness, call, chat };
  };

  for (const deleter of ["the DELETE route", "the library"] as const) {
    it(`ends at a delete by ${deleter}, with SESSION_DELETED, and never carries another tenant's new session of the same id`, async () => {
      const { harness, call, chat } = await service();
      await chat("token-a", "hello from A");
      const events = sse(await call("token-a", "/api/sessions/shared/events?from=0"));
      await events.until('"run.ended"');
      if (deleter === "the library") await harness.repository!.delete("shared");
      else expect((await call("token-a", "/api/sessions/shared", { method: "DELETE" })).status).toBe(200);
      const received = await events.rest(10_000);
      expect(received).toMatch(/event: error\ndata: \{"message":"SESSION_DELETED: Session \\"shared\\" was deleted/);
      // Tenant B takes the id: A's stream is over, and a new one of A's is refused.
      await chat("token-b", "SECRET-OF-B");
      expect(received).not.toMatch(/SECRET-OF-B|B-ONLY-REPLY|tenant-b/);
      expect((await call("token-a", "/api/sessions/shared/events?from=0")).status).toBe(404);
    }, 60_000);
  }

  it("ends at the tombstone even when a new session of the id is written right after the delete, before the stream reads again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-events-race-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const log = createSqliteEventLog({ path: join(dir, "arbor.db") });
    cleanups.push(() => log.close());
    const repository = createSessionRepository({ log });
    const first = await repository.create({ id: "race", cwd: dir, tenant: "tenant-a" });
    for (let index = 0; index < 3; index++) await first.appendEntry({ type: "message", message: { role: "user", content: `A-${index}`, timestamp: index } } as never);
    const events = sse(sessionEvents(log, "race", "tenant-a", new Request("http://x/api/sessions/race/events?from=0")));
    await events.until("A-2");
    // The delete and another tenant's new session with more entries than A's, back to back.
    await repository.delete("race");
    const second = await repository.create({ id: "race", cwd: dir, tenant: "tenant-b" });
    for (let index = 0; index < 8; index++) await second.appendEntry({ type: "message", message: { role: "user", content: `SECRET-B-${index}`, timestamp: index } } as never);
    const received = await events.rest(10_000);
    expect(received).toContain("SESSION_DELETED");
    expect(received).not.toMatch(/SECRET-B|tenant-b/);
    // The route refuses a stream whose session is no longer the caller's.
    const late = await sse(sessionEvents(log, "race", "tenant-a", new Request("http://x/api/sessions/race/events?from=0"))).rest(10_000);
    expect(late).toContain("SESSION_DELETED");
    expect(late).not.toMatch(/SECRET-B/);
  });
});
