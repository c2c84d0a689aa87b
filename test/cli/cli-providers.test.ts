/**
 * `arbor run --model anthropic:… / google:…` end to end: a real CLI process, a real SQLite file,
 * and the real `@ai-sdk/anthropic` / `@ai-sdk/google` clients talking to the loopback server in
 * their own wire formats; `arbor sessions` shows what each session spent.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

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

const ANTHROPIC_KEY = "sk-ant-cli-SECRET-7777";
const GOOGLE_KEY = "AIza-cli-SECRET-8888";
const OPENAI_KEY = "sk-openai-cli-SECRET-9999";
const run = (model: string, prompt: string, extra: string[] = []) => ["--db", db, "run", "--base-url", server.url, "--model", model, "--cwd", dir, ...extra, prompt];
const logBytes = () => ["", "-wal"].map((suffix) => (existsSync(db + suffix) ? readFileSync(db + suffix).toString("latin1") : "")).join("");

describe("arbor run with anthropic: and google: models", { timeout: 180_000 }, () => {
  it("runs a tool round on Anthropic Messages, keeps every provider key out of tool output and the log, and sessions shows the spend", async () => {
    server.script(
      // The project's .env holds the other providers' keys (set in the environment too); the "model" prints it.
      toolCallResponse([{ id: "toolu_1", name: "bash", arguments: { command: "tr '\\n' '|' < .env" } }], {
        usage: { input: 5_000, cached: 4_000, cacheWrite: 900, output: 40 },
      }),
      textResponse("Printed.", { usage: { input: 5_100, cached: 4_900, cacheWrite: 150, output: 10 } }),
    );
    const env = { ANTHROPIC_API_KEY: ANTHROPIC_KEY, GOOGLE_GENERATIVE_AI_API_KEY: GOOGLE_KEY, OPENAI_API_KEY: OPENAI_KEY };
    writeFileSync(join(dir, ".env"), `GOOGLE_GENERATIVE_AI_API_KEY=${GOOGLE_KEY}\nOPENAI_API_KEY=${OPENAI_KEY}\n`);
    const result = await runArbor(run("anthropic:claude-test", "print the keys"), { env });
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests.map((request) => request.path)).toEqual(["/v1/messages", "/v1/messages"]);
    expect(server.requests[0].headers["x-api-key"]).toBe(ANTHROPIC_KEY);
    const toolResult = JSON.stringify(server.requests[1].body.messages);
    expect(toolResult).toContain("GOOGLE_GENERATIVE_AI_API_KEY=[redacted]|OPENAI_API_KEY=[redacted]|");
    for (const key of [ANTHROPIC_KEY, GOOGLE_KEY, OPENAI_KEY]) {
      expect(toolResult).not.toContain(key);
      expect(logBytes()).not.toContain(key);
    }

    const listed = await runArbor(["--db", db, "sessions", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const [session] = JSON.parse(listed.stdout) as { tokens: Record<string, number | null>; cost: number | null }[];
    // Anthropic's input_tokens exclude the cache: 100 + 50 fresh, 8,900 read, 1,050 written, 50 out.
    expect(session.tokens).toEqual({ input: 150, output: 50, cacheRead: 8_900, cacheWrite: 1_050, total: 10_150 });
    expect(session.cost).toBeNull(); // the CLI has no prices: unknown, not 0
    const text = await runArbor(["--db", db, "sessions"]);
    expect(text.stdout).toContain("10,150 tokens (8,900 cached)");
  });

  it("runs on Gemini's streamGenerateContent with GOOGLE_GENERATIVE_AI_API_KEY; the session records the provider for --continue", async () => {
    server.script(textResponse("Hi from Gemini.", { usage: { input: 2_000, cached: 1_500, output: 30, reasoning: 10 } }), textResponse("Again."));
    const env = { GOOGLE_GENERATIVE_AI_API_KEY: GOOGLE_KEY, GOOGLE_GENERATIVE_AI_BASE_URL: server.url };
    const first = await runArbor(["--db", db, "run", "--model", "google:gemini-test", "--cwd", dir, "hello"], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("Hi from Gemini.");
    const again = await runArbor(["--db", db, "run", "--cwd", dir, "--continue", "again"], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(server.requests.map((request) => request.path)).toEqual(["/v1/models/gemini-test:streamGenerateContent", "/v1/models/gemini-test:streamGenerateContent"]);
    expect(server.requests[1].headers["x-goog-api-key"]).toBe(GOOGLE_KEY);
    const [session] = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { tokens: Record<string, number | null> }[];
    expect(session.tokens).toMatchObject({ input: 500 + 10, cacheRead: 1_500, output: 30 + 5 });
  });

  it("says which variable is missing, refuses --api for a provider with one wire API, and names the providers it knows", async () => {
    const missing = await runArbor(run("anthropic:claude-test", "hello"), { env: { ANTHROPIC_API_KEY: "" } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/ANTHROPIC_API_KEY/);
    const api = await runArbor(run("google:gemini-test", "hello", ["--api", "chat"]), { env: { GOOGLE_GENERATIVE_AI_API_KEY: GOOGLE_KEY } });
    expect(api.code).toBe(2);
    expect(api.stderr).toMatch(/--api applies to openai models only/);
    const unknown = await runArbor(run("mistral:large", "hello"));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/use openai, anthropic or google/);
    server.script(errorResponse(401, { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${ANTHROPIC_KEY}` } }));
    const denied = await runArbor(run("anthropic:claude-test", "hello"), { env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
    expect(denied.code).toBe(1);
    expect(denied.stderr + denied.stdout).not.toContain(ANTHROPIC_KEY);
    expect(logBytes()).not.toContain(ANTHROPIC_KEY);
  });
});
