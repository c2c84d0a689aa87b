/**
 * Checks shared by the process tests of durable execution (`continuation-processes.test.ts`,
 * the "owner dies here" paths of `model-based.test.ts`, `crash.test.ts`): every call paired with
 * exactly one result, each call started and ended once, the run's final answer last.
 */
import { expect } from "vitest";
import type { AssistantMessage, ToolResultMessage } from "../../src/core/messages.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";

/** How many times each tool call id has an event of `type` in `events`. */
export function perCall(events: readonly StoredEvent[], type: "tool.started" | "tool.ended"): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of events) {
    if (event.type !== type) continue;
    const id = (event.data as { toolCallId: string }).toolCallId;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Each call of the log started once and ended once. */
export function checkCallsOnce(events: readonly StoredEvent[]): void {
  const started = perCall(events, "tool.started");
  const ended = perCall(events, "tool.ended");
  expect([...started.values()].every((n) => n === 1)).toBe(true);
  expect([...ended.values()].every((n) => n === 1)).toBe(true);
  expect([...ended.keys()].sort()).toEqual([...started.keys()].sort());
}

/** Every call of the context (of a completed assistant message) has exactly one result. */
export function checkResultsPaired(messages: { role: string }[]): void {
  const calls: string[] = [];
  const results: string[] = [];
  for (const message of messages) {
    if (message.role === "assistant") {
      const assistant = message as AssistantMessage;
      if (assistant.stopReason === "aborted" || assistant.stopReason === "error") continue;
      for (const block of assistant.content) if (block.type === "toolCall") calls.push(block.id);
    }
    if (message.role === "toolResult") results.push((message as ToolResultMessage).toolCallId);
  }
  expect(results.sort()).toEqual(calls.sort());
}

/** {@link checkResultsPaired}, and the last message is the final answer `text`. */
export function checkPairing(messages: { role: string }[], text = "all done"): void {
  checkResultsPaired(messages);
  const last = messages.at(-1) as AssistantMessage;
  expect(last.role).toBe("assistant");
  expect(last.content).toEqual([expect.objectContaining({ type: "text", text })]);
}
