/**
 * `arbor chat --approve` (issue 13): a real CLI process reading lines from stdin, a real SQLite
 * file, the loopback OpenAI-wire server. A gated bash call is asked on stdout; the next line
 * answers it: `y` runs it once and the run goes on; any other line denies it, with that line as
 * the reason the model reads.
 */
import { existsSync, readFileSync } from "node:fs";
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

async function chatWithAnswer(answer: string) {
  const dir = tempDir();
  const db = join(dir, "arbor.db");
  const marker = join(dir, "ran.txt");
  server.script(toolCallResponse([{ id: "call_gated", name: "bash", arguments: { command: `echo ran >> ${marker}` } }]), textResponse("all done"));
  let stdin: NodeJS.WritableStream | undefined;
  let stdout = "";
  let asked!: () => void;
  const question = new Promise<void>((resolve) => (asked = resolve));
  const done = runArbor(["--db", db, "chat", "--approve", "bash", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir], {
    env: { OPENAI_API_KEY: "test-key" },
    keepStdinOpen: true,
    onSpawn: (child) => {
      stdin = child.stdin!;
      child.stdout!.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (stdout.includes("(call_gated)?")) asked();
      });
    },
  });
  stdin!.write("clean up\n");
  await question;
  expect(existsSync(marker)).toBe(false); // nothing of the gated call ran before the answer
  stdin!.write(`${answer}\n`);
  await server.waitForRequests(2);
  for (let attempt = 0; attempt < 200 && !stdout.includes("all done"); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
  stdin!.write("/exit\n");
  const result = await done;
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toMatch(/approve bash \{"command":"echo ran >> .*"\} \(call_gated\)\?/);
  expect(result.stdout).toContain("all done");
  const results = (server.requests[1].body.messages as { role: string; tool_call_id?: string; content: unknown }[]).filter((message) => message.role === "tool");
  expect(results.map((message) => message.tool_call_id)).toEqual(["call_gated"]);
  return { ran: existsSync(marker) ? readFileSync(marker, "utf8") : "", result: JSON.stringify(results[0].content) };
}

describe("arbor chat --approve", { timeout: 180_000 }, () => {
  it("y: the gated call runs once and the run goes on", async () => {
    const { ran } = await chatWithAnswer("y");
    expect(ran).toBe("ran\n");
  });

  it("any other line denies, and the model reads it as the reason", async () => {
    const { ran, result } = await chatWithAnswer("not in this folder");
    expect(ran).toBe("");
    expect(result).toContain("not in this folder");
  });
});
