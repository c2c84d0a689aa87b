/**
 * Tenants over HTTP: the cross-tenant matrix for every read and write route of the chat
 * handler. A session of tenant A, with a run in flight, is invisible to tenant B: each route
 * answers B exactly as it answers for a missing session (status and body, the ids aside), and
 * B's requests leave no trace in the log (its head position does not move). A's run is not
 * touched by B's stop.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer, type ChatServer } from "../../src/http/node-adapter.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { startGatedModelServer, type GatedModelServer } from "../http/gated-model-server.ts";
import { waitForEvent } from "../http/service.ts";

const A_SESSION = "tenant-a-chat";
const MISSING = "no-such-chat";
const TOKENS: Record<string, string> = { "token-a": "a", "token-b": "b" };

let dir: string;
let model: GatedModelServer;
let harness: AgentHarness;
let server: ChatServer;
let log: EventLog;

const call = (token: string, method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** Status and body of a response, with `id` replaced by `<id>`. */
async function answerOf(response: Response, id: string) {
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get("content-type"), body: text.split(id).join("<id>") };
}

const userMessage = (text: string) => ({ id: `u-${text.length}`, role: "user", parts: [{ type: "text", text }] });
const approvalAnswer = { id: "m-1", role: "assistant", parts: [{ type: "tool-read", toolCallId: "call_1", state: "approval-responded", input: { path: "a" }, approval: { id: "call_1", approved: true } }] };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "arbor-tenants-http-"));
  model = await startGatedModelServer();
  harness = await createHarness({
    eventLogPath: join(dir, "arbor.db"),
    cwd: dir,
    models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: model.url, apiKey: "test", api: "chat" }) } },
    streamOptions: { maxRetries: 0 },
  });
  log = harness.repository!.log;
  const handler = createChatHandler({ harness, cwd: dir, authenticate: (request) => TOKENS[(request.headers.get("authorization") ?? "").replace(/^Bearer /, "")] });
  server = await startChatServer({ handler });
});
afterAll(async () => {
  await server?.close();
  await harness?.close();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the HTTP routes with two tenants", () => {
  it("answer tenant B for tenant A's session exactly as for a missing one, and write nothing", async () => {
    const harnessOwn = (await log.listStreams()).map((stream) => stream.streamId); // the harness's primary session
    model.script({ text: "hello, tenant a" });
    const first = await call("token-a", "POST", "/api/chat", { id: A_SESSION, messages: [userMessage("hi from a")], trigger: "submit-message" });
    expect(first.status).toBe(200);
    const streamed = first.text();
    await model.waitForRequests(1);
    model.release(0, 2); // A's run is in flight: its message has started
    await waitForEvent(log, A_SESSION, (event) => event.type === "message.delta" || event.type === "message.started");

    const rows: [string, string, string, unknown?][] = [
      ["stream GET", "GET", "/api/chat/<id>/stream"],
      ["stop POST", "POST", "/api/chat/<id>/stop"],
      ["session GET", "GET", "/api/sessions/<id>"],
      ["events SSE", "GET", "/api/sessions/<id>/events?from=0"],
      ["delete", "DELETE", "/api/sessions/<id>"],
      ["fork POST", "POST", "/api/sessions/<id>/fork", { id: "b-fork" }],
      ["approvals POST", "POST", "/api/chat", { id: "<id>", messages: [userMessage("read a"), approvalAnswer], trigger: "submit-message" }],
    ];
    const head = await log.headPosition();
    for (const [label, method, path, body] of rows) {
      const as = (token: string, id: string) => call(token, method, path.replace("<id>", id), body === undefined ? undefined : JSON.parse(JSON.stringify(body).replace("<id>", id)));
      const wrong = await answerOf(await as("token-b", A_SESSION), A_SESSION);
      const missing = await answerOf(await as("token-b", MISSING), MISSING);
      // A resume of a session that is not the caller's is "nothing to resume", as for a new chat.
      expect(wrong.status, label).toBe(label === "stream GET" ? 204 : 404);
      expect(wrong, label).toEqual(missing);
      // A itself reaches it (the row tests the tenant, not the route).
      if (method === "GET") {
        const own = await as("token-a", A_SESSION);
        expect(own.status, label).toBe(200);
        await own.body?.cancel();
      }
    }
    // A prompt from B into A's session is refused before anything is written.
    const prompt = await call("token-b", "POST", "/api/chat", { id: A_SESSION, messages: [userMessage("hi from b")], trigger: "submit-message" });
    expect(await answerOf(prompt, A_SESSION)).toEqual({ status: 404, contentType: "application/json; charset=utf-8", body: JSON.stringify({ error: { code: "SESSION_NOT_FOUND", message: 'No session "<id>".' } }) });
    // The list shows B none of A's sessions; A sees its own.
    const listB = (await (await call("token-b", "GET", "/api/sessions")).json()) as { sessions: { id: string }[] };
    expect(listB.sessions).toEqual([]);
    // A's run keeps writing meanwhile; B's requests must have written nothing anywhere.
    const since = await log.readAll({ fromPosition: head });
    expect([...new Set(since.map((event) => event.streamId))], "no stream but A's was written").toEqual(since.length ? [`session-${A_SESSION}`] : []);
    expect(model.requestCount(), "no model call for B").toBe(1);

    // A's run went on untouched by B's stop, and ends as A's.
    model.release(0);
    expect(await streamed).toContain('"type":"finish"');
    const ended = (await log.readStream(`session-${A_SESSION}`)).filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status);
    expect(ended).toEqual(["done"]);
    const listA = (await (await call("token-a", "GET", "/api/sessions")).json()) as { sessions: { id: string; tenant: string }[] };
    expect(listA.sessions.map((row) => [row.id, row.tenant])).toEqual([[A_SESSION, "a"]]);
    // B's own session of the same kind works (the routes are not simply closed to B).
    model.script({ text: "hello, tenant b" });
    const own = await call("token-b", "POST", "/api/chat", { id: "tenant-b-chat", messages: [userMessage("hi from b")], trigger: "submit-message" });
    expect(own.status).toBe(200);
    await model.waitForRequests(2);
    model.release(1);
    await own.text();
    expect(((await (await call("token-b", "GET", "/api/sessions")).json()) as { sessions: { id: string }[] }).sessions.map((row) => row.id)).toEqual(["tenant-b-chat"]);
    // A's session holds exactly what an undisturbed run writes: the same events as B's own one
    // (how many deltas a text takes depends on how the frames were let through).
    const shape = async (id: string) => (await log.readStream(`session-${id}`)).map((event) => event.type).filter((type, at, all) => type !== "message.delta" || all[at - 1] !== type);
    expect(await shape(A_SESSION)).toEqual(await shape("tenant-b-chat"));
    expect((await log.listStreams()).map((stream) => stream.streamId).sort()).toEqual([...harnessOwn, `session-${A_SESSION}`, "session-tenant-b-chat"].sort());
  });
});
