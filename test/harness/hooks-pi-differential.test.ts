/**
 * Differential tests: the same handler lists run through pi 0.73.1's real ExtensionRunner
 * and through Arbor's hook runner must combine the same way (where pi is the spec), and
 * differ on purpose where the issue asks for more (field-by-field chaining of session_before_*,
 * `terminate` in tool results, diagnostics).
 */
import { ExtensionRunner } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import type { AgentMessage, UserMessage } from "../../src/core/messages.ts";
import { createHookRunner, type HookRecord } from "../../src/harness/hooks.ts";
import type { HarnessHooks } from "../../src/harness/hook-types.ts";

type Handler = (event: any, ctx?: unknown) => unknown;

/** A pi runner with one extension per handler list entry (pi runs extensions in load order). */
function piRunner(handlers: Record<string, Handler[]>) {
  const extensions = Object.entries(handlers).map(([type, list], index) => ({
    path: `ext-${index}`,
    handlers: new Map([[type, list]]),
  }));
  const runner = new (ExtensionRunner as any)(extensions, {}, "/w", {}, {});
  const errors: { event: string; error: string }[] = [];
  runner.onError((error: { event: string; error: string }) => errors.push({ event: error.event, error: error.error }));
  return { runner, errors };
}

function arborRunner(hooks: HarnessHooks) {
  const records: HookRecord[] = [];
  return { runner: createHookRunner({ hooks, record: (record) => records.push(record) }), records };
}

const user = (text: string): UserMessage => ({ role: "user", content: text, timestamp: 1 });
const texts = (messages: AgentMessage[]) => messages.map((message) => (message as UserMessage).content);

describe("hook combination matches pi 0.73.1's ExtensionRunner", () => {
  it("context: chained replacements, throws skipped, handlers see a clone", async () => {
    const original = [user("a")];
    const list: Handler[] = [
      (event) => {
        event.messages[0].content = "mutated-in-place";
        return { messages: [...event.messages, user("b")] };
      },
      () => {
        throw new Error("broken handler");
      },
      (event) => ({ messages: [...event.messages, user("c")] }),
    ];
    const pi = piRunner({ context: list });
    const theirs = await pi.runner.emitContext(original);
    const arbor = arborRunner({ context: list as never });
    const ours = await arbor.runner.context(original);
    expect(texts(ours)).toEqual(texts(theirs));
    expect(texts(original)).toEqual(["a"]);
    expect(pi.errors).toEqual([{ event: "context", error: "broken handler" }]);
    expect(arbor.records.find((record) => record.type === "hook.failed")?.data).toEqual({ hook: "context", error: "broken handler" });
  });

  it("tool_result: partial patches chain field by field", async () => {
    const list: Handler[] = [
      () => ({ isError: true }),
      (event) => ({ content: [{ type: "text", text: `${event.isError ? "error" : "ok"}: patched` }] }),
      () => undefined,
      (event) => ({ details: { seenContent: event.content[0].text } }),
    ];
    const event = { toolName: "t", toolCallId: "c", input: {}, content: [{ type: "text" as const, text: "raw" }], details: { a: 1 }, isError: false };
    const theirs = await piRunner({ tool_result: list }).runner.emitToolResult({ type: "tool_result", ...event });
    const ours = await arborRunner({ toolResult: list as never }).runner.toolResult({ ...event, terminate: false });
    expect({ content: ours.content, details: ours.details, isError: ours.isError }).toEqual(theirs);
  });

  it("tool_call: in-place input mutation carries over and the first block wins", async () => {
    const calls: string[] = [];
    const list: Handler[] = [
      (event) => {
        calls.push("one");
        event.input.path = "/sandbox/file";
      },
      () => {
        calls.push("two");
        return { block: true, reason: "first block" };
      },
      () => {
        calls.push("three");
        return { block: true, reason: "second block" };
      },
    ];
    const piInput = { path: "/etc/shadow" };
    const theirs = await piRunner({ tool_call: list }).runner.emitToolCall({ type: "tool_call", toolName: "read", toolCallId: "c", input: piInput });
    const piCalls = calls.splice(0);
    const ourInput = { path: "/etc/shadow" };
    const ours = await arborRunner({ toolCall: list as never }).runner.toolCall({ toolName: "read", toolCallId: "c", input: ourInput });
    expect(calls).toEqual(piCalls);
    expect({ block: ours.block, reason: ours.reason }).toEqual(theirs);
    expect(ourInput).toEqual(piInput);
  });

  it("before_provider_request payload: chained, undefined keeps the payload", async () => {
    const piList: Handler[] = [(event) => ({ ...event.payload, a: 1 }), () => undefined, (event) => ({ ...event.payload, b: 2 })];
    const theirs = await piRunner({ before_provider_request: piList }).runner.emitBeforeProviderRequest({ model: "x" });
    const ours = await arborRunner({
      beforeProviderPayload: [({ payload }) => ({ payload: { ...(payload as object), a: 1 } }), () => undefined, ({ payload }) => ({ payload: { ...(payload as object), b: 2 } })],
    }).runner.beforeProviderPayload({ model: "x" });
    expect(ours).toEqual(theirs);
  });

  it("before_agent_start: each handler sees the chained system prompt; injected messages accumulate", async () => {
    const note = (text: string) => ({ role: "custom", customType: "n", content: text, display: false, timestamp: 1 });
    const piList: Handler[] = [
      (event) => ({ systemPrompt: `${event.systemPrompt}+A`, message: note("one") }),
      () => {
        throw new Error("skip me");
      },
      (event) => ({ systemPrompt: `${event.systemPrompt}+B`, message: note("two") }),
    ];
    const theirs = await piRunner({ before_agent_start: piList }).runner.emitBeforeAgentStart("p", [], "base", {});
    const ours = await arborRunner({
      beforeAgentStart: [
        (event) => ({ systemPrompt: `${event.systemPrompt}+A`, messages: [note("one") as AgentMessage] }),
        () => {
          throw new Error("skip me");
        },
        (event) => ({ systemPrompt: `${event.systemPrompt}+B`, messages: [note("two") as AgentMessage] }),
      ],
    }).runner.beforeAgentStart({ prompt: "p", images: [], messages: [], systemPrompt: "base" });
    expect(ours.systemPrompt).toBe(theirs.systemPrompt);
    expect(ours.messages).toEqual(theirs.messages);
  });

  it("session_before_tree: the first cancel wins in both", async () => {
    const list: Handler[] = [() => ({ label: "x" }), () => ({ cancel: true }), () => ({ label: "never" })];
    const preparation = { targetId: "t", oldLeafId: "o", commonAncestorId: null, entriesToSummarize: [], userWantsSummary: false };
    const theirs = await piRunner({ session_before_tree: list }).runner.emit({ type: "session_before_tree", preparation, signal: new AbortController().signal });
    const ours = await arborRunner({ sessionBeforeTree: list as never }).runner.sessionBeforeTree({ preparation, signal: new AbortController().signal });
    expect(theirs.cancel).toBe(true);
    expect(ours).toEqual({ cancel: true });
  });

  it("differs on purpose: session_before_tree results chain field by field (pi keeps only the last result)", async () => {
    const list: Handler[] = [() => ({ label: "from-first", customInstructions: "focus" }), () => ({ label: "from-second" })];
    const preparation = { targetId: "t", oldLeafId: "o", commonAncestorId: null, entriesToSummarize: [], userWantsSummary: false };
    const theirs = await piRunner({ session_before_tree: list }).runner.emit({ type: "session_before_tree", preparation, signal: new AbortController().signal });
    const ours = await arborRunner({ sessionBeforeTree: list as never }).runner.sessionBeforeTree({ preparation, signal: new AbortController().signal });
    expect(theirs).toEqual({ label: "from-second" });
    expect(ours).toEqual({ cancel: false, label: "from-second", customInstructions: "focus" });
  });

  it("differs on purpose: toolResult may also patch terminate (pi drops it)", async () => {
    const list: Handler[] = [() => ({ terminate: true })];
    const event = { toolName: "t", toolCallId: "c", input: {}, content: [], details: undefined, isError: false };
    const theirs = await piRunner({ tool_result: list }).runner.emitToolResult({ type: "tool_result", ...event });
    const ours = await arborRunner({ toolResult: list as never }).runner.toolResult({ ...event, terminate: false });
    expect(theirs).toBeUndefined();
    expect(ours.terminate).toBe(true);
  });
});
