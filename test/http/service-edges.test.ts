/**
 * Edges of the HTTP service found by probing it as a client would, each over real HTTP (the
 * handler on loopback, a real harness on a SQLite file, the loopback model server):
 * a malformed percent-encoded path is a 400 (not a 500), `GET /api/chat/<new id>/stream` answers
 * 204 (so `useChat({ resume: true })` can start a new chat), request bodies have a size limit (413
 * JSON), and sessions can be deleted and forked over HTTP, tenant-scoped and audited.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { sessionEvents, startService, TOKEN, userMessage, type Service } from "./service.ts";

const auth = { authorization: `Bearer ${TOKEN}` };

describe("HTTP service edges", () => {
  let service: Service | undefined;
  let model: OpenAIServer | undefined;
  afterEach(async () => {
    await service?.close();
    await model?.close();
    service = undefined;
    model = undefined;
  });

  it("answers 400 naming the path for malformed percent-encoding, on every route", async () => {
    model = await startOpenAIServer();
    service = await startService({ modelUrl: model.url });
    for (const [method, path] of [
      ["GET", "/api/sessions/%E0%A4%A"],
      ["GET", "/api/sessions/%E0%A4%A/events"],
      ["GET", "/api/chat/%ZZ/stream"],
      ["POST", "/api/chat/%E0%A4%A/stop"],
      ["DELETE", "/api/sessions/%E0%A4%A"],
    ]) {
      const response = await fetch(`${service.url}${path}`, { method, headers: auth });
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect({ path, status: response.status, code: body.error.code }).toEqual({ path, status: 400, code: "INVALID_ARGUMENT" });
      expect(body.error.message).toContain("percent-encoding");
    }
  });

  it("refuses an unknown trigger with 400 naming the field, and writes nothing", async () => {
    model = await startOpenAIServer();
    service = await startService({ modelUrl: model.url });
    const head = await service.log.headPosition();
    const response = await fetch(`${service.url}/api/chat`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ id: "bogus-trigger", messages: [userMessage("hello")], trigger: "bogus" }),
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect({ status: response.status, code: body.error.code }).toEqual({ status: 400, code: "INVALID_ARGUMENT" });
    expect(body.error.message).toContain('"trigger"');
    expect(await service.log.headPosition()).toBe(head);
    expect(model.requests).toHaveLength(0);
  });

  it("GET /api/chat/<new id>/stream answers 204, as the ai client's resume expects, for a new chat and another tenant's", async () => {
    model = await startOpenAIServer();
    service = await startService({ modelUrl: model.url });
    await service.harness.repository!.create({ id: "acme-chat", cwd: "/tmp", tenant: "acme" });
    const head = await service.log.headPosition();
    for (const id of ["brand-new-chat", "acme-chat"]) {
      const response = await fetch(`${service.url}/api/chat/${id}/stream`, { headers: auth });
      expect({ id, status: response.status }).toEqual({ id, status: 204 });
      // What useChat({ resume: true }) calls on mount: null means "nothing to resume", not an error.
      expect(await service.transport().reconnectToStream({ chatId: id })).toBeNull();
    }
    expect(await service.log.headPosition()).toBe(head);
  });

  it("applies the body limit to the steer and elicitation-answer routes too", async () => {
    model = await startOpenAIServer();
    service = await startService({ modelUrl: model.url, handler: { maxBodyBytes: 2_000 } });
    await service.harness.repository!.create({ id: "limits", cwd: "/tmp" });
    const over = JSON.stringify({ text: "z".repeat(2_100), action: "accept", content: { name: "z".repeat(2_100) } });
    for (const path of ["/api/chat/limits/steer", "/api/sessions/limits/elicitations/el_1"]) {
      const response = await fetch(`${service.url}${path}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: over });
      expect({ path, status: response.status }).toEqual({ path, status: 413 });
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("BODY_TOO_LARGE");
    }
  });

  it("refuses a body over the limit with 413 JSON before reading it, by default 10 MiB and as configured", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("ok"));
    service = await startService({ modelUrl: model.url });
    const big = JSON.stringify({ id: "big", messages: [userMessage("x".repeat(10 * 1024 * 1024 + 16))], trigger: "submit-message" });
    const response = await fetch(`${service.url}/api/chat`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: big });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string; message: string } }).error).toEqual({ code: "BODY_TOO_LARGE", message: expect.stringContaining("10485760 bytes") });
    // A body streamed without a Content-Length is counted as it arrives.
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let index = 0; index < 12; index++) controller.enqueue(new TextEncoder().encode(big.slice(index * 1024 * 1024, (index + 1) * 1024 * 1024)));
        controller.close();
      },
    });
    const streamed = await fetch(`${service.url}/api/chat`, { method: "POST", headers: auth, body: chunked, duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(await sessionEvents(service.log, "big")).toEqual([]);
    expect(model.requests).toEqual([]);
    await service.close();

    service = await startService({ modelUrl: model.url, handler: { maxBodyBytes: 2_000 } });
    const small = JSON.stringify({ id: "small", messages: [userMessage("hello")], trigger: "submit-message" });
    expect((await fetch(`${service.url}/api/chat`, { method: "POST", headers: auth, body: small })).status).toBe(200);
    const over = JSON.stringify({ id: "small", messages: [userMessage("y".repeat(2_100))], trigger: "submit-message" });
    expect((await fetch(`${service.url}/api/chat`, { method: "POST", headers: auth, body: over })).status).toBe(413);
  });

  it("deletes and forks sessions over HTTP: tenant-scoped and audited", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("first answer"), textResponse("second answer"), textResponse("third answer"));
    service = await startService({ modelUrl: model.url });
    const post = (id: string, text: string) => fetch(`${service!.url}/api/chat`, { method: "POST", headers: auth, body: JSON.stringify({ id, messages: [userMessage(text)], trigger: "submit-message" }) });
    await (await post("keep-me", "hello")).text();
    await (await post("doomed", "secret marker text")).text();
    const other = await service.harness.repository!.create({ id: "acme-chat", cwd: "/tmp", tenant: "acme" });
    const otherHead = (await sessionEvents(service.log, other.id)).length;

    // Another tenant's (or an unknown) session: 404, nothing written.
    for (const id of [other.id, "no-such"]) {
      expect((await fetch(`${service.url}/api/sessions/${id}`, { method: "DELETE", headers: auth })).status).toBe(404);
      expect((await fetch(`${service.url}/api/sessions/${id}/fork`, { method: "POST", headers: auth })).status).toBe(404);
    }
    expect((await sessionEvents(service.log, other.id)).length).toBe(otherHead);

    // Fork: a new session of the same tenant, recording its parent.
    const forked = await fetch(`${service.url}/api/sessions/keep-me/fork`, { method: "POST", headers: auth, body: JSON.stringify({ id: "keep-me-2" }) });
    expect(forked.status).toBe(201);
    expect(await forked.json()).toMatchObject({ id: "keep-me-2", parentSessionId: "keep-me", parentEntryId: expect.any(String) });
    const [created] = await sessionEvents(service.log, "keep-me-2");
    expect(created).toMatchObject({ type: "session.created", data: { parentSessionId: "keep-me", tenant: "default" } });
    expect((await fetch(`${service.url}/api/sessions/keep-me/fork`, { method: "POST", headers: auth, body: JSON.stringify({ id: "keep-me-2" }) })).status).toBe(409);
    expect((await fetch(`${service.url}/api/sessions/keep-me/fork`, { method: "POST", headers: auth, body: JSON.stringify({ entryId: "nope" }) })).status).toBe(404);
    expect((await fetch(`${service.url}/api/sessions/keep-me/fork`, { method: "POST", headers: auth, body: JSON.stringify({ bogus: 1 }) })).status).toBe(400);

    // Delete: the session (open in the service) is closed, its events removed, a tombstone kept.
    const deleted = await fetch(`${service.url}/api/sessions/doomed`, { method: "DELETE", headers: auth });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ deleted: "doomed" });
    expect(await sessionEvents(service.log, "doomed")).toEqual([]);
    const all = JSON.stringify(await service.log.readAll());
    expect(all).not.toContain("secret marker text");
    const tombstone = await service.log.readStream("tombstone-doomed");
    expect(tombstone).toMatchObject([{ type: "session.deleted", data: { sessionId: "doomed", tenant: "default" } }]);
    expect((await fetch(`${service.url}/api/sessions/doomed`, { headers: auth })).status).toBe(404);
    const list = (await (await fetch(`${service.url}/api/sessions`, { headers: auth })).json()) as { sessions: { id: string }[] };
    expect(list.sessions.map((row) => row.id)).toEqual(expect.arrayContaining(["keep-me", "keep-me-2"]));
    expect(list.sessions.map((row) => row.id)).not.toContain("doomed");
    // The id can be used again for a new chat.
    await (await post("doomed", "again")).text();
    expect((await sessionEvents(service.log, "doomed"))[0]).toMatchObject({ type: "session.created" });
  });
});
