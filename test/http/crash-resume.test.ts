/**
 * A reconnect after the serving process died: `arbor serve` (a real child process) is killed
 * with SIGKILL in the middle of a streamed reply; a new `arbor serve` opens the same log on the
 * same port; the client that was reading the reply calls the `ai` package's own
 * `resumeStream()`. Both processes run with `--durability interrupt` (a dead process's run is
 * closed, not continued: serve's default continues it, `test/http/chromium-failover.test.ts`).
 *
 * What a stream resumed after a crash must show (docs/http.md, "After a crash"): the new process
 * recovers the run (its partial message is rebuilt from the logged deltas and closed, the run
 * ends `interrupted`), and the resume answers that message once more, closed: the text the
 * log holds, as ONE finished text part (no part duplicated, no two merged, nothing invented),
 * ending with `abort`. The client's message is then the one the log's UI messages hold.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { UIMessage } from "ai";
import { DefaultChatTransport } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { splitText } from "../../src/testing/openai-wire.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { serveArbor as serve, tempDir } from "../cli/cli-helpers.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { NodeChat } from "./node-chat.ts";
import { readChunks, waitForEvent } from "./service.ts";

const TOKEN = "crash-token";
const REPLY = "The first half arrives, then the server dies before the rest.";

const textDeltas = (log: EventLog, id: string) =>
  log.readStream(`session-${id}`).then((events) => events.filter((event) => event.type === "message.delta" && (event.data as { kind: string }).kind === "text").map((event) => (event.data as { delta: string }).delta).join(""));

describe("resume after the serving process was killed", () => {
  let gated: GatedModelServer | undefined;
  let log: EventLog | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await log?.close();
    await gated?.close();
  });

  it("kill -9 mid-text, a new process on the same log: resumeStream() gives the recovered message, closed, no part duplicated or merged", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: REPLY, chunkSize: 6 });
    const dir = tempDir("arbor-crash-resume-");
    const db = join(dir, "arbor.db");
    const env = { OPENAI_API_KEY: "sk-test", ARBOR_TOKEN: TOKEN };
    const flags = ["--db", db, "--cwd", dir, "--model", "openai:gpt-test", "--base-url", gated.url, "--durability", "interrupt"];
    const first = serve([...flags, "--port", "0"], env);
    children.push(first.child());
    const url = await first.ready;
    const port = new URL(url).port;

    const id = "crashy";
    const chat = new NodeChat({ id, transport: new DefaultChatTransport<UIMessage>({ api: `${url}/api/chat`, headers: { authorization: `Bearer ${TOKEN}` } }) });
    const sending = chat.sendMessage({ text: "tell me" });
    await gated.waitForRequests(1);
    const pieces = splitText(REPLY, 6);
    gated.release(0, 3); // the role frame and two text pieces
    // This process reads the same SQLite file while the child writes it.
    log = createSqliteEventLog({ path: db });
    const textOf = (all: StoredEvent[]) => all.filter((event) => event.type === "message.delta" && (event.data as { kind: string }).kind === "text").map((event) => (event.data as { delta: string }).delta).join("");
    // Some of the text is committed (the redactor may hold back a tail that could start a secret).
    await waitForEvent(log, id, (_, all) => textOf(all).length > 0);
    first.child().kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    await sending; // the transport's stream broke: the chat holds an unfinished message
    // What the log holds of the reply once the process is gone (nothing can be added now).
    const logged = await textDeltas(log, id);
    expect(logged.length).toBeGreaterThan(0);
    expect(REPLY.startsWith(logged)).toBe(true);
    expect(logged.length).toBeLessThanOrEqual((pieces[0] + pieces[1]).length);
    const before = chat.messages.at(-1)!;
    expect(before.role).toBe("assistant");

    // The server comes back on the same port, over the same log.
    const second = serve([...flags, "--port", port], env);
    children.push(second.child());
    expect(await second.ready).toBe(url);
    await chat.resumeStream();

    expect(chat.error).toBeUndefined();
    const assistant = chat.messages.at(-1)!;
    expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(assistant.id).toBe(before.id);
    const texts = assistant.parts.filter((part) => part.type === "text");
    expect(texts).toEqual([{ type: "text", text: logged, state: "done" }]);
    expect(assistant.parts.filter((part) => part.type !== "text" && part.type !== "step-start")).toEqual([]);

    // The log: the run was ended by recovery, its partial message kept; the client's message is the log's.
    const events = await log.readStream(`session-${id}`);
    const ended = events.filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status);
    expect(ended).toEqual(["interrupted"]);
    const detail = (await (await fetch(`${url}/api/sessions/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { messages: UIMessage[] };
    expect(detail.messages.at(-1)!.parts.filter((part) => part.type === "text")).toEqual(texts);

    // A second resume (a reload) rebuilds the same message again, not a second copy.
    await chat.resumeStream();
    expect(chat.messages.length).toBe(2);
    expect(chat.messages.at(-1)).toEqual(assistant);
    // And the raw stream: one start, one text part, closed, then abort.
    const raw = await new DefaultChatTransport<UIMessage>({ api: `${url}/api/chat`, headers: { authorization: `Bearer ${TOKEN}` } }).reconnectToStream({ chatId: id });
    const chunks = (await readChunks(raw!)).map((chunk) => chunk.type);
    expect(chunks.filter((type) => type === "start")).toHaveLength(1);
    expect(chunks.filter((type) => type === "text-start")).toHaveLength(1);
    expect(chunks.filter((type) => type === "text-end")).toHaveLength(1);
    expect(chunks.at(-1)).toBe("abort");

    second.child().kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
  }, 120_000);

  it("kill -9 while a tool runs: resumeStream() gives the message with its text and the tool call closed as interrupted", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: "Running it.", toolCalls: [{ id: "call_sleep", name: "bash", arguments: { command: "sleep 60" } }], chunkSize: 50 });
    const dir = tempDir("arbor-crash-resume-");
    const db = join(dir, "arbor.db");
    const env = { OPENAI_API_KEY: "sk-test", ARBOR_TOKEN: TOKEN };
    const flags = ["--db", db, "--cwd", dir, "--model", "openai:gpt-test", "--base-url", gated.url, "--durability", "interrupt"];
    const first = serve([...flags, "--port", "0"], env);
    children.push(first.child());
    const url = await first.ready;
    const id = "crashy-tool";
    const chat = new NodeChat({ id, transport: new DefaultChatTransport<UIMessage>({ api: `${url}/api/chat`, headers: { authorization: `Bearer ${TOKEN}` } }) });
    const sending = chat.sendMessage({ text: "sleep a while" });
    await gated.waitForRequests(1);
    gated.release(0);
    log = createSqliteEventLog({ path: db });
    await waitForEvent(log, id, (event) => event.type === "tool.started");
    first.child().kill("SIGKILL");
    await first.exited;
    await sending;

    const second = serve([...flags, "--port", new URL(url).port], env);
    children.push(second.child());
    expect(await second.ready).toBe(url);
    await chat.resumeStream();
    expect(chat.error).toBeUndefined();
    expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    const parts = chat.messages[1].parts.filter((part) => part.type !== "step-start");
    expect(parts.map((part) => part.type)).toEqual(["text", "tool-bash"]);
    expect(parts[0]).toMatchObject({ text: "Running it.", state: "done" });
    expect(parts[1]).toMatchObject({ toolCallId: "call_sleep", state: "output-error", input: { command: "sleep 60" } });
    expect((parts[1] as { errorText: string }).errorText).toMatch(/interrupted/i);
    const detail = (await (await fetch(`${url}/api/sessions/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { messages: UIMessage[] };
    expect(detail.messages.at(-1)!.parts.filter((part) => part.type !== "step-start")).toEqual(parts);

    second.child().kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
  }, 120_000);
});
