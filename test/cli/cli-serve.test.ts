import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { existsSync } from "node:fs";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { ensureInspectorBuilt } from "../http/inspector-build.ts";
import { runArbor, serveArbor as serve, tempDir } from "./cli-helpers.ts";

describe("arbor serve", () => {
  let model: OpenAIServer | undefined;
  beforeAll(ensureInspectorBuilt, 120_000);
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });

  it("refuses a non-loopback host without a token, before opening anything", async () => {
    const dir = tempDir();
    const result = await runArbor(["--db", join(dir, "arbor.db"), "serve", "--host", "0.0.0.0", "--port", "0"], { env: { ARBOR_TOKEN: "" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Refusing to serve on 0\.0\.0\.0 without a token.*--token or set ARBOR_TOKEN/);
  });

  it("serves useChat over the CLI's configuration: a DefaultChatTransport prompt streams the reply; SIGTERM stops it", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("Hello from arbor serve."));
    const dir = tempDir();
    const server = serve(["--db", join(dir, "arbor.db"), "--port", "0", "--cwd", dir, "--model", "openai:gpt-test", "--base-url", model.url], { OPENAI_API_KEY: "sk-test", ARBOR_TOKEN: "cli-token" });
    const url = await server.ready;
    expect((await fetch(`${url}/api/sessions`)).status).toBe(401);
    // The inspector's built page and its script, with no token (they hold no data).
    const page = await fetch(`${url}/inspector`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<body data-base="/api">');
    expect((await fetch(`${url}/inspector/assets/inspector.js`)).headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    // Nothing is created at start: no empty session in the log.
    expect(await (await fetch(`${url}/api/sessions`, { headers: { authorization: "Bearer cli-token" } })).json()).toEqual({ sessions: [] });
    const transport = new DefaultChatTransport<UIMessage>({ api: `${url}/api/chat`, headers: { authorization: "Bearer cli-token" } });
    const stream = await transport.sendMessages({ chatId: "cli-chat", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }], trigger: "submit-message", messageId: undefined, abortSignal: undefined });
    let message: UIMessage | undefined;
    for await (const snapshot of readUIMessageStream({ stream })) message = snapshot;
    expect(message?.parts.filter((part) => part.type === "text")).toEqual([{ type: "text", text: "Hello from arbor serve.", state: "done" }]);
    const list: { sessions: { id: string }[] } = (await (await fetch(`${url}/api/sessions`, { headers: { authorization: "Bearer cli-token" } })).json()) as never;
    expect(list.sessions.map((row) => row.id)).toEqual(["cli-chat"]);
    // The inspector's live machine states: the session's agent, back to idle, and its run, done.
    const machines = await fetch(`${url}/api/sessions/cli-chat/machines`, { headers: { authorization: "Bearer cli-token" } });
    expect(machines.headers.get("content-type")).toBe("text/event-stream");
    const reader = machines.body!.pipeThrough(new TextDecoderStream()).getReader();
    let frames = "";
    while (!/"machine":"run".*\n\n/.test(frames) || !/"machine":"agent".*\n\n/.test(frames)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the machines stream ended early: ${frames}`);
      frames += value;
    }
    await reader.cancel();
    const records = frames.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)) as { machine: string; state: string; sessionId: string });
    expect(records.map((record) => [record.machine, record.state])).toEqual(expect.arrayContaining([["agent", "idle"], ["run", "done"]]));
    expect(new Set(records.map((record) => record.sessionId))).toEqual(new Set(["cli-chat"]));
    server.child().kill("SIGTERM");
    const result = await server.exited;
    expect(result.code).toBe(0);
    expect(JSON.stringify(model.requests)).not.toContain("cli-token");
  });

  it("--approve bash: a bash call waits for a decision (a tool-approval-request part), nothing of it runs, and arbor approvals lists it", async () => {
    model = await startOpenAIServer();
    const dir = tempDir();
    const marker = join(dir, "ran.txt");
    model.script(toolCallResponse([{ id: "call_gate", name: "bash", arguments: { command: `touch ${marker}` } }]), textResponse("never sent"));
    const db = join(dir, "arbor.db");
    const server = serve(["--db", db, "--port", "0", "--cwd", dir, "--model", "openai:gpt-test", "--base-url", model.url, "--approve", "bash"], { OPENAI_API_KEY: "sk-test", ARBOR_TOKEN: "" });
    const url = await server.ready;
    const transport = new DefaultChatTransport<UIMessage>({ api: `${url}/api/chat` });
    const stream = await transport.sendMessages({ chatId: "gated", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "touch it" }] }], trigger: "submit-message", messageId: undefined, abortSignal: undefined });
    let message: UIMessage | undefined;
    for await (const snapshot of readUIMessageStream({ stream })) message = snapshot;
    const tool = message?.parts.find((part) => part.type === "tool-bash") as { state: string; toolCallId: string; approval?: { id: string } } | undefined;
    expect(tool?.state).toBe("approval-requested");
    expect(tool?.toolCallId).toBe("call_gate");
    expect(existsSync(marker)).toBe(false);
    expect(model.requests).toHaveLength(1);
    server.child().kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
    const pending = await runArbor(["--db", db, "approvals", "gated", "--json"]);
    expect(pending.code, pending.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(pending.stdout))).toContain("call_gate");
    expect(existsSync(marker)).toBe(false);
  });

  it("GET /api/sessions lists in the order and with the time `arbor sessions` shows: a fork of an old session, made last, comes first", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    const log = createSqliteEventLog({ path: db });
    const repo = createSessionRepository({ log });
    const old = await repo.create({ id: "old-chat", cwd: dir });
    await old.appendEntry({ type: "message", message: { role: "user", content: "long ago", timestamp: Date.parse("2020-01-01T00:00:00Z") } });
    // Each step in a later millisecond than the one before, so the append times differ.
    const nextMillisecond = () => {
      const now = Date.now();
      while (Date.now() === now);
    };
    nextMillisecond();
    const recent = await repo.create({ id: "recent-chat", cwd: dir });
    await recent.appendEntry({ type: "message", message: { role: "user", content: "yesterday", timestamp: Date.parse("2021-01-01T00:00:00Z") } });
    nextMillisecond();
    await repo.fork("old-chat", { newId: "fork-of-old" });
    await log.close();
    const cli = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string; updatedAt: string }[];
    const server = serve(["--db", db, "--port", "0"], { ARBOR_TOKEN: "cli-token" });
    const url = await server.ready;
    const http = ((await (await fetch(`${url}/api/sessions`, { headers: { authorization: "Bearer cli-token" } })).json()) as { sessions: { id: string; updatedAt: string; modified: string }[] }).sessions;
    server.child().kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
    expect(cli.map((row) => row.id)).toEqual(["fork-of-old", "recent-chat", "old-chat"]);
    expect(http.map((row) => [row.id, row.updatedAt])).toEqual(cli.map((row) => [row.id, row.updatedAt]));
    // `modified` stays the latest message time (pi's): the fork's is its parent's.
    expect(http.find((row) => row.id === "fork-of-old")!.modified).toBe("2020-01-01T00:00:00.000Z");
  });

  it("serves the --tenant's sessions only: another tenant's session answers 404 as a missing one", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    const log = createSqliteEventLog({ path: db });
    const own = await createSessionRepository({ log, tenant: "a" }).create({ id: "chat-of-a", cwd: dir });
    await own.appendEntry({ type: "custom", customType: "note", data: { text: "a's" } });
    await log.close();
    const asTenant = async (tenant: string) => {
      const server = serve(["--db", db, "--tenant", tenant, "--port", "0"], { ARBOR_TOKEN: "cli-token" });
      const url = await server.ready;
      const get = async (path: string) => {
        const response = await fetch(`${url}${path}`, { headers: { authorization: "Bearer cli-token" } });
        return { status: response.status, body: await response.text() };
      };
      const answers = { list: await get("/api/sessions"), session: await get("/api/sessions/chat-of-a"), missing: await get("/api/sessions/no-such-chat") };
      server.child().kill("SIGTERM");
      expect((await server.exited).code).toBe(0);
      return answers;
    };
    const [a, b] = [await asTenant("a"), await asTenant("b")];
    expect((JSON.parse(a.list.body) as { sessions: { id: string; tenant: string }[] }).sessions.map((row) => [row.id, row.tenant])).toEqual([["chat-of-a", "a"]]);
    expect(a.session.status).toBe(200);
    expect(JSON.parse(b.list.body)).toEqual({ sessions: [] });
    expect(b.session.status).toBe(404);
    expect(b.session.body.split("chat-of-a").join("<id>")).toBe(b.missing.body.split("no-such-chat").join("<id>"));
  });
});
