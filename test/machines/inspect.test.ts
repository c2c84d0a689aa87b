/**
 * Inspection: a WebSocket client (`ws`) connected to the local @statelyai/inspect
 * server sees actor, event and snapshot records of the agent, run and tool actors,
 * with message and tool-argument content redacted by default.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createAgent } from "../../src/machines/agent.ts";
import { createArborInspector, redactContent, type ArborInspector } from "../../src/machines/inspect.ts";
import { fakeModel, memorySession, sleepTool } from "./helpers.ts";
import { freePort } from "../free-port.ts";


let inspector: ArborInspector | undefined;
afterEach(() => inspector?.stop());

describe("createArborInspector", () => {
  it("reports a busy port through ready (InvalidArgumentError) instead of crashing the process", async () => {
    const busy = createServer();
    const port = await new Promise<number>((resolve) => busy.listen(0, "127.0.0.1", () => resolve((busy.address() as { port: number }).port)));
    try {
      inspector = createArborInspector({ port });
      await expect(inspector.ready).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringMatching(new RegExp(`could not listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`)) });
      // A second inspector on a free port still works in the same process.
      const other = createArborInspector({ port: await freePort() });
      await expect(other.ready).resolves.toBeUndefined();
      other.stop();
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it("streams actor, event and snapshot records of agent, run and tool actors, redacted", async () => {
    const port = await freePort();
    inspector = createArborInspector({ port });
    const { session } = await memorySession();
    const model = fakeModel([{ toolCalls: [{ id: "call-1", name: "fast", arguments: { ms: 1, note: "SECRET-ARG" } as never }] }, { text: "SECRET-REPLY" }]);
    const agent = createAgent({ session, model, tools: [sleepTool("fast")], inspect: inspector.inspect });
    await agent.prompt("SECRET-PROMPT");
    await agent.dispose();

    const client = new WebSocket(`ws://127.0.0.1:${port}`);
    const records: { type: string; sessionId?: string; actorRef?: unknown; event?: { type: string }; snapshot?: unknown; [key: string]: unknown }[] = [];
    const raw: string[] = [];
    await new Promise<void>((resolve, reject) => {
      client.on("error", reject);
      client.on("message", (data) => {
        raw.push(String(data));
        records.push(JSON.parse(String(data)));
      });
      // The server replays its buffer (last 200 records) on connection.
      const check = setInterval(() => {
        if (records.length >= 50) {
          clearInterval(check);
          resolve();
        }
      }, 20);
    });
    client.close();
    const types = new Set(records.map((record) => record.type));
    expect(types).toEqual(new Set(["@xstate.actor", "@xstate.event", "@xstate.snapshot"]));
    const ids = new Set(records.map((record) => String(record.sessionId ?? "")));
    const all = raw.join("\n");
    expect(all).toContain('"agent"');
    expect(all).toContain("tool:call-1");
    expect(all).toMatch(/"run"/);
    expect(ids.size).toBeGreaterThan(2);
    expect(all).not.toContain("SECRET-PROMPT");
    expect(all).not.toContain("SECRET-ARG");
    expect(all).not.toContain("SECRET-REPLY");
    expect(all).toContain("[redacted");
  });

  it("redactContent keeps shapes, roles and ids but hides content", () => {
    const message = { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "/etc/passwd" } }, { type: "text", text: "hi" }] };
    expect(redactContent({ messages: [message, { role: "user", content: "secret" }] })).toEqual({
      messages: [
        { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "read", arguments: "[redacted 22 chars]" }, { type: "text", text: "[redacted 2 chars]" }] },
        { role: "user", content: "[redacted 6 chars]" },
      ],
    });
  });
});
