/**
 * Test helper: fast-check arbitraries for linear session paths (pi v3 entry
 * shapes) with user turns, tool loops, bash runs, custom messages, branch
 * summaries, settings entries and optional earlier compactions.
 */
import fc from "fast-check";
import type { SessionEntry } from "../../src/core/entries.ts";
import type { AgentMessage, AssistantMessage, ToolCall, Usage } from "../../src/core/messages.ts";

type Step =
  | { kind: "user"; size: number }
  | { kind: "assistant"; size: number; thinking: number; calls: { name: string; path: string; result: number }[]; usage: number | null }
  | { kind: "bash"; size: number }
  | { kind: "custom_message"; size: number }
  | { kind: "branch_summary"; size: number }
  | { kind: "setting"; which: "thinking_level_change" | "model_change" | "label" | "custom" }
  | { kind: "compaction"; size: number; back: number; withDetails: boolean };

const text = (size: number, seed: number) => "abcdefghij".repeat(Math.ceil(size / 10) + 1).slice(seed % 7, (seed % 7) + size);

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("user" as const), size: fc.integer({ min: 0, max: 4000 }) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("assistant" as const),
      size: fc.integer({ min: 0, max: 3000 }),
      thinking: fc.integer({ min: 0, max: 800 }),
      calls: fc.array(
        fc.record({
          name: fc.constantFrom("read", "write", "edit", "bash", "grep"),
          path: fc.constantFrom("src/a.ts", "src/b.ts", "README.md", "docs/x.md"),
          result: fc.integer({ min: 0, max: 12000 }),
        }),
        { maxLength: 3 },
      ),
      usage: fc.option(fc.integer({ min: 1, max: 200000 }), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("bash" as const), size: fc.integer({ min: 0, max: 2000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("custom_message" as const), size: fc.integer({ min: 1, max: 2000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("branch_summary" as const), size: fc.integer({ min: 1, max: 2000 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("setting" as const),
      which: fc.constantFrom("thinking_level_change" as const, "model_change" as const, "label" as const, "custom" as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("compaction" as const),
      size: fc.integer({ min: 1, max: 3000 }),
      back: fc.integer({ min: 0, max: 12 }),
      withDetails: fc.boolean(),
    }),
  },
);

export function usageOf(total: number): Usage {
  return { input: total - 10 > 0 ? total - 10 : total, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: total };
}

/** Builds a linear path of entries from steps. Tool results always follow their assistant. */
export function buildPath(steps: Step[], options: { toolMode?: "pi" | "arbor" } = {}): SessionEntry[] {
  const entries: SessionEntry[] = [];
  let clock = Date.UTC(2026, 0, 1);
  let counter = 0;
  const push = (entry: Record<string, unknown>) => {
    counter++;
    clock += 1000;
    const id = `e${String(counter).padStart(5, "0")}`;
    const full = { id, parentId: entries.length ? entries[entries.length - 1].id : null, timestamp: new Date(clock).toISOString(), ...entry };
    entries.push(full as unknown as SessionEntry);
    return full;
  };
  const message = (m: AgentMessage) => push({ type: "message", message: m });
  for (const step of steps) {
    switch (step.kind) {
      case "user":
        message({ role: "user", content: text(step.size, counter), timestamp: clock });
        break;
      case "assistant": {
        const content: AssistantMessage["content"] = [];
        if (step.thinking) content.push({ type: "thinking", thinking: text(step.thinking, counter + 1) });
        if (step.size) content.push({ type: "text", text: text(step.size, counter) });
        const calls: ToolCall[] = step.calls.map((call, index) => ({
          type: "toolCall",
          id: `call_${counter}_${index}`,
          name: call.name,
          arguments: { path: call.path, note: text(index * 7, index) },
        }));
        content.push(...calls);
        message({
          role: "assistant",
          content,
          api: "openai-chat",
          provider: "openai",
          model: "gpt-test",
          usage: step.usage === null ? usageOf(0) : usageOf(step.usage),
          stopReason: calls.length ? "toolUse" : "stop",
          timestamp: clock,
        });
        step.calls.forEach((call, index) => {
          message({
            role: "toolResult",
            toolCallId: calls[index].id,
            toolName: call.name,
            content: [{ type: "text", text: text(call.result, index) }],
            isError: false,
            timestamp: clock,
          });
        });
        break;
      }
      case "bash":
        message({ role: "bashExecution", command: "ls", output: text(step.size, 3), exitCode: 0, cancelled: false, truncated: false, timestamp: clock });
        break;
      case "custom_message":
        push({ type: "custom_message", customType: "note", content: text(step.size, 1), display: true });
        break;
      case "branch_summary":
        push({ type: "branch_summary", fromId: entries.length ? entries[entries.length - 1].id : "root", summary: text(step.size, 2) });
        break;
      case "setting":
        if (step.which === "thinking_level_change") push({ type: "thinking_level_change", thinkingLevel: "high" });
        else if (step.which === "model_change") push({ type: "model_change", provider: "openai", modelId: "gpt-x" });
        else if (step.which === "label") push({ type: "label", targetId: entries.length ? entries[0].id : "x", label: "L" });
        else push({ type: "custom", customType: "state", data: { n: counter } });
        break;
      case "compaction": {
        // firstKeptEntryId: a user/assistant message entry up to `back` entries back (never a tool result), like a real compaction.
        let kept: string | undefined;
        for (let index = entries.length - 1 - step.back; index >= 0; index--) {
          const entry = entries[index] as { type: string; message?: AgentMessage; id: string };
          if (entry.type === "message" && (entry.message!.role === "user" || entry.message!.role === "assistant")) {
            kept = entry.id;
            break;
          }
        }
        if (!kept) break;
        push({
          type: "compaction",
          summary: text(step.size, 5),
          firstKeptEntryId: kept,
          tokensBefore: 1000 + step.size,
          ...(step.withDetails ? { details: { readFiles: ["old/read.ts"], modifiedFiles: ["old/mod.ts"] } } : {}),
        });
        break;
      }
    }
  }
  void options;
  return entries;
}

export const pathArb = (maxLength = 40) => fc.array(stepArb, { minLength: 0, maxLength }).map((steps) => buildPath(steps));
