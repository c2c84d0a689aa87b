import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import type { ToolResultMessage } from "../../src/core/messages.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { errorResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { firstValueFrom, toArray, takeWhile } from "rxjs";
import { sharedPath } from "../shared-dir.ts";

const SKILLS = sharedPath("real-inputs/skills/anthropics");
const PROMPTS = sharedPath("real-inputs/prompts/pi-mono");
const API_KEY = "sk-test-SECRETKEY-0f9d8c7b6a";
const HEADER_VALUE = "hdr-SECRET-VALUE-5e4d3c";
const MODEL_HEADER_VALUE = "model-hdr-SECRET-7a7a7a";
const METADATA_VALUE = "meta-SECRET-9c9c9c";

type ChatMessage = { role: string; content: unknown; tool_call_id?: string };
const textOf = (message: ChatMessage) =>
  typeof message.content === "string" ? message.content : (message.content as { text?: string }[]).map((part) => part.text ?? "").join("");

describe("harness end to end over the OpenAI wire (real @ai-sdk/openai client, loopback server, SQLite file)", () => {
  let dir: string;
  let server: OpenAIServer;
  let harness: AgentHarness | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-harness-"));
    server = await startOpenAIServer();
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function allEvents(h: AgentHarness): Promise<StoredEvent[]> {
    const version = h.session.view.version;
    return firstValueFrom(h.events$.pipe(takeWhile((event) => event.version < version, true), toArray()));
  }

  it("runs tools, a blocking hook, a context hook, a skill and a template; logs no secret", async () => {
    const deleted: string[] = [];
    const order: string[] = [];
    const responses: number[] = [];
    harness = await createHarness({
      eventLogPath: join(dir, "arbor.db"),
      cwd: dir,
      models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: API_KEY, api: "chat", headers: { "x-model-secret": MODEL_HEADER_VALUE } }), contextWindow: 128_000 } },
      tools: [
        defineTool({ name: "read", description: "Read a file", parameters: z.object({ path: z.string() }), execute: async ({ path }) => ({ content: [{ type: "text", text: `contents of ${path}` }] }) }),
        {
          name: "add",
          description: "Add two integers",
          parameters: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] },
          execute: async (args: Record<string, unknown>) => ({ content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] }),
        },
        defineTool({ name: "delete_file", description: "Delete a file", parameters: z.object({ path: z.string() }), execute: async ({ path }) => (deleted.push(path), { content: [{ type: "text", text: "deleted" }] }) }),
      ],
      resources: { skillPaths: [SKILLS], promptTemplatePaths: [PROMPTS] },
      systemPrompt: "You are the e2e assistant.",
      streamOptions: { headers: { "x-api-secret": HEADER_VALUE }, metadata: { customer: METADATA_VALUE }, timeoutMs: 20_000 },
      hooks: {
        toolCall: [
          ({ toolName }) => void order.push(`toolCall:${toolName}`),
          ({ toolName, input }) => (toolName === "delete_file" && String(input.path).startsWith("/etc") ? { block: true, reason: "Deleting system files is not allowed." } : undefined),
        ],
        context: ({ messages }) => ({ messages: [...messages, { role: "user", content: "CONTEXT-HOOK-MARKER", timestamp: Date.now() }] }),
        beforeProviderPayload: ({ payload }) => ({ payload: { ...(payload as object), user: "payload-hook" } }),
        afterProviderResponse: ({ status }) => void responses.push(status),
      },
    });
    expect(harness.resourceDiagnostics.skills.filter((d) => d.severity === "error")).toEqual([]);

    // 1. A skill invocation; the model calls three tools; one is blocked by the hook.
    server.script(
      toolCallResponse([
        { id: "call_add", name: "add", arguments: { a: 2, b: 3 } },
        { id: "call_rm", name: "delete_file", arguments: { path: "/etc/passwd" } },
        { id: "call_bad", name: "add", arguments: { a: "two" } },
      ]),
      textResponse("All done."),
    );
    const first = await harness.prompt("/skill:webapp-testing check the login page");
    expect(first.status).toBe("done");
    expect(first.lastAssistant?.content).toEqual([{ type: "text", text: "All done." }]);

    const request0 = server.requests[0];
    expect(request0.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request0.headers["x-api-secret"]).toBe(HEADER_VALUE);
    expect(request0.body.user).toBe("payload-hook");
    expect(request0.body.metadata).toEqual({ customer: METADATA_VALUE });
    const messages0 = request0.body.messages as ChatMessage[];
    expect(textOf(messages0[0])).toContain("You are the e2e assistant.");
    expect(textOf(messages0[0])).toContain("<name>webapp-testing</name>");
    expect(textOf(messages0[1])).toMatch(/^<skill name="webapp-testing" location="[^"]+webapp-testing\/SKILL\.md">/);
    expect(textOf(messages0[1]).endsWith("check the login page")).toBe(true);
    expect(textOf(messages0.at(-1)!)).toBe("CONTEXT-HOOK-MARKER");
    expect((request0.body.tools as { function: { name: string } }[]).map((tool) => tool.function.name)).toEqual(["read", "add", "delete_file"]);

    const toolMessages = (server.requests[1].body.messages as ChatMessage[]).filter((message) => message.role === "tool");
    expect(toolMessages.map((message) => [message.tool_call_id, textOf(message)])).toEqual([
      ["call_add", "5"],
      // @ai-sdk/openai 4 (AI SDK 7) sends an error result on the Chat wire as `{"error": text}`.
      ["call_rm", JSON.stringify({ error: "Deleting system files is not allowed." })],
      ["call_bad", expect.stringMatching(/Invalid arguments for tool "add": (a: must be integer; )?b: must have required property 'b'|a: must be integer/)],
    ]);
    expect(deleted).toEqual([]);
    // Validation runs before the hook: the invalid call never reached toolCall.
    expect(order).toEqual(["toolCall:add", "toolCall:delete_file"]);
    expect(responses).toEqual([200, 200]);

    const results = first.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
    expect(results.map((result) => [result.toolName, result.isError])).toEqual([["add", false], ["delete_file", true], ["add", true]]);
    // The context hook's message was sent but never persisted.
    expect(JSON.stringify(harness.session.view.getEntries())).not.toContain("CONTEXT-HOOK-MARKER");

    // 2. A real prompt template with arguments.
    server.script(textResponse("Analyzed."));
    await harness.prompt("/is 1234 5678");
    const messages2 = server.requests[2].body.messages as ChatMessage[];
    const templateText = textOf(messages2.filter((message) => message.role === "user").at(-2)!);
    expect(templateText.startsWith("Analyze GitHub issue(s): 1234 5678")).toBe(true);

    // Hook traces: what changed, never the content.
    const events = await allEvents(harness);
    const traces = events.filter((event) => event.type === "hook.applied").map((event) => event.data as { hook: string; changes: string[] });
    expect(traces).toContainEqual({ hook: "toolCall", changes: ["block"] });
    expect(traces).toContainEqual({ hook: "context", changes: ["messages"] });
    expect(traces).toContainEqual({ hook: "beforeProviderPayload", changes: ["payload"] });
    expect(JSON.stringify(traces)).not.toContain("payload-hook");
    const blocked = events.filter((e) => isEventOfType(e, "tool.ended")).find((event) => event.data.toolCallId === "call_rm");
    expect(blocked?.data).toMatchObject({ outcome: "blocked", isError: true });

    // 3. No API key and no header value anywhere in the SQLite files.
    await harness.close();
    harness = undefined;
    const files = readdirSync(dir).filter((name) => name.startsWith("arbor.db"));
    expect(files).toContain("arbor.db");
    for (const name of files) {
      const bytes = readFileSync(join(dir, name));
      for (const secret of [API_KEY, HEADER_VALUE, MODEL_HEADER_VALUE, METADATA_VALUE]) expect(bytes.includes(Buffer.from(secret)), `${secret} in ${name}`).toBe(false);
      expect(bytes.includes(Buffer.from("CONTEXT-HOOK-MARKER"))).toBe(false);
    }
    // Sanity: the scan can find things that were logged.
    expect(readFileSync(join(dir, "arbor.db")).includes(Buffer.from("Analyzed.")) || files.some((name) => readFileSync(join(dir, name)).includes(Buffer.from("Analyzed.")))).toBe(true);
  });

  it("raises retry hooks from the logged retry events and applies beforeAgentStart and beforeProviderRequest", async () => {
    const seen: string[] = [];
    harness = await createHarness({
      eventLogPath: join(dir, "arbor.db"),
      cwd: dir,
      models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: API_KEY, api: "chat" }) },
      retry: { baseDelayMs: 1, maxDelayMs: 10 },
      hooks: {
        beforeAgentStart: ({ systemPrompt }) => ({ systemPrompt: `${systemPrompt}\nRUN-ONLY-INSTRUCTION`, messages: [{ role: "custom", customType: "note", content: "injected note", display: false, timestamp: Date.now() }] }),
        beforeProviderRequest: () => ({ headers: { "x-from-hook": "1" } }),
        retryScheduled: ({ attempt, status }) => void seen.push(`scheduled:${attempt}:${status}`),
        retryAttemptStart: ({ attempt }) => void seen.push(`start:${attempt}`),
        retryFinished: ({ attempt, success }) => void seen.push(`finished:${attempt}:${success}`),
      },
    });
    server.script(errorResponse(503), textResponse("recovered"));
    const outcome = await harness.prompt("hello");
    expect(outcome.status).toBe("done");
    expect(seen).toEqual(["scheduled:1:503", "start:1", "finished:1:true"]);
    const body = server.requests[1].body as { messages: ChatMessage[] };
    expect(textOf(body.messages[0])).toContain("RUN-ONLY-INSTRUCTION");
    expect(body.messages.map(textOf)).toContain("injected note");
    expect(server.requests[1].headers["x-from-hook"]).toBe("1");
    // The replacement lasts for one run only.
    server.script(textResponse("again"));
    harness.on("beforeAgentStart", () => undefined);
    expect(harness.getState().systemPrompt).not.toContain("RUN-ONLY-INSTRUCTION");
  });
  it("streamOptions: maxRetries 0 disables retries; cacheRetention long reaches the OpenAI body", async () => {
    const scheduled: number[] = [];
    harness = await createHarness({
      eventLogPath: join(dir, "arbor.db"),
      models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: API_KEY, api: "chat" }) },
      streamOptions: { maxRetries: 0, cacheRetention: "long" },
      hooks: { retryScheduled: ({ attempt }) => void scheduled.push(attempt) },
    });
    server.script(errorResponse(503), textResponse("never reached"));
    const outcome = await harness.prompt("hello");
    expect(outcome.status).toBe("failed");
    expect(server.requests).toHaveLength(1);
    expect(scheduled).toEqual([]);
    expect(server.requests[0].body.prompt_cache_retention).toBe("24h");
  });
});
