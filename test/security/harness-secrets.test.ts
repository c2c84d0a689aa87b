/**
 * Issue 19 finding 3 through the library (no CLI): a secret registered with `createHarness` only
 * (the ExecutionEnv is given none) stays out of the bash spill file, the SQLite log file and WAL,
 * and the requests to the model, also when the model streams it 4 characters per chunk. Real HTTP
 * from @ai-sdk/openai to a loopback server, a real SQLite file, real bash.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createCodingTools } from "../../src/adapters/tools/index.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { startOpenAIServer, turnResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { tempDir } from "../cli/cli-helpers.ts";

const KEY = "tok-live-9fB2xQ7mR4kW8pZ3nV6cL1hJ5dS0gT";
let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
});

const forms = () => [KEY, Buffer.from(KEY).toString("base64").slice(0, 40), Buffer.from(KEY).toString("hex"), [...KEY].reverse().join("")];

describe("secrets registered with the harness", { timeout: 120_000 }, () => {
  it("reach neither the spill file, nor the log file, nor the model's requests", async () => {
    server = await startOpenAIServer();
    const root = tempDir("arbor-harness-secrets-");
    writeFileSync(join(root, "token.txt"), KEY);
    const dbPath = join(root, "arbor.db");
    const env = createExecutionEnv({ root, spillDir: join(tempDir("arbor-spill-"), "spill") });
    server.script(
      turnResponse({ text: `the token is ${KEY}`, toolCalls: [{ id: "c1", name: "bash", arguments: { command: "cat token.txt; echo; base64 token.txt; seq 3000" } }], chunkSize: 4 }),
      turnResponse({ text: "done", chunkSize: 4 }),
    );
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "sk-other", api: "chat" });
    const harness = await createHarness({ models: { main: model }, eventLogPath: dbPath, cwd: root, tools: createCodingTools(env), secrets: [KEY] });
    try {
      const outcome = await harness.prompt(`use ${KEY}`);
      expect(outcome.status).toBe("done");
    } finally {
      await harness.close();
    }
    const spill = [...readFileSync(dbPath).toString("latin1").matchAll(/\/[^"\s]*arbor-bash-[0-9a-f]+\.log/g)].map((match) => match[0]);
    expect(spill.length).toBeGreaterThan(0);
    const places: [string, string][] = [
      ["spill file", readFileSync(spill[0], "utf8")],
      ["requests", JSON.stringify(server.requests.map((request) => request.body))],
      ...["", "-wal"].filter((suffix) => existsSync(dbPath + suffix)).map((suffix): [string, string] => [`arbor.db${suffix}`, readFileSync(dbPath + suffix).toString("latin1")]),
    ];
    expect(places[0][1]).toContain("2999\n3000");
    for (const [where, text] of places) {
      const flat = text.replaceAll("\\n", "").replaceAll("\n", "");
      for (const form of forms()) expect(flat.includes(form), `${where} holds ${form}`).toBe(false);
    }
  });
});
