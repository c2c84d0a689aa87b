import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { runArbor, tempDir, type CliResult } from "./cli-helpers.ts";

/** Starts `arbor serve` and resolves with its URL once it printed it. */
function serve(args: string[], env: NodeJS.ProcessEnv): { ready: Promise<string>; exited: Promise<CliResult>; child: () => ChildProcess } {
  let child: ChildProcess | undefined;
  let resolveReady!: (url: string) => void;
  const ready = new Promise<string>((resolve) => (resolveReady = resolve));
  let seen = "";
  const exited = runArbor(["serve", ...args], {
    env,
    keepStdinOpen: true,
    onSpawn: (spawned) => {
      child = spawned;
      spawned.stderr!.on("data", (chunk: Buffer) => {
        seen += chunk.toString("utf8");
        const match = /arbor serve: (http:\/\/\S+)/.exec(seen);
        if (match) resolveReady(match[1]);
      });
    },
  });
  return { ready, exited, child: () => child! };
}

describe("arbor serve", () => {
  let model: OpenAIServer | undefined;
  afterEach(async () => {
    await model?.close();
    model = undefined;
  });

  it("refuses a non-loopback host without a token, before opening anything", async () => {
    const dir = tempDir();
    const result = await runArbor(["--db", join(dir, "arbor.db"), "serve", "--host", "0.0.0.0", "--port", "0"], { env: { ARBOR_TOKEN: "" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Refusing to serve on 0\.0\.0\.0 without a token.*--token or set ARBOR_TOKEN/);
  });

  it("serves useChat over the CLI's configuration: a DefaultChatTransport prompt streams the reply; SIGTERM stops it", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("Hello from arbor serve."));
    const dir = tempDir();
    const server = serve(["--db", join(dir, "arbor.db"), "--port", "0", "--cwd", dir, "--model", "openai:gpt-test", "--base-url", model.url], { OPENAI_API_KEY: "sk-test", ARBOR_TOKEN: "cli-token" });
    const url = await server.ready;
    expect((await fetch(`${url}/api/sessions`)).status).toBe(401);
    const transport = new DefaultChatTransport<UIMessage>({ api: `${url}/api/chat`, headers: { authorization: "Bearer cli-token" } });
    const stream = await transport.sendMessages({ chatId: "cli-chat", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }], trigger: "submit-message", messageId: undefined, abortSignal: undefined });
    let message: UIMessage | undefined;
    for await (const snapshot of readUIMessageStream({ stream })) message = snapshot;
    expect(message?.parts.filter((part) => part.type === "text")).toEqual([{ type: "text", text: "Hello from arbor serve.", state: "done" }]);
    const list: { sessions: { id: string }[] } = (await (await fetch(`${url}/api/sessions`, { headers: { authorization: "Bearer cli-token" } })).json()) as never;
    expect(list.sessions.map((row) => row.id)).toContain("cli-chat");
    server.child().kill("SIGTERM");
    const result = await server.exited;
    expect(result.code).toBe(0);
    expect(JSON.stringify(model.requests)).not.toContain("cli-token");
  });
});
