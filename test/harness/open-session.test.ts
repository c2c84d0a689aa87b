/**
 * One live session per id in a harness: `openSession(id)` of a session already open returns it
 * (a second handle could never write, and its prompt was lost), and crash recovery finishes
 * before `createHarness` or `openSession` hands a session back.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ToolResultMessage } from "../../src/core/messages.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { appendUnfinishedRun, tempDbPath } from "../machines/helpers.ts";

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function make(log: EventLog, sessionId?: string) {
  return createHarness({
    eventLog: log,
    cwd: "/w",
    ...(sessionId ? { sessionId } : {}),
    models: { main: scriptedModel([{ text: "one" }, { text: "two" }, { text: "three" }], { provider: "openai.chat", modelId: "m-1" }) },
  });
}

/** A session whose last run was cut off mid-batch by a crash: call c1 has a result, c2 none. */
async function crashedSession(log: EventLog): Promise<string> {
  const session = await createSessionRepository({ log }).create({ cwd: "/w" });
  await appendUnfinishedRun(session, "run-crashed", { provider: "openai.chat", modelId: "m-1", api: "openai-chat" });
  return session.id;
}

/** The interrupted result recovery gave call c2, read from the session's view as it is now. */
const interruptedResult = (h: { session: { view: { buildContext(): { messages: { role: string }[] } } } }) =>
  h.session.view
    .buildContext()
    .messages.filter((m): m is ToolResultMessage => m.role === "toolResult")
    .find((m) => m.toolCallId === "c2" && (m.details as { arborSynthetic?: boolean } | undefined)?.arborSynthetic !== true);

describe("openSession on a session already open in the harness", () => {
  it("returns the live session: a prompt through it writes and nothing is lost", async () => {
    const log = createSqliteEventLog({ path: tempDbPath() });
    harness = await make(log);
    const again = await harness.openSession(harness.id);
    const outcome = await again.prompt("hello");
    expect(outcome.status).toBe("done");
    expect(harness.session.view.buildContext().messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect((await harness.prompt("more")).status).toBe("done");
  });

  it("a second open of another session returns the same live session, also when the opens race", async () => {
    const log = createSqliteEventLog({ path: tempDbPath() });
    harness = await make(log);
    const other = await harness.createSession();
    const [a, b] = await Promise.all([harness.openSession(other.id), harness.openSession(other.id)]);
    expect(a).toBe(other);
    expect(b).toBe(other);
    expect((await a.prompt("hi")).status).toBe("done");
    expect((await b.prompt("again")).status).toBe("done");
    expect(other.session.view.buildContext().messages.filter((m) => m.role === "user")).toHaveLength(2);
    // After dispose a new open gives a fresh, working session.
    await other.dispose();
    const reopened = await harness.openSession(other.id);
    expect(reopened).not.toBe(other);
    expect((await reopened.prompt("third")).status).toBe("done");
  });
});

describe("crash recovery before the session is handed back", () => {
  it("createHarness resolves only after the crashed run was recovered", async () => {
    const log = createSqliteEventLog({ path: tempDbPath() });
    const id = await crashedSession(log);
    harness = await make(log, id);
    const recovered = interruptedResult(harness);
    expect(recovered?.isError).toBe(true);
    expect((recovered?.content[0] as { text: string }).text).toMatch(/interrupted/);
  });

  it("openSession resolves only after the crashed run was recovered", async () => {
    const log = createSqliteEventLog({ path: tempDbPath() });
    const id = await crashedSession(log);
    harness = await make(log);
    const opened = await harness.openSession(id);
    expect(interruptedResult(opened)?.isError).toBe(true);
  });
});
