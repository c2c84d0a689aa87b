/**
 * One active run per session: a second prompt in-process is refused; a second
 * writer on the same SQLite file (its own connection, as another process has) gets
 * its append refused by the version check, reports the conflict and writes nothing.
 * Recovery over synthetic logs (no run, finished run, unfinished run).
 */
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SessionBusyError } from "../../src/core/errors.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { recoverSession } from "../../src/machines/recovery.ts";
import { sessionActorOf } from "../../src/machines/session-actor.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { appendUnfinishedRun, fakeModel, memorySession, sessionEvents, tempDbPath } from "./helpers.ts";

const CHILD = fileURLToPath(new URL("./fixtures/second-writer-child.ts", import.meta.url));

describe("one active run per session", () => {
  it("a second prompt in the same process gets SessionBusyError and changes nothing", async () => {
    const { log, session } = await memorySession();
    const agent = createAgent({ session, model: fakeModel([{ text: "one" }]) });
    const first = agent.prompt("one");
    expect(() => agent.prompt("two")).toThrow(SessionBusyError);
    await first;
    const users = session.view.buildContext().messages.filter((m) => m.role === "user");
    expect(users).toHaveLength(1);
    expect((await sessionEvents(log, session.id)).filter((e) => e.type === "run.started")).toHaveLength(1);
  });

  it("a second writer on the same SQLite file is refused by the version check and writes nothing", async () => {
    const path = tempDbPath();
    const logA = createSqliteEventLog({ path });
    const sessionA = await createSessionRepository({ log: logA }).create({ cwd: "/tmp" });
    const logB = createSqliteEventLog({ path });
    const sessionB = await createSessionRepository({ log: logB }).open(sessionA.id);
    try {
      const agentA = createAgent({ session: sessionA, model: fakeModel([{ text: "from A" }]) });
      expect((await agentA.prompt("hello from A")).status).toBe("done");
      const versionAfterA = await logA.streamVersion(`session-${sessionA.id}`);

      const agentB = createAgent({ session: sessionB, model: fakeModel([{ text: "from B" }]) });
      const outcome = await agentB.prompt("hello from B");
      expect(outcome.status).toBe("failed");
      expect(outcome.code).toBe("EXPECTED_VERSION_CONFLICT");
      expect(outcome.error).toMatch(/refused a write.*Another writer appended first/);
      expect(await logA.streamVersion(`session-${sessionA.id}`)).toBe(versionAfterA);
      const stored = await logA.readStream(`session-${sessionA.id}`);
      expect(JSON.stringify(stored)).not.toContain("hello from B");
      await agentA.dispose();
      await agentB.dispose();
    } finally {
      await logB.close();
      await logA.close();
    }
  });
});

describe("after losing a write race (issue 19 item 7)", () => {
  async function lostRace() {
    const path = tempDbPath();
    const logA = createSqliteEventLog({ path });
    const sessionA = await createSessionRepository({ log: logA }).create({ cwd: "/tmp" });
    const logB = createSqliteEventLog({ path });
    const sessionB = await createSessionRepository({ log: logB }).open(sessionA.id);
    // Another writer (a CLI label, another process) appends: A's view is now stale.
    await sessionB.appendEntry({ type: "session_info", name: "renamed elsewhere" });
    const model = fakeModel([{ text: "answer one" }, { text: "answer two" }]);
    const agent = createAgent({ session: sessionA, model });
    const lost = await agent.prompt("first try");
    return { logA, logB, sessionA, agent, lost, model };
  }

  it("the refused run says what happens next, and the next prompt reloads the session and runs", async () => {
    const { logA, logB, sessionA, agent, lost, model } = await lostRace();
    try {
      expect(lost).toMatchObject({ status: "failed", code: "EXPECTED_VERSION_CONFLICT" });
      expect(lost.error).toMatch(/reloads .* at the next prompt\(\) or continue\(\)/);
      expect(model.calls).toBe(0);
      const outcome = await agent.prompt("second try");
      expect(outcome.status).toBe("done");
      expect(model.calls).toBe(1);
      expect(sessionA.view.name).toBe("renamed elsewhere");
      const stored = JSON.stringify(await logA.readStream(`session-${sessionA.id}`));
      expect(stored).toContain("second try");
      expect(stored).not.toContain("first try");
      await agent.dispose();
    } finally {
      await logB.close();
      await logA.close();
    }
  });

  it("reload() catches up at once", async () => {
    const { logA, logB, sessionA, agent } = await lostRace();
    try {
      expect(sessionA.view.name).toBeUndefined();
      await agent.reload();
      expect(sessionA.view.name).toBe("renamed elsewhere");
      expect((await agent.prompt("after reload")).status).toBe("done");
      await agent.dispose();
    } finally {
      await logB.close();
      await logA.close();
    }
  });
});

describe("a second process on the same SQLite file", () => {
  it("gets its append refused by the version check, reports the conflict and writes nothing", async () => {
    const path = tempDbPath();
    const log = createSqliteEventLog({ path });
    try {
      const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
      const child = spawn(process.execPath, ["--import", "tsx", CHILD, path, session.id], { stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += String(chunk)));
      const line = (predicate: (text: string) => boolean) =>
        new Promise<string>((resolve, reject) => {
          const check = () => {
            const found = stdout.split("\n").find(predicate);
            if (found) resolve(found);
          };
          child.stdout.on("data", (chunk) => {
            stdout += String(chunk);
            check();
          });
          child.on("exit", () => reject(new Error(`child exited: ${stderr}`)));
          check();
        });
      await line((text) => text === "READY");
      // This process runs a prompt: the child's view of the session is now stale.
      const agent = createAgent({ session, model: fakeModel([{ text: "from the parent" }]) });
      expect((await agent.prompt("hello from the parent")).status).toBe("done");
      await agent.dispose();
      const versionBefore = await log.streamVersion(`session-${session.id}`);
      child.stdin.write("GO\n");
      const outcome = JSON.parse(await line((text) => text.startsWith("{"))) as { status: string; code?: string; error?: string };
      expect(outcome).toMatchObject({ status: "failed", code: "EXPECTED_VERSION_CONFLICT" });
      expect(outcome.error).toMatch(/refused a write/);
      expect(await log.streamVersion(`session-${session.id}`)).toBe(versionBefore);
      expect(JSON.stringify(await log.readStream(`session-${session.id}`))).not.toContain("hello from the child process");
    } finally {
      await log.close();
    }
  }, 60_000);
});

describe("recoverSession", () => {
  it("does nothing for a session without runs or whose last run ended", async () => {
    const { session } = await memorySession();
    expect(await recoverSession(session)).toEqual({ recovered: false, interruptedToolCallIds: [] });
    await createAgent({ session, model: fakeModel([{ text: "ok" }]) }).prompt("go");
    expect(await recoverSession(session)).toMatchObject({ recovered: false });
  });

  it("closes an unfinished run: results for calls without one, the open turn, run.ended (interrupted)", async () => {
    const { log, session } = await memorySession();
    const runId = "run-1";
    await appendUnfinishedRun(session, runId, { provider: "p", modelId: "m", api: "a" });
    const report = await recoverSession(session);
    expect(report).toMatchObject({ recovered: true, runId, interruptedToolCallIds: ["c2"] });
    const context = session.view.buildContext();
    expect(context.diagnostics).toEqual([]);
    const last = context.messages.at(-1)!;
    expect(last).toMatchObject({ role: "toolResult", toolCallId: "c2", isError: true });
    const types = (await sessionEvents(log, session.id)).map((e) => e.type);
    expect(types.slice(-3)).toEqual(["message.ended", "turn.ended", "run.ended"]);
    // continue() then runs from the repaired context.
    const model = fakeModel([{ text: "resumed" }]);
    const outcome = await createAgent({ session, model }).continue();
    expect(outcome.status).toBe("done");
    expect(model.requests[0].messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "toolResult"]);
  });
});

describe("recovery writes through the session's one writer", () => {
  it("at start-up the agent recovers through its own writer: the recovery events are among its committed events (runEvents$)", async () => {
    const { log, session } = await memorySession();
    await appendUnfinishedRun(session, "run-1", { provider: "p", modelId: "m", api: "a" });
    const agent = createAgent({ session, model: fakeModel([{ text: "after" }]) });
    const committed: string[] = [];
    const subscription = agent.runEvents$.subscribe((event) => committed.push(event.type));
    await agent.whenReady();
    const recovered = (await sessionEvents(log, session.id)).slice(-6).map((event) => event.type);
    expect(recovered).toEqual(["tool.ended", "message.started", "entry.appended", "message.ended", "turn.ended", "run.ended"]);
    expect(committed).toEqual(recovered);
    subscription.unsubscribe();
    await agent.dispose();
  });

  it("without an agent, recoverSession writes through the session actor's writer: after a write that writer holds in flight", async () => {
    const { log, session } = await memorySession();
    await appendUnfinishedRun(session, "run-1", { provider: "p", modelId: "m", api: "a" });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const original = session.appendEntries.bind(session);
    session.appendEntries = async (entries, options) => {
      await gate; // the slot's write stalls before it reaches the log
      return original(entries, options);
    };
    const named = sessionActorOf(session).writes.appendEntries([{ type: "session_info", name: "first" }]);
    const recovery = recoverSession(session);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await named;
    expect(await recovery).toMatchObject({ recovered: true, interruptedToolCallIds: ["c2"] });
    const tail = (await sessionEvents(log, session.id)).slice(-7);
    expect(tail.map((event) => event.type)).toEqual(["entry.appended", "tool.ended", "message.started", "entry.appended", "message.ended", "turn.ended", "run.ended"]);
    expect(tail[0].data).toMatchObject({ entry: { type: "session_info", name: "first" } });
  });
});

describe("queue restore", () => {
  it("a new agent on the session gets back the queued messages the log recorded", async () => {
    const { session } = await memorySession();
    const first = createAgent({ session, model: fakeModel([]) });
    first.followUp("later please");
    first.steer("s1");
    first.steer("s2");
    await first.waitForIdle();
    await first.dispose();
    const model = fakeModel([{ text: "a" }, { text: "b" }, { text: "c" }]);
    const second = createAgent({ session, model, steeringMode: "all" });
    const outcome = await second.prompt("go");
    expect(outcome.status).toBe("done");
    const users = outcome.messages.filter((m) => m.role === "user").map((m) => JSON.stringify((m as { content: unknown }).content));
    expect(users).toEqual([
      JSON.stringify([{ type: "text", text: "go" }]),
      JSON.stringify([{ type: "text", text: "s1" }]),
      JSON.stringify([{ type: "text", text: "s2" }]),
      JSON.stringify([{ type: "text", text: "later please" }]),
    ]);
    expect(second.hasQueuedMessages()).toBe(false);
  });
});

describe("recoverSession: a message interrupted mid-stream", () => {
  it("rebuilds thinking, text and tool-call blocks from the logged deltas and closes the message as aborted", async () => {
    const { session } = await memorySession();
    const runId = "run-2";
    const meta = { runId };
    const delta = (kind: string, contentIndex: number, text: string, extra: Record<string, unknown> = {}) => ({
      type: "message.delta",
      data: { messageId: "m1", kind, contentIndex, delta: text, ...extra },
      metadata: meta,
    });
    await session.appendEvents([
      { type: "run.started", data: { runId, kind: "prompt", model: { provider: "openai", modelId: "gpt-test", api: "openai-chat" } }, metadata: meta },
      { type: "turn.started", data: { runId, turnId: "t0", index: 0 }, metadata: meta },
    ]);
    await session.appendEntries([{ type: "message", message: { role: "user", content: "go", timestamp: 1 } }]);
    await session.appendEvents([
      { type: "message.started", data: { messageId: "m1", role: "assistant" }, metadata: meta },
      delta("thinking", 0, "Let me "),
      delta("thinking", 0, "think."),
      delta("text", 1, "Reading the"),
      delta("toolCall", 2, "", { toolCallId: "c1", toolName: "read" }),
      delta("toolCall", 2, '{"path":"a.t', { toolCallId: "c1" }),
    ]);
    const report = await recoverSession(session);
    expect(report.recovered).toBe(true);
    expect(report.closedMessageEntryId).toBeDefined();
    const last = session.view.buildContext().messages.at(-1);
    expect(last).toMatchObject({
      role: "assistant",
      stopReason: "aborted",
      provider: "openai",
      model: "gpt-test",
      api: "openai-chat",
      content: [
        { type: "thinking", thinking: "Let me think." },
        { type: "text", text: "Reading the" },
        { type: "toolCall", id: "c1", name: "read", arguments: {} },
      ],
    });
    // The truncated call never ran: no result is invented for an aborted message.
    expect(report.interruptedToolCallIds).toEqual([]);
    const model = fakeModel([{ text: "starting over" }]);
    expect((await createAgent({ session, model }).continue()).status).toBe("done");
    // The ModelClient receives the aborted message; the model adapter drops error/aborted
    // assistants before the provider call (as pi-ai does), so this continue is a clean retry.
    expect(model.requests[0].messages.map((m) => (m.role === "assistant" ? `assistant:${m.stopReason}` : m.role))).toEqual(["user", "assistant:aborted"]);
  });
});

describe("a run owned by another live process", () => {
  async function unfinishedRun(owner: { pid: number; host: string }) {
    const { session } = await memorySession();
    await session.appendEvents([{ type: "run.started", data: { runId: "run-x", kind: "prompt" }, metadata: { runId: "run-x", owner } }]);
    await session.appendEntries([{ type: "message", message: { role: "user", content: "go", timestamp: 1 } }]);
    return session;
  }

  it("is left alone by recovery, and prompts are refused with SessionBusyError", async () => {
    const session = await unfinishedRun({ pid: process.ppid, host: hostname() });
    expect(await recoverSession(session)).toMatchObject({ recovered: false, runId: "run-x", liveRun: { runId: "run-x" } });
    const agent = createAgent({ session, model: fakeModel([{ text: "never" }]) });
    await expect(agent.prompt("hi")).rejects.toSatisfy((error: unknown) => SessionBusyError.isInstance(error));
    expect(session.view.getEntries()).toHaveLength(1);
  });

  it("is recovered once its process is gone", async () => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => child.on("exit", resolve));
    const session = await unfinishedRun({ pid: child.pid!, host: hostname() });
    expect(await recoverSession(session)).toMatchObject({ recovered: true, runId: "run-x" });
  });

  it("our own runs record their owner", async () => {
    const { log, session } = await memorySession();
    await createAgent({ session, model: fakeModel([{ text: "ok" }]) }).prompt("go");
    const started = (await sessionEvents(log, session.id)).find((e) => e.type === "run.started");
    expect(started?.metadata.owner).toMatchObject({ pid: process.pid, host: hostname() });
  });
});

