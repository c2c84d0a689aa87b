/**
 * `arbor chat` end to end: a real CLI process reading lines from stdin, a real SQLite
 * file, and the loopback OpenAI-wire server. A line typed while the agent works is
 * steering; `/followup` queues a follow-up; `/tree`, `/label`, `/name` and `/exit` work.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { startGatedModelServer } from "../http/gated-model-server.ts";
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

  it("expands /skill:name and prompt templates from the project, and runs /label and /checkout", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    mkdirSync(join(dir, ".arbor/skills/greeter"), { recursive: true });
    writeFileSync(join(dir, ".arbor/skills/greeter/SKILL.md"), "---\nname: greeter\ndescription: Greets people politely.\n---\nAlways greet with GREETER-BODY.\n");
    mkdirSync(join(dir, ".arbor/prompts"), { recursive: true });
    writeFileSync(join(dir, ".arbor/prompts/review.md"), "---\ndescription: Review a file\n---\nReview $1 carefully, focusing on $2.\n");
    server.script(textResponse("skill reply"), textResponse("template reply"));
    let stdin: NodeJS.WritableStream | undefined;
    const done = runArbor(["--db", db, "chat", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir], {
      env: { OPENAI_API_KEY: "test-key" },
      keepStdinOpen: true,
      onSpawn: (child) => (stdin = child.stdin!),
    });
    stdin!.write("/skill:greeter say hi to Ada\n");
    await server.waitForRequests(1);
    for (let attempt = 0; attempt < 200 && server.remaining() > 1; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 300));
    stdin!.write('/review src/a.ts "error handling"\n');
    await server.waitForRequests(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sessions = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string }[];
    const tree = await runArbor(["--db", db, "tree", sessions[0].id, "--json"]);
    const ids: string[] = [];
    const walk = (nodes: { entry: { id: string; type: string; message?: { role: string } }; children: unknown[] }[]) => {
      for (const node of nodes) {
        if (node.entry.type === "message" && node.entry.message?.role === "user") ids.push(node.entry.id);
        walk(node.children as never);
      }
    };
    walk(JSON.parse(tree.stdout).tree);
    stdin!.write(`/label ${ids[0]} first ask\n/checkout ${ids[1]}\n/exit\n`);
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.stringify(server.requests[0].body.messages)).toContain("GREETER-BODY");
    expect(JSON.stringify(server.requests[0].body.messages)).toContain("say hi to Ada");
    expect(JSON.stringify(server.requests[1].body.messages)).toContain("Review src/a.ts carefully, focusing on error handling.");
    expect(result.stdout).toContain("labelled");
    expect(result.stdout).toContain("Review src/a.ts"); // /checkout of a user message prints its text for re-editing
    const after = await runArbor(["--db", db, "tree", sessions[0].id]);
    expect(after.stdout).toContain("[first ask]");
  });

  it("runs commands typed during a run once it ends, in order, also when stdin ends first (a piped script)", async () => {
    const gated = await startGatedModelServer();
    try {
      gated.script({ text: "a held answer" });
      const dir = tempDir();
      const db = join(dir, "arbor.db");
      let stdin: NodeJS.WritableStream | undefined;
      let stdout = "";
      let queued: () => void = () => undefined;
      const allQueued = new Promise<void>((resolve) => (queued = resolve));
      const done = runArbor(["--db", db, "chat", "--base-url", gated.url, "--model", "openai:gpt-test", "--cwd", dir], {
        env: { OPENAI_API_KEY: "test-key" },
        keepStdinOpen: true,
        onSpawn: (child) => {
          stdin = child.stdin!;
          child.stdout!.on("data", (chunk: Buffer) => {
            stdout += chunk.toString("utf8");
            if ((stdout.match(/runs when the agent is idle/g) ?? []).length === 3) queued();
          });
        },
      });
      stdin!.write("hello there\n");
      await gated.waitForRequests(1);
      // The model holds its answer: these are typed during the run, then stdin ends.
      stdin!.write("/name scripted session\n!echo from-the-shell\n/thinking high\n");
      await allQueued;
      stdin!.end();
      gated.release(0);
      const result = await done;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("a held answer");
      // In order, after the answer.
      const order = ["a held answer", "> /name scripted session", "named", "from-the-shell", "thinking high"].map((text) => result.stdout.indexOf(text));
      expect(order.every((at) => at >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      const sessions = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string; name?: string }[];
      expect(sessions[0].name).toBe("scripted session");
      const context = JSON.parse((await runArbor(["--db", db, "context", sessions[0].id, "--json"])).stdout) as { thinkingLevel: string; messages: unknown[] };
      expect(context.thinkingLevel).toBe("high");
      expect(JSON.stringify(context.messages)).toContain("from-the-shell");
    } finally {
      await gated.close();
    }
  });
});
