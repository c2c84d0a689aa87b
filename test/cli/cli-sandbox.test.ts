/**
 * `arbor run --sandbox bubblewrap`, `--allow-network`, `--env NAME` on the real wire (issue 19
 * finding 4): a real CLI process whose bash calls run under bwrap; the start-up line names the
 * sandbox; an unknown mode is a usage error.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

let server: OpenAIServer;
let dir: string;
beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
});
afterEach(async () => {
  await server.close();
});

const args = (...extra: string[]) => ["--db", join(dir, "arbor.db"), "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", join(dir, "work"), ...extra];

/** The text the model got back for its one bash call. */
function toolResultText(): string {
  const messages = server.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
  return JSON.stringify(messages.filter((message) => message.role === "tool").map((message) => message.content));
}

describe.skipIf(!existsSync("/usr/bin/bwrap"))("arbor run --sandbox", { timeout: 120_000 }, () => {
  it("runs bash under bubblewrap: outside files unseen, extra variables by --env, the start-up line says so", async () => {
    const outside = tempDir();
    writeFileSync(join(outside, "secret.txt"), "OUTSIDE-CLI-SECRET\n");
    const work = join(dir, "work");
    mkdirSync(work);
    server.script(
      toolCallResponse([{ id: "call_1", name: "bash", arguments: { command: `cat ${join(outside, "secret.txt")}; echo "extra=$ARBOR_CLI_EXTRA"; echo "hidden=$ARBOR_CLI_HIDDEN"; ls /proc | grep -c '^[0-9]'` } }]),
      textResponse("done"),
    );
    const result = await runArbor([...args("--sandbox", "bubblewrap", "--env", "ARBOR_CLI_EXTRA"), "look around"], {
      env: { OPENAI_API_KEY: "test-key", ARBOR_CLI_EXTRA: "passed", ARBOR_CLI_HIDDEN: "not-passed" },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^sandbox: bubblewrap \(root read-write, system read-only, no network/m);
    const text = toolResultText();
    expect(text).not.toContain("OUTSIDE-CLI-SECRET");
    expect(text).toContain("No such file or directory");
    expect(text).toContain("extra=passed");
    expect(text).toContain("hidden=\\n");
  });

  it("says when commands are unconfined, and refuses an unknown mode or --allow-network alone", async () => {
    mkdirSync(join(dir, "work"));
    server.script(textResponse("hi"));
    const plain = await runArbor([...args(), "hello"], { env: { OPENAI_API_KEY: "test-key" } });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(/^sandbox: none \(commands run unconfined/m);
    const unknown = await runArbor([...args("--sandbox", "docker"), "hello"], { env: { OPENAI_API_KEY: "test-key" } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--sandbox "docker" is unknown; use none or bubblewrap');
    const network = await runArbor([...args("--allow-network"), "hello"], { env: { OPENAI_API_KEY: "test-key" } });
    expect(network.code).toBe(2);
    expect(network.stderr).toContain("--allow-network needs --sandbox bubblewrap");
  });
});
