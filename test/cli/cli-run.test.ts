/**
 * End-to-end tests of `arbor run` on the real wire: a real CLI process, a real
 * SQLite file, and real HTTP from @ai-sdk/openai to a loopback OpenAI-wire server
 * (the server runs in this test process).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSessionContext, migrateSessionEntries, parseSessionEntries } from "@mariozechner/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import {
  errorResponse,
  fixtureResponse,
  hangResponse,
  startOpenAIServer,
  textResponse,
  toolCallResponse,
  type OpenAIServer,
} from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";
import { sharedPath } from "../shared-dir.ts";

const FIXTURES = sharedPath("real-inputs/openai-fixtures");
const SAMPLE = sharedPath("oracle/sample-session.jsonl");

let server: OpenAIServer;
let dir: string;
let db: string;

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
  db = join(dir, "arbor.db");
});
afterEach(async () => {
  await server.close();
});

const modelArgs = () => ["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir];
const env = { OPENAI_API_KEY: "test-key" };

async function contextOf(sessionId: string, leaf?: string) {
  const result = await runArbor(["--db", db, "context", sessionId, "--json", ...(leaf ? ["--leaf", leaf] : [])]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { leafId: string; messages: any[]; diagnostics: unknown[] };
}

async function latestSessionId(): Promise<string> {
  const result = await runArbor(["--db", db, "sessions", "--json"]);
  return (JSON.parse(result.stdout) as { id: string }[])[0].id;
}

/** Waits (bounded by count, not time assertions) until the log holds an event matching `predicate`. */
async function waitForEvent(predicate: (type: string, data: any) => boolean): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (existsSync(db)) {
      const log = createSqliteEventLog({ path: db });
      try {
        const events = await log.readAll();
        if (events.some((event) => predicate(event.type, event.data))) return;
      } catch {
        // The file may be mid-creation; try again.
      } finally {
        await log.close();
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the expected event never appeared in the log");
}

function piContextsOf(jsonl: string) {
  const entries = parseSessionEntries(jsonl) as { type: string; id: string; parentId: string | null }[];
  migrateSessionEntries(entries as never);
  return entries.filter((entry) => entry.type !== "session");
}

describe("arbor run on the real wire", { timeout: 180_000 }, () => {
  it("does a coding task with bash, write, edit and read; tree, context and pi agree", async () => {
    writeFileSync(join(dir, "notes.txt"), "alpha\nbeta\n");
    server.script(
      toolCallResponse([{ id: "call_bash", name: "bash", arguments: { command: "ls" } }]),
      toolCallResponse([{ id: "call_write", name: "write", arguments: { path: "src/hello.txt", content: "hello world\n" } }]),
      toolCallResponse([{ id: "call_edit", name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "beta", newText: "gamma" }] } }]),
      toolCallResponse([{ id: "call_read", name: "read", arguments: { path: "notes.txt" } }]),
      textResponse("Done: wrote src/hello.txt and changed beta to gamma."),
    );
    const result = await runArbor([...modelArgs(), "make the changes"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Done: wrote src/hello.txt");
    expect(result.stdout.match(/^• /gm)).toHaveLength(4); // one status line per tool call
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("alpha\ngamma\n");
    expect(readFileSync(join(dir, "src/hello.txt"), "utf8")).toBe("hello world\n");
    // The last request carried the read result, paired with its call.
    const lastBody = server.requests.at(-1)!.body;
    expect(JSON.stringify(lastBody.messages)).toContain("alpha\\ngamma");

    const sessionId = await latestSessionId();
    const tree = await runArbor(["--db", db, "tree", sessionId]);
    for (const name of ["bash", "write", "edit", "read"]) expect(tree.stdout).toContain(`calls ${name}`);
    const context = await contextOf(sessionId);
    expect(context.diagnostics).toEqual([]);
    expect(context.messages.map((message) => message.role)).toEqual([
      "user", "assistant", "toolResult", "assistant", "toolResult", "assistant", "toolResult", "assistant", "toolResult", "assistant",
    ]);

    const exported = await runArbor(["--db", db, "export", sessionId]);
    const piEntries = piContextsOf(exported.stdout);
    const parents = new Set(piEntries.map((entry) => entry.parentId));
    const leaves = piEntries.filter((entry) => !parents.has(entry.id));
    expect(leaves.length).toBeGreaterThan(0);
    for (const entry of leaves) {
      const ours = await contextOf(sessionId, entry.id);
      expect(ours.messages).toEqual(JSON.parse(JSON.stringify(buildSessionContext(piEntries as never, entry.id).messages)));
    }
  });

  it("replays recorded parallel tool calls to unknown tools: paired error results, in call order", async () => {
    server.script(
      fixtureResponse(join(FIXTURES, "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin")),
      fixtureResponse(join(FIXTURES, "e2aad469b71d1d4894ff833ea147020a9d875eb7ce644a0ff355581690a4cbfd.bin")),
    );
    const result = await runArbor([...modelArgs(), "weather and stocks"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests).toHaveLength(2);
    const messages = server.requests[1].body.messages as any[];
    const assistant = messages.find((message) => message.role === "assistant");
    const callIds = (assistant.tool_calls as { id: string }[]).map((call) => call.id);
    expect(callIds).toHaveLength(2);
    const toolMessages = messages.filter((message) => message.role === "tool");
    expect(toolMessages.map((message) => message.tool_call_id)).toEqual(callIds);
    for (const message of toolMessages) expect(JSON.stringify(message.content)).toMatch(/not found/i);
    expect(result.stdout).toContain("unable to provide real-time weather");
  });

  it("SIGINT mid-tool kills the tool, exits 130, and the session continues", async () => {
    const pidFile = join(dir, "pid.txt");
    server.script(toolCallResponse([{ id: "call_sleep", name: "bash", arguments: { command: `echo $$ > ${pidFile}; sleep 60` } }]));
    const run = runArbor([...modelArgs(), "wait a minute"], {
      env,
      onSpawn: (child) => {
        const timer = setInterval(() => {
          if (existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "") {
            clearInterval(timer);
            child.kill("SIGINT");
          }
        }, 50);
        child.on("close", () => clearInterval(timer));
      },
    });
    const result = await run;
    expect(result.code, result.stderr).toBe(130);
    const shellPid = Number(readFileSync(pidFile, "utf8"));
    expect(() => process.kill(shellPid, 0)).toThrow(); // the tool's process group is gone

    const sessionId = await latestSessionId();
    const context = await contextOf(sessionId);
    expect(context.diagnostics).toEqual([]);
    const toolResult = context.messages.find((message) => message.role === "toolResult");
    expect(toolResult.toolCallId).toBe("call_sleep");
    expect(toolResult.isError).toBe(true);

    server.script(textResponse("Carrying on."));
    // No model flags: the session recorded its endpoint (never the key) on the first run.
    const again = await runArbor(["--db", db, "run", "--cwd", dir, "--session", sessionId, "go on"], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("Carrying on.");
    const sent = JSON.stringify(server.requests.at(-1)!.body.messages);
    expect(sent).toContain("call_sleep");
    expect(sent).toContain("go on");
  });

  it("SIGTERM mid-tool also kills the tool's process group and closes the run (exit 143)", async () => {
    const pidFile = join(dir, "pid-term.txt");
    server.script(toolCallResponse([{ id: "call_term", name: "bash", arguments: { command: `echo $$ > ${pidFile}; sleep 60` } }]));
    const result = await runArbor([...modelArgs(), "wait"], {
      env,
      onSpawn: (child) => {
        const timer = setInterval(() => {
          if (existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "") {
            clearInterval(timer);
            child.kill("SIGTERM");
          }
        }, 50);
        child.on("close", () => clearInterval(timer));
      },
    });
    expect(result.code, result.stderr).toBe(143);
    expect(() => process.kill(Number(readFileSync(pidFile, "utf8")), 0)).toThrow();
    const events = await runArbor(["--db", db, "events", await latestSessionId(), "--json"]);
    expect(events.stdout).toMatch(/"type":"run\.ended".*"status":"aborted"/);
    expect((await contextOf(await latestSessionId())).diagnostics).toEqual([]);
  });

  it("SIGKILL mid-stream, then run --continue recovers without duplicating a message", async () => {
    server.script(hangResponse("Partial answ"));
    let cli: import("node:child_process").ChildProcess | undefined;
    const run = runArbor([...modelArgs(), "tell me something"], { env, onSpawn: (child) => (cli = child) });
    await waitForEvent((type, data) => type === "message.delta" && data.kind === "text");
    cli!.kill("SIGKILL");
    const killed = await run;
    expect(killed.signal).toBe("SIGKILL");

    server.script(textResponse("Here is the whole answer."));
    const resumed = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "--continue"], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("Here is the whole answer.");
    const sessionId = await latestSessionId();
    const events = await runArbor(["--db", db, "events", sessionId, "--json"]);
    expect(events.stdout).toMatch(/"type":"run\.ended".*"status":"interrupted"/);
    const context = await contextOf(sessionId);
    expect(context.diagnostics).toEqual([]);
    const users = context.messages.filter((message) => message.role === "user");
    expect(users).toHaveLength(1);
    expect(context.messages.at(-1).content[0].text).toBe("Here is the whole answer.");
    // The model was asked once for the prompt and once on continue; the prompt was sent once each time.
    const lastSent = server.requests.at(-1)!.body.messages as { role: string }[];
    expect(lastSent.filter((message) => message.role === "user")).toHaveLength(1);
  });

  it("imports a pi session, checks out an old entry, runs a turn on the new branch, and pi reads the export", async () => {
    const imported = await runArbor(["--db", db, "import", SAMPLE]);
    const sessionId = imported.stdout.trim().split("\n")[0];
    const checkout = await runArbor(["--db", db, "checkout", sessionId, "a0000002"]);
    expect(checkout.code, checkout.stderr).toBe(0);
    server.script(textResponse("On the new branch."));
    const result = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "--session", sessionId, "branch off here"], { env });
    expect(result.code, result.stderr).toBe(0);
    const ours = await contextOf(sessionId);
    expect(ours.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant", "user", "assistant"]);

    const out = join(dir, "export.jsonl");
    const exported = await runArbor(["--db", db, "export", sessionId, "-o", out]);
    expect(exported.code, exported.stderr).toBe(0);
    const piEntries = piContextsOf(readFileSync(out, "utf8"));
    const piContext = buildSessionContext(piEntries as never); // pi's leaf: the last line
    expect(JSON.parse(JSON.stringify(piContext.messages))).toEqual(ours.messages);
  });

  it("never writes the API key or URL credentials to the log, even when a provider or a tool echoes them", async () => {
    const key = "sk-test-SECRET-4242-abcdef";
    const readBytes = () => ["", "-wal"].map((suffix) => (existsSync(db + suffix) ? readFileSync(db + suffix).toString("latin1") : "")).join("");
    server.script(
      toolCallResponse([{ id: "call_env", name: "bash", arguments: { command: "tr '\\0' '\\n' < /proc/$PPID/environ | grep OPENAI_API_KEY || echo none" } }]),
      errorResponse(401, { error: { message: `Incorrect API key provided: ${key}`, type: "invalid_request_error" } }),
    );
    const result = await runArbor([...modelArgs(), "show the env"], { env: { OPENAI_API_KEY: key } });
    expect(result.code).toBe(1);
    expect(server.requests).toHaveLength(2);
    // The model did not see the key in the tool output, and the log holds it nowhere.
    const toolOutputSent = JSON.stringify(server.requests[1].body.messages);
    expect(toolOutputSent).toContain("OPENAI_API_KEY=[redacted]");
    expect(toolOutputSent).not.toContain(key);
    expect(readBytes()).not.toContain(key);
    expect(readBytes()).toContain("Incorrect API key provided: [redacted]");

    // URL credentials travel as Authorization: Basic (fetch refuses URLs that hold them) and are logged nowhere.
    const url = server.url.replace("http://", "http://user:PASSW0RD-xyz@");
    server.script(textResponse("via the proxy"));
    const withCredentials = await runArbor(["--db", db, "run", "--base-url", url, "--model", "openai:gpt-test", "--cwd", dir, "again"], { env: { OPENAI_API_KEY: key } });
    expect(withCredentials.code, withCredentials.stderr).toBe(0);
    expect(withCredentials.stdout).toContain("via the proxy");
    expect(server.requests.at(-1)!.headers.authorization).toBe(`Basic ${Buffer.from("user:PASSW0RD-xyz").toString("base64")}`);
    expect(withCredentials.stderr + withCredentials.stdout).not.toContain("PASSW0RD-xyz");
    expect(readBytes()).not.toContain("PASSW0RD-xyz");
    expect(readBytes()).not.toContain(key);
  });

  it("--idle-timeout cancels a stalled stream and retries it; a bad value is a usage error", async () => {
    server.script(hangResponse("stalled"), textResponse("recovered after the stall"));
    const result = await runArbor([...modelArgs(), "--idle-timeout", "0.5", "go"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/retrying in \d+ s \(attempt 1\): Idle timeout: the model sent nothing for 500 ms/);
    expect(result.stdout).toContain("recovered after the stall");
    const bad = await runArbor([...modelArgs(), "--idle-timeout", "soon", "go"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Bad --idle-timeout "soon": expected a number of seconds/);
  });

  it("a missing key prints one line with the prompt, exits 2, and creates or changes no session", async () => {
    const result = await runArbor([...modelArgs(), "remember me"], { env: { OPENAI_API_KEY: "" } });
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/OPENAI_API_KEY.*no session was created.*Your prompt was: "remember me"/);
    // Refused before the store is opened: not even the log file is created.
    expect(existsSync(db)).toBe(false);
    const none = await runArbor(["--db", db, "sessions", "--json"]);
    expect(JSON.parse(none.stdout)).toEqual([]);
    expect(server.requests).toHaveLength(0);
    // With a key the same command runs; a later keyless --continue leaves that session as it was.
    server.script(textResponse("remembered"));
    const retry = await runArbor([...modelArgs(), "remember me"], { env });
    expect(retry.code, retry.stderr).toBe(0);
    const sessionId = await latestSessionId();
    const before = await contextOf(sessionId);
    const again = await runArbor(["--db", db, "run", "--continue", "and more"], { env: { OPENAI_API_KEY: "" } });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`session ${sessionId} is unchanged`);
    expect(again.stderr).toContain('"and more"');
    expect(await contextOf(sessionId)).toEqual(before);
    const sessions = await runArbor(["--db", db, "sessions", "--json"]);
    expect(JSON.parse(sessions.stdout)).toHaveLength(1);
  });
});

describe("arbor run --inspect", { timeout: 180_000 }, () => {
  it("--inspect-host 0.0.0.0 widens it to every interface, and the help says the page is hosted", async () => {
    const { WebSocket } = await import("ws");
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    server.script(hangResponse("waiting"));
    let cli: import("node:child_process").ChildProcess | undefined;
    const run = runArbor([...modelArgs(), "--inspect", String(port), "--inspect-host", "0.0.0.0", "hello"], { env, onSpawn: (child) => (cli = child) });
    await waitForEvent((type, data) => type === "message.delta" && data.kind === "text");
    const socket = new WebSocket(`ws://127.0.0.2:${port}`);
    const opened = await new Promise<string>((resolve) => {
      socket.once("open", () => resolve("open"));
      socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    socket.close();
    cli!.kill("SIGINT");
    const result = await run;
    expect(opened).toBe("open");
    expect(result.stderr).toContain("other machines can connect");
    const help = await runArbor(["run", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toMatch(/--inspect \[port\].*127\.0\.0\.1.*hosted Stately UI.*redacted/);
    expect(help.stdout).toContain("--inspect-host");
  });

  it("serves redacted actor, event and snapshot records on a local WebSocket while the run goes on", async () => {
    const { WebSocket } = await import("ws");
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    server.script(hangResponse("Thinking about the secret"));
    const records: string[] = [];
    let cli: import("node:child_process").ChildProcess | undefined;
    const run = runArbor([...modelArgs(), "--inspect", String(port), "my secret prompt"], { env, onSpawn: (child) => (cli = child) });
    await waitForEvent((type, data) => type === "message.delta" && data.kind === "text");
    const socket = new WebSocket(`ws://127.0.0.1:${port}`);
    socket.on("message", (data) => records.push(data.toString()));
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    for (let attempt = 0; attempt < 200 && !records.some((record) => record.includes("@xstate.snapshot")); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    socket.close();
    // Loopback only by default (issue 12 item 9): another address of this host is refused.
    const elsewhere = new WebSocket(`ws://127.0.0.2:${port}`);
    const refused = await new Promise<string>((resolve) => {
      elsewhere.once("open", () => resolve("open"));
      elsewhere.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    elsewhere.terminate();
    expect(refused).toBe("ECONNREFUSED");
    cli!.kill("SIGINT");
    const result = await run;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain(`http://localhost:${port}`);
    expect(result.stderr).toMatch(/this machine only; the page loads the hosted Stately UI/);
    const all = records.join("\n");
    for (const type of ["@xstate.actor", "@xstate.event", "@xstate.snapshot"]) expect(all).toContain(type);
    expect(all).not.toContain("my secret prompt");
    expect(all).not.toContain("Thinking about the secret");
  });
});

describe("arbor checkout --summarize, compact and run --json", { timeout: 180_000 }, () => {
  it("summarizes the abandoned branch with the model, labels it, and refuses an empty compaction", async () => {
    const imported = await runArbor(["--db", db, "import", SAMPLE]);
    const sessionId = imported.stdout.trim().split("\n")[0];
    server.script(textResponse("## Goal\nThe alternative branch did C."));
    const modelFlags = ["--base-url", server.url, "--model", "openai:gpt-test"];
    const checkout = await runArbor(["--db", db, "checkout", sessionId, "a0000005", "--summarize", "--label", "back on main", ...modelFlags], { env });
    expect(checkout.code, checkout.stderr).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].body.tools ?? []).toEqual([]); // the summary call has no tools
    const tree = await runArbor(["--db", db, "tree", sessionId]);
    expect(tree.stdout).toMatch(/branch summary from a0000005: .*\[back on main\]/);
    // The leaf is on the summary the user asked for, not on the label entry (issue 12, new-user trial).
    const leafLine = tree.stdout.split("\n").find((line) => line.startsWith("*"));
    expect(leafLine).toMatch(/branch summary from a0000005/);
    expect(checkout.stdout).toMatch(/moved to a0000005; branch summary \S+ of the branch you left; labelled the summary "back on main"; the leaf is \S+/);
    const context = await contextOf(sessionId);
    expect(context.messages.at(-1).role).toBe("branchSummary");
    expect(context.messages.at(-1).summary).toContain("The alternative branch did C.");
    expect(context.messages.at(-2).content[0].text).toBe("Continuing on main.");

    const compact = await runArbor(["--db", db, "compact", sessionId, ...modelFlags], { env });
    expect(compact.code).toBe(1);
    expect(compact.stderr).toMatch(/Nothing to compact|nothing to compact/i);
    expect(server.requests).toHaveLength(1); // no summary call for an empty compaction
  });

  it("compact summarizes the older turns of a long session", async () => {
    const long = "lorem ipsum dolor sit amet ".repeat(4000); // ~27k tokens per prompt by pi's chars/4 estimate
    server.script(textResponse("first reply"), textResponse("second reply"), textResponse("## Goal\nSummarized the first turn."));
    const first = await runArbor([...modelArgs()], { env, input: `first: ${long}` });
    expect(first.code, first.stderr).toBe(0);
    const sessionId = await latestSessionId();
    const second = await runArbor(["--db", db, "run", "--cwd", dir, "--session", sessionId], { env, input: `second: ${long}` });
    expect(second.code, second.stderr).toBe(0);
    const compact = await runArbor(["--db", db, "compact", sessionId, "--instructions", "keep the replies"], { env });
    expect(compact.code, compact.stderr).toBe(0);
    expect(compact.stdout).toMatch(/^compaction \S+: \d+ tokens before; keeps from \S+/);
    const summaryRequest = JSON.stringify(server.requests.at(-1)!.body);
    expect(summaryRequest).toContain("keep the replies");
    const context = await contextOf(sessionId);
    expect(context.messages[0].role).toBe("compactionSummary");
    expect(context.messages[0].summary).toContain("Summarized the first turn.");
    expect(context.messages.at(-1).content[0].text).toBe("second reply");
    expect((await runArbor(["--db", db, "tree", sessionId])).stdout).toContain("compaction (");
  });

  it("run --json prints the logged events as JSON lines", async () => {
    server.script(textResponse("json mode"));
    // `--retention keep`: the deltas are among the events expected (the default deletes a kept reply's deltas, maybe before they are printed).
    const result = await runArbor(["--retention", "keep", ...modelArgs(), "--json", "hello"], { env });
    expect(result.code, result.stderr).toBe(0);
    const types = result.stdout.trim().split("\n").map((line) => JSON.parse(line).type as string);
    expect(types).toContain("run.started");
    expect(types).toContain("message.delta");
    expect(types.at(-1)).toBe("run.ended");
    expect(result.stdout).not.toContain("session ");
  });
});
