/**
 * Issue 19 finding 3, end to end: a key registered with the harness (the CLI registers the API
 * key) appears nowhere — log file bytes, WAL, `export`, `events --json`, `context --json`, bash
 * spill files, stdout, stderr, requests to the model — in its literal form, reversed, hex, base64 or
 * base64url, split over two lines or not, including when the model streams it 4 characters per
 * chunk. A real `arbor run` process, a real SQLite file, real HTTP to a loopback OpenAI server.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, turnResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";

const KEY = "sk-test-Zq8RvT2mWx5KpL9nBc4HjD7fGs3Ya6Ue";

/** The encodings of KEY to look for, computed here independently of the redactor. */
function needles(): string[] {
  const bytes = Buffer.from(KEY);
  const found = [KEY, [...KEY].reverse().join(""), bytes.toString("hex"), bytes.toString("hex").toUpperCase()];
  for (let align = 0; align < 3; align += 1) {
    // The middle of the key's base64 at each alignment inside a longer text.
    const encoded = Buffer.concat([Buffer.from("xyz").subarray(0, align), bytes]).toString("base64");
    found.push(encoded.slice(4, -4), Buffer.concat([Buffer.from("xyz").subarray(0, align), bytes]).toString("base64url").slice(4, -4));
  }
  return found;
}

/** Text with line breaks (real, JSON-escaped, or SQLite's) removed, so a key split over lines is found. */
const joined = (text: string) => text.replaceAll("\\r", "").replaceAll("\\n", "").replaceAll("\r", "").replaceAll("\n", "");

function expectNoKey(where: string, text: string) {
  const flat = joined(text);
  for (const needle of needles()) {
    expect(text.includes(needle), `${where} holds ${needle}`).toBe(false);
    expect(flat.includes(needle), `${where} holds ${needle} split over lines`).toBe(false);
  }
}

let server: OpenAIServer;
let dir: string;
let db: string;

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir("arbor-secrets-");
  db = join(dir, "arbor.db");
});
afterEach(async () => {
  await server.close();
});

describe("a registered secret appears nowhere", { timeout: 180_000 }, () => {
  it("in the log, WAL, exports, spill files, stdout or requests, also streamed 4 characters per chunk", async () => {
    writeFileSync(join(dir, ".env"), `OPENAI_API_KEY=${KEY}\n`);
    const b64 = Buffer.from(KEY).toString("base64");
    const command = "cat .env; base64 .env; base64 -w0 .env | tr '+/' '-_'; echo; xxd -p .env; rev .env; fold -w 17 .env; seq 3000";
    server.script(
      turnResponse({
        text: `Found it: ${KEY} (base64 ${b64}, hex ${Buffer.from(KEY).toString("hex")}, split ${KEY.slice(0, 15)}\n${KEY.slice(15)}).`,
        toolCalls: [
          { id: "call_bash", name: "bash", arguments: { command } },
          { id: "call_read", name: "read", arguments: { path: ".env" } },
        ],
        chunkSize: 4,
      }),
      turnResponse({ text: `All done, the key ends in ${KEY.slice(-20)} and starts with ${KEY.slice(0, 20)}`, chunkSize: 4 }),
    );
    const run = await runArbor(
      // `--retention keep`: the stored deltas are checked below (the default deletes them once the reply is kept).
      ["--db", db, "--retention", "keep", "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, `look for ${KEY} in .env`],
      { env: { OPENAI_API_KEY: KEY } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests).toHaveLength(2);

    // The stream was redacted before its deltas were stored; the rest of the text survived.
    expect(run.stdout).toContain("Found it: [redacted]");
    expect(run.stdout).toContain("All done");
    expectNoKey("stdout", run.stdout);
    expectNoKey("stderr", run.stderr);

    // Requests to the model: the user prompt, the assistant's own earlier text, the tool results.
    const requests = JSON.stringify(server.requests.map((request) => request.body));
    expect(requests).toContain("look for [redacted] in .env");
    expect(requests).toContain("OPENAI_API_KEY=[redacted]");
    expectNoKey("requests to the model", requests);

    // Log file bytes and the WAL, read raw.
    for (const suffix of ["", "-wal", "-shm"]) {
      if (existsSync(db + suffix)) expectNoKey(`arbor.db${suffix}`, readFileSync(db + suffix).toString("latin1"));
    }
    // The stored deltas, reassembled per message, hold no key either (old main stored it split).
    const log = createSqliteEventLog({ path: db });
    const events = await log.readAll();
    await log.close();
    const assembled = new Map<string, string>();
    for (const event of events) {
      if (event.type !== "message.delta") continue;
      const data = event.data as { messageId: string; kind: string; contentIndex: number; delta: string };
      const id = `${data.messageId}/${data.kind}/${data.contentIndex}`;
      assembled.set(id, (assembled.get(id) ?? "") + data.delta);
    }
    expect([...assembled.values()].join(" ")).toContain("Found it: [redacted]");
    expectNoKey("reassembled deltas", [...assembled.values()].join("\n---\n"));

    // The bash spill file (seq 3000 overflows 2000 lines): redacted too.
    const spill = events.flatMap((event) => {
      const path = (event.data as { result?: { details?: { fullOutputPath?: string } } }).result?.details?.fullOutputPath;
      return path ? [path] : [];
    });
    const spillPaths = [...new Set([...JSON.stringify(events).matchAll(/\/[^"\s]*arbor-bash-[0-9a-f]+\.log/g)].map((match) => match[0]).concat(spill))];
    expect(spillPaths.length).toBeGreaterThan(0);
    for (const path of spillPaths) {
      const text = readFileSync(path, "utf8");
      expect(text).toContain("OPENAI_API_KEY=[redacted]");
      expect(text).toContain("2999\n3000");
      expectNoKey(`spill file ${path}`, text);
    }

    // What the CLI prints from the log.
    const sessionId = (JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string }[])[0].id;
    for (const args of [["export", sessionId], ["events", sessionId, "--json"], ["context", sessionId, "--json"], ["events", sessionId]]) {
      const result = await runArbor(["--db", db, ...args]);
      expect(result.code, result.stderr).toBe(0);
      expectNoKey(`arbor ${args.join(" ")}`, result.stdout + result.stderr);
    }
  });
});
