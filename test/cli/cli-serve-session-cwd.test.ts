/**
 * `arbor serve` runs each session in the folder the session recorded (its `session.created` cwd), as `arbor resume` does; its `--cwd` is the
 * folder of the sessions it creates. A session whose folder is gone is refused, naming the folder, and nothing runs. A session serve creates
 * records the endpoint it runs against, so `arbor run --session` goes on with it without model flags. Real `arbor run` / `arbor serve` child
 * processes on one SQLite file, the loopback OpenAI-wire server, and bash `pwd` calls whose output the model receives.
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hangResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer, type RecordedRequest } from "../../src/testing/openai-server.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { runArbor, serveArbor, tempDir, type CliResult } from "./cli-helpers.ts";

const env = { OPENAI_API_KEY: "sk-test" };
let model: OpenAIServer;
let dir: string;
let project: string;
let servews: string;
let db: string;
const closers: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  model = await startOpenAIServer();
  dir = tempDir("arbor-serve-cwd-");
  project = join(dir, "proj");
  servews = join(dir, "servews");
  mkdirSync(project);
  mkdirSync(servews);
  db = join(dir, "arbor.db");
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await model.close();
});

const modelFlags = () => ["--model", "openai:gpt-test", "--base-url", model.url];
const pwd = (id: string) => toolCallResponse([{ id, name: "bash", arguments: { command: "pwd" } }]);

/** The text of the tool results the model was sent in `request`, by tool call id. */
function toolOutputs(request: RecordedRequest): Record<string, string> {
  const messages = (request.body as { messages: { role: string; tool_call_id?: string; content: unknown }[] }).messages;
  return Object.fromEntries(
    messages
      .filter((message) => message.role === "tool")
      .map((message) => [message.tool_call_id, (typeof message.content === "string" ? message.content : JSON.stringify(message.content)).trim()]),
  );
}

/** Starts `arbor serve --cwd servews` on the test's log; it is SIGKILLed after the test unless the test stopped it. */
async function startServe(): Promise<{ url: string; stop(): Promise<CliResult>; stderr(): string }> {
  const serve = serveArbor(["--db", db, "--port", "0", "--cwd", servews, ...modelFlags()], env);
  let seen = "";
  serve.child().stderr!.on("data", (chunk: Buffer) => (seen += chunk.toString("utf8")));
  closers.push(async () => {
    serve.child().kill("SIGKILL");
    await serve.exited;
  });
  const url = await serve.ready;
  return {
    url,
    stderr: () => seen,
    async stop() {
      serve.child().kill("SIGTERM");
      return serve.exited;
    },
  };
}

function postPrompt(url: string, id: string, text: string): Promise<Response> {
  return fetch(`${url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, trigger: "submit-message", messages: [{ id: `u-${text.length}`, role: "user", parts: [{ type: "text", text }] }] }),
  });
}

async function runInProject(prompt: string): Promise<string> {
  const result = await runArbor(["--db", db, "run", ...modelFlags(), "--cwd", project, prompt], { cwd: servews, env });
  expect(result.code, result.stderr).toBe(0);
  return /session (\S+)/.exec(result.stderr)![1];
}

describe("arbor serve works in each session's recorded folder", { timeout: 120_000 }, () => {
  it("a prompt over HTTP to a session `arbor run --cwd proj` made runs its tools in proj; a new chat runs in serve's --cwd", async () => {
    model.script(pwd("call_run"), textResponse("in the project"));
    const sessionId = await runInProject("where are you?");
    const serve = await startServe();

    model.script(pwd("call_served"), textResponse("still in the project"));
    const served = await postPrompt(serve.url, sessionId, "and now?");
    expect(served.status).toBe(200);
    expect(await served.text()).toContain("still in the project");
    expect(toolOutputs(model.requests[3]).call_served).toBe(realpathSync(project));

    model.script(pwd("call_new"), textResponse("in the service's folder"));
    const created = await postPrompt(serve.url, "chat-1", "where is a new chat?");
    expect(created.status).toBe(200);
    expect(await created.text()).toContain("in the service's folder");
    expect(toolOutputs(model.requests[5]).call_new).toBe(realpathSync(servews));

    // And the first session again, after the new one: each keeps its own folder.
    model.script(pwd("call_again"), textResponse("back in the project"));
    expect(await (await postPrompt(serve.url, sessionId, "and again?")).text()).toContain("back in the project");
    expect(toolOutputs(model.requests[7]).call_again).toBe(realpathSync(project));
    expect((await serve.stop()).code).toBe(0);
  });

  it("a chat serve created resumes from the CLI without model flags (its endpoint is recorded)", async () => {
    const serve = await startServe();
    model.script(textResponse("made over HTTP"));
    const created = await postPrompt(serve.url, "chat-1", "hello");
    expect(await created.text()).toContain("made over HTTP");
    expect((await serve.stop()).code).toBe(0);

    model.script(textResponse("answered from the CLI"));
    const resumed = await runArbor(["--db", db, "run", "--session", "chat-1", "cli msg"], { cwd: dir, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("answered from the CLI");
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1].body.model).toBe("gpt-test");
  });

  it("continues a run whose `arbor run --cwd proj` process was killed in proj, not in serve's --cwd", async () => {
    model.script(pwd("call_before"), hangResponse("Looking at the"), pwd("call_after"), textResponse("done in the project"));
    let runChild: ChildProcess | undefined;
    const running = runArbor(["--db", db, "run", ...modelFlags(), "--cwd", project, "where are you?"], { cwd: servews, env, onSpawn: (child) => (runChild = child) });
    await model.waitForRequests(2);
    runChild!.kill("SIGKILL");
    expect((await running).signal).toBe("SIGKILL");
    expect(toolOutputs(model.requests[1]).call_before).toBe(realpathSync(project));

    const serve = await startServe();
    const log = createSqliteEventLog({ path: db });
    closers.push(() => log.close());
    const ended = await waitForEvent(log, (event) => event.type === "run.ended");
    expect(ended.data, serve.stderr()).toMatchObject({ status: "done" });
    expect(toolOutputs(model.requests[3]).call_after).toBe(realpathSync(project));
  });

  it("leaves a killed run whose folder is gone open, says so, and refuses prompts to it naming the folder; other sessions still run", async () => {
    model.script(hangResponse("Looking at the"));
    let runChild: ChildProcess | undefined;
    const running = runArbor(["--db", db, "run", ...modelFlags(), "--cwd", project, "hello"], { cwd: servews, env, onSpawn: (child) => (runChild = child) });
    await model.waitForRequests(1);
    runChild!.kill("SIGKILL");
    await running;
    const log = createSqliteEventLog({ path: db });
    closers.push(() => log.close());
    const [created] = await log.readAll({ types: ["session.created"] });
    const sessionId = (created.data as { sessionId: string }).sessionId;
    rmSync(project, { recursive: true });

    const serve = await startServe();
    // Its worker found the orphaned run and would not continue it anywhere else.
    await until(() => serve.stderr().includes(`Session ${sessionId} was started in ${project}, which no longer exists`));
    const refused = await postPrompt(serve.url, sessionId, "go on");
    expect(refused.status).toBe(500);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("SESSION_FOLDER_MISSING");
    expect(body.error.message).toContain(project);
    expect(model.requests).toHaveLength(1);
    expect((await log.readStream(`session-${sessionId}`)).filter((event) => event.type === "run.ended")).toEqual([]);
    // The service still serves sessions whose folder is there.
    model.script(textResponse("fine"));
    const other = await postPrompt(serve.url, "chat-2", "hi");
    expect(other.status).toBe(200);
    expect(await other.text()).toContain("fine");
  });
});

/** The first event of any session in `log` matching `predicate`, waiting for it. */
function waitForEvent(log: ReturnType<typeof createSqliteEventLog>, predicate: (event: StoredEvent) => boolean): Promise<StoredEvent> {
  return new Promise((resolve, reject) => {
    const subscription = log.subscribe().subscribe({
      next: (event) => {
        if (!predicate(event)) return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve(event);
      },
      error: reject,
    });
  });
}

/** Resolves once `condition()` holds (checked every 50 ms), or rejects after 60 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in 60 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
