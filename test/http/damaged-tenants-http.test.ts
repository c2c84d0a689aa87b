/**
 * A damaged session (one bit of a sealed event's ciphertext flipped, so it does not authenticate) over real HTTP on an encrypted SQLite file:
 * another tenant gets on every per-session route exactly the answer of a missing session (status and body, the id aside), whether the damage is in
 * `session.created` or a later event; its owner gets `500 EVENT_CORRUPT`.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer } from "../../src/http/node-adapter.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { flipBitInSealedRecord } from "../privacy/sealed-damage.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-damaged-tenants-http-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TOKENS: Record<string, string> = { "Bearer token-a": "tenant-a", "Bearer token-b": "tenant-b" };

const routes = (id: string): [string, string, unknown?][] => [
  ["GET", `/api/sessions/${id}`],
  ["GET", `/api/sessions/${id}/elicitations`],
  ["DELETE", `/api/sessions/${id}`],
  ["POST", `/api/sessions/${id}/fork`, {}],
  ["POST", `/api/sessions/${id}/elicitations/x1`, { action: "decline" }],
  ["GET", `/api/chat/${id}/stream`],
  ["POST", `/api/chat/${id}/stop`, {}],
  ["POST", `/api/chat/${id}/steer`, { text: "hi" }],
];

it("answers another tenant's routes for a damaged session as for a missing one; the owner gets 500 EVENT_CORRUPT", { timeout: 60_000 }, async () => {
  const path = join(dir, "log.db");
  const key = randomBytes(32);
  const writer = createSqliteEventLog({ path, encryption: { key } });
  for (const id of ["dmg-first", "dmg-later"]) {
    const session = await createSessionRepository({ log: writer, tenant: "tenant-a" }).create({ id, cwd: dir });
    await session.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: `secret of ${id}` }], timestamp: 1_000 } });
  }
  await writer.close();
  flipBitInSealedRecord(path, "session-dmg-first", 1);
  flipBitInSealedRecord(path, "session-dmg-later", 2);

  const log = createSqliteEventLog({ path, encryption: { key } });
  const harness = await createHarness({ eventLog: log, cwd: dir, models: { main: { model: createOpenAIModel({ modelId: "m", baseURL: "http://127.0.0.1:9/v1", apiKey: "x", api: "chat" }) } } });
  const server = await startChatServer({ handler: createChatHandler({ harness, cwd: dir, authenticate: (request: Request) => TOKENS[request.headers.get("authorization") ?? ""], serverLog: () => undefined }) });
  try {
    const call = async (token: string, [method, url, body]: [string, string, unknown?], id: string) => {
      const response = await fetch(`${server.url}${url}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return { status: response.status, body: (await response.text()).split(id).join("<id>") };
    };
    for (const id of ["dmg-first", "dmg-later"]) {
      for (const [index, route] of routes(id).entries()) {
        const missing = `no-such-${index}`;
        const theirs = await call("token-b", route, id);
        expect({ route: route[1], ...theirs }).toEqual({ route: route[1], ...(await call("token-b", routes(missing)[index], missing)) });
        expect(theirs.status === 404 || theirs.status === 204).toBe(true);
      }
      // POST /api/chat with another tenant's id is refused as for any of its sessions.
      const chat = await call("token-b", ["POST", "/api/chat", { id, messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] }] }], id);
      expect(chat).toEqual({ status: 404, body: JSON.stringify({ error: { code: "SESSION_NOT_FOUND", message: 'No session "<id>".' } }) });
      const own = await call("token-a", ["GET", `/api/sessions/${id}`], id);
      expect(own.status).toBe(500);
      expect(JSON.parse(own.body)).toMatchObject({ error: { code: "EVENT_CORRUPT" } });
    }
    expect(await log.streamVersion("session-dmg-first")).toBe(2);
  } finally {
    await server.close();
    await harness.close();
  }
});
