/**
 * `arbor chat` end to end: a real CLI process reading lines from stdin, a real SQLite
 * file, and the loopback OpenAI-wire server. A line typed while the agent works is
 * steering; `/followup` queues a follow-up; `/tree`, `/label`, `/name` and `/exit` work.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

function userTexts(body: { messages: { role: string; content: unknown }[] }): string[] {
  return body.messages.filter((message) => message.role === "user").map((message) => JSON.stringify(message.content));
}

describe("arbor chat", { timeout: 180_000 }, () => {
  it("queues typed lines as steering and /followup as a follow-up, and runs slash commands", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    server.script(
      toolCallResponse([{ id: "call_wait", name: "bash", arguments: { command: "sleep 2; echo waited" } }]),
      textResponse("steered answer"),
      textResponse("follow-up answer"),
    );
    let stdin: NodeJS.WritableStream | undefined;
    const done = runArbor(["--db", db, "chat", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir], {
      env: { OPENAI_API_KEY: "test-key" },
      keepStdinOpen: true,
      onSpawn: (child) => (stdin = child.stdin!),
    });
    stdin!.write("start the work\n");
    await server.waitForRequests(1);
    // The tool is running now: these lines are queued, not new prompts.
    stdin!.write("also mention the weather\n");
    stdin!.write("/followup then check the result\n");
    await server.waitForRequests(3);
    for (let attempt = 0; attempt < 200; attempt++) {
      if (server.remaining() === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    stdin!.write("/name chat demo\n/tree\n/exit\n");
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("steered answer");
    expect(result.stdout).toContain("follow-up answer");
    expect(result.stdout).toMatch(/user: start the work/); // the /tree output

    const second = userTexts(server.requests[1].body);
    expect(second.at(-1)).toContain("also mention the weather"); // steering before the next model call
    expect(second.join(" ")).not.toContain("then check the result");
    const third = userTexts(server.requests[2].body);
    expect(third.at(-1)).toContain("then check the result"); // the follow-up, once the agent would stop
    const sessions = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout);
    expect(sessions[0].name).toBe("chat demo");
  });
});
