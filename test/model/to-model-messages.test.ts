/**
 * toModelMessages: Arbor messages → AI SDK ModelMessages, pairing repair, signatures,
 * and a differential check of the pairing rules against pi 0.73.1's transformMessages.
 */
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeSignature, encodeProviderMetadata, toModelMessages, wellFormed } from "../../src/adapters/model/index.ts";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/core/messages.ts";
import { assistant } from "./helpers.ts";

const result = (toolCallId: string, text: string, extra: Partial<ToolResultMessage> = {}): ToolResultMessage => ({
  role: "toolResult",
  toolCallId,
  toolName: "read",
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 0,
  ...extra,
});
const call = (id: string, args: Record<string, unknown> = {}) => ({ type: "toolCall" as const, id, name: "read", arguments: args });

describe("toModelMessages", () => {
  it("converts user text and images, assistant text/reasoning/tool calls, and tool results in call order", () => {
    const reasoningSignature = encodeProviderMetadata({ openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAA" } });
    const messages: AgentMessage[] = [
      { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: "aGk=", mimeType: "image/png" }], timestamp: 0 },
      assistant([{ type: "thinking", thinking: "hmm", thinkingSignature: reasoningSignature }, { type: "text", text: "reading" }, call("c1", { path: "a" }), call("c2", { path: "b" })]),
      result("c1", "A"),
      result("c2", "B failed", { isError: true }),
      assistant([{ type: "text", text: "done" }]),
    ];
    expect(toModelMessages(messages)).toEqual([
      { role: "user", content: [{ type: "text", text: "look" }, { type: "image", image: "aGk=", mediaType: "image/png" }] },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "hmm", providerOptions: { openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAA" } } },
          { type: "text", text: "reading" },
          { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a" } },
          { type: "tool-call", toolCallId: "c2", toolName: "read", input: { path: "b" } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "A" } },
          { type: "tool-result", toolCallId: "c2", toolName: "read", output: { type: "error-text", value: "B failed" } },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "done" }] },
    ]);
  });

  it("images in tool results become content output; an error with images says so in text", () => {
    const [, , tool] = toModelMessages([
      { role: "user", content: "x", timestamp: 0 },
      assistant([call("c1")]),
      result("c1", "", { content: [{ type: "image", data: "aW1n", mimeType: "image/jpeg" }], isError: true }),
    ]);
    expect(tool).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "c1",
          toolName: "read",
          output: { type: "content", value: [{ type: "text", text: "Error:" }, { type: "image-data", data: "aW1n", mediaType: "image/jpeg" }] },
        },
      ],
    });
  });

  it("skips error/aborted assistants, synthesizes 'No result provided' for missing results, drops orphan results", () => {
    const converted = toModelMessages([
      { role: "user", content: "go", timestamp: 0 },
      assistant([call("lost")], { stopReason: "aborted" }),
      result("lost", "orphan of an aborted message"),
      assistant([call("c1"), call("c2")]),
      result("c2", "only c2"),
      { role: "user", content: "next", timestamp: 0 },
      result("nowhere", "orphan"),
    ]);
    expect(converted.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(converted[2]).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c2", toolName: "read", output: { type: "text", value: "only c2" } },
        { type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "error-text", value: "No result provided" } },
      ],
    });
  });

  it("drops signatures and turns thinking into text for another model; keeps them for the same model", () => {
    const signature = encodeProviderMetadata({ anthropic: { signature: "sig" } });
    const message = assistant([{ type: "thinking", thinking: "deep", thinkingSignature: signature }, { type: "thinking", thinking: "", thinkingSignature: "x", redacted: true }, { type: "text", text: "hi" }], {
      provider: "anthropic",
      api: "anthropic-messages",
      model: "claude",
    });
    const other = toModelMessages([message], { provider: "openai", api: "openai-chat", modelId: "gpt-test" });
    expect(other).toEqual([{ role: "assistant", content: [{ type: "text", text: "deep" }, { type: "text", text: "hi" }] }]);
    const same = toModelMessages([message], { provider: "anthropic", api: "anthropic-messages", modelId: "claude" });
    expect(same[0].content).toEqual([
      { type: "reasoning", text: "deep", providerOptions: { anthropic: { signature: "sig" } } },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "x" } } },
      { type: "text", text: "hi" },
    ]);
  });

  it("splits pi's composite Responses ids (call|item) for the same model; makes ids portable for another model", () => {
    const composite = `call_abc|fc_${"x".repeat(60)}`;
    const longForeign = `toolu+${"y".repeat(70)}`;
    const messages: AgentMessage[] = [
      { role: "user", content: "go", timestamp: 0 },
      assistant([call(composite), call(longForeign)], { api: "openai-responses", provider: "openai", model: "gpt-5" }),
      result(composite, "one"),
      result(longForeign, "two"),
    ];
    const same = toModelMessages(messages, { provider: "openai", api: "openai-responses", modelId: "gpt-5" });
    expect((same[1].content as { toolCallId: string; providerOptions?: unknown }[])[0]).toMatchObject({ toolCallId: "call_abc", providerOptions: { openai: { itemId: `fc_${"x".repeat(60)}` } } });
    expect((same[2].content as { toolCallId: string }[]).map((part) => part.toolCallId)).toEqual(["call_abc", longForeign]);

    const other = toModelMessages(messages, { provider: "openai", api: "openai-chat", modelId: "gpt-4o" });
    const callIds = (other[1].content as { toolCallId: string }[]).map((part) => part.toolCallId);
    const resultIds = (other[2].content as { toolCallId: string }[]).map((part) => part.toolCallId);
    expect(callIds[0]).toBe("call_abc");
    expect(callIds[1]).toMatch(/^[A-Za-z0-9_-]{1,40}$/);
    expect(callIds[1]).not.toBe(longForeign);
    expect(resultIds).toEqual(callIds);
    // Distinct long ids stay distinct after shortening.
    const twin = toModelMessages([assistant([call(`${longForeign}1`), call(`${longForeign}2`)], { provider: "anthropic" })], { provider: "openai", api: "openai-chat", modelId: "gpt-4o" });
    const [first, second] = (twin[0].content as { toolCallId: string }[]).map((part) => part.toolCallId);
    expect(first).not.toBe(second);
  });

  it("understands pi's OpenAI Responses reasoning-item signature", () => {
    expect(decodeSignature(JSON.stringify({ type: "reasoning", id: "rs_9", summary: [], encrypted_content: "enc" }))).toEqual({ openai: { itemId: "rs_9", reasoningEncryptedContent: "enc" } });
    expect(encodeProviderMetadata({ openai: { itemId: null } })).toBeUndefined();
  });

  it("replaces unpaired surrogates with U+FFFD everywhere, keeps valid pairs", () => {
    expect(wellFormed("a\uD800b")).toBe("a\uFFFDb");
    expect(wellFormed("\uDC00x\uD83D\uDE00")).toBe("\uFFFDx\uD83D\uDE00");
    expect(wellFormed("\uD800")).toBe("\uFFFD"); // twice in a row: no regex state leaks
    expect(wellFormed("\uD800")).toBe("\uFFFD");
    const converted = toModelMessages([
      { role: "user", content: "bad\uD800", timestamp: 0 },
      assistant([call("c1")]),
      result("c1", "bin\uDFFF"),
    ]);
    expect(converted[0]).toEqual({ role: "user", content: "bad\uFFFD" });
    expect((converted[2].content as { output: { value: string } }[])[0].output.value).toBe("bin\uFFFD");
  });

  it("custom-like roles become user text; the input is not mutated", () => {
    const input: AgentMessage[] = [{ role: "compactionSummary", summary: "earlier", tokensBefore: 10, timestamp: 0 }];
    const copy = structuredClone(input);
    expect(toModelMessages(input)).toEqual([{ role: "user", content: "earlier" }]);
    expect(input).toEqual(copy);
  });
});

describe("pairing rules agree with pi 0.73.1 transformMessages (where pi is right)", () => {
  it("same kept messages and synthetic results on generated conversations without orphan results", async () => {
    const url = pathToFileURL(`${process.cwd()}/node_modules/@mariozechner/pi-ai/dist/providers/transform-messages.js`).href;
    const { transformMessages } = (await import(url)) as { transformMessages: (messages: unknown[], model: unknown) => AgentMessage[] };
    const model = { provider: "openai", api: "openai-responses", id: "gpt-test", input: ["text", "image"] };

    const step = fc.oneof(
      fc.constant<"user">("user"),
      fc.record({ calls: fc.integer({ min: 0, max: 3 }), answered: fc.integer({ min: 0, max: 3 }), stop: fc.constantFrom("stop", "error", "aborted") }),
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        const messages: AgentMessage[] = [];
        let id = 0;
        for (const item of steps) {
          if (item === "user") {
            messages.push({ role: "user", content: "u", timestamp: 0 });
            continue;
          }
          const calls = Array.from({ length: item.calls }, () => call(`c${id++}`));
          const stopReason = item.stop === "stop" && calls.length > 0 ? "toolUse" : (item.stop as AssistantMessage["stopReason"]);
          messages.push(assistant([{ type: "text", text: "t" }, ...calls], { stopReason }));
          // pi forwards orphan results (a result after a skipped error/aborted assistant); we drop them on purpose.
          if (stopReason === "error" || stopReason === "aborted") continue;
          for (const answered of calls.slice(0, item.answered)) messages.push(result(answered.id, "r"));
        }
        const pi = transformMessages(messages, model);
        const piShape = pi.map((message) =>
          message.role === "toolResult" ? `result:${message.toolCallId}:${message.isError ? "error" : "ok"}` : message.role === "assistant" ? `assistant:${message.content.filter((block) => block.type === "toolCall").map((block) => (block as { id: string }).id).join(",")}` : message.role,
        );
        const ours = toModelMessages(messages).flatMap((message) => {
          if (message.role === "tool") return message.content.map((part) => (part.type === "tool-result" ? `result:${part.toolCallId}:${part.output.type === "error-text" ? "error" : "ok"}` : "approval"));
          if (message.role === "assistant") return [`assistant:${(message.content as { type: string; toolCallId?: string }[]).filter((part) => part.type === "tool-call").map((part) => part.toolCallId).join(",")}`];
          return [message.role];
        });
        // pi inserts synthetic results after the real ones of the batch too; compare as multisets per batch by sorting within runs of results.
        const normalize = (shape: string[]) => {
          const out: string[] = [];
          let run: string[] = [];
          for (const entry of [...shape, "end"]) {
            if (entry.startsWith("result:")) run.push(entry);
            else {
              out.push(...run.sort());
              run = [];
              if (entry !== "end") out.push(entry);
            }
          }
          return out;
        };
        expect(normalize(ours)).toEqual(normalize(piShape));
      }),
      { numRuns: 200 },
    );
  });
});
