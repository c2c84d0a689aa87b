/**
 * The tool-pairing invariant, checked and repaired incrementally on every context built (ours; pi repairs only at provider level).
 * After repair each tool call is followed by exactly one `toolResult`, in call order, before any other message: a missing result becomes a synthetic
 * error result (`missing_tool_result`), orphan and duplicate results are dropped, each repair a diagnostic; results stored in completion order are
 * reordered silently. Calls of an `error` or `aborted` assistant message are not paired. `push` is O(1) amortized; never throws.
 */
import type { AgentMessage, AssistantMessage, ToolCall, ToolResultMessage } from "../../core/messages.ts";
import type { ContextDiagnostic } from "../session-types.ts";

/** Marker in `details` of a synthetic tool result made by the pairing repair (ours). */
export const SYNTHETIC_RESULT_DETAILS = { arborSynthetic: true, reason: "missing_tool_result" } as const;

/**
 * The text of a synthetic result for a call that has no result (ours): names the tool and call id and says the tool may not have run or finished and
 * may need to be run again.
 */
export function missingResultText(call: ToolCall): string {
  return (
    `No result was recorded for tool call "${call.name}" (id ${call.id}): the run ended before this tool finished ` +
    `(aborted, interrupted or crashed), so it may not have run or may not have finished. Check its effects; it may need ` +
    `to be run again.`
  );
}

interface Window {
  assistant: AssistantMessage;
  entryId: string | undefined;
  calls: ToolCall[];
  /** Result per call index. */
  results: (ToolResultMessage | undefined)[];
}

/** The repaired messages and the repairs made. Arrays are fresh copies. */
export interface PairingSnapshot {
  messages: AgentMessage[];
  diagnostics: ContextDiagnostic[];
}

/** An incremental pairing checker. Feed messages in context order. */
export interface Pairing {
  /** Adds the next context message (`entryId` is used in diagnostics). */
  push(message: AgentMessage, entryId?: string): void;
  /** The repaired context so far, with synthetic results for open calls. */
  snapshot(): PairingSnapshot;
  /** Number of messages pushed. */
  readonly pushed: number;
}

function isDeadAssistant(message: AssistantMessage): boolean {
  return message.stopReason === "error" || message.stopReason === "aborted";
}

function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return Array.isArray(message.content) ? message.content.filter((block): block is ToolCall => block?.type === "toolCall") : [];
}

function synthesize(window: Window, call: ToolCall): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: missingResultText(call) }],
    details: { ...SYNTHETIC_RESULT_DETAILS },
    isError: true,
    timestamp: window.assistant.timestamp,
  };
}

function missingDiagnostic(window: Window, call: ToolCall): ContextDiagnostic {
  return {
    kind: "missing_tool_result",
    message: `Tool call "${call.name}" (${call.id}) has no result; a synthetic error result was added.`,
    entryId: window.entryId,
    toolCallId: call.id,
  };
}

/** Creates an empty incremental pairing checker (see the module contract). */
export function createPairing(): Pairing {
  const closed: AgentMessage[] = [];
  const diagnostics: ContextDiagnostic[] = [];
  /** Call ids of closed windows: id → whether it was answered. */
  const closedCalls = new Map<string, boolean>();
  /** Call ids of error/aborted assistants. */
  const deadCalls = new Set<string>();
  let window: Window | undefined;
  let pushed = 0;

  const closeWindow = () => {
    if (!window) return;
    closed.push(window.assistant);
    window.calls.forEach((call, index) => {
      const result = window!.results[index];
      if (result) {
        closed.push(result);
      } else {
        closed.push(synthesize(window!, call));
        diagnostics.push(missingDiagnostic(window!, call));
      }
      closedCalls.set(call.id, result !== undefined);
    });
    window = undefined;
  };

  const pushResult = (message: ToolResultMessage, entryId: string | undefined) => {
    const id = message.toolCallId;
    if (window) {
      const index = window.calls.findIndex((call, i) => call.id === id && window!.results[i] === undefined);
      if (index >= 0) {
        window.results[index] = message;
        return;
      }
      if (window.calls.some((call) => call.id === id)) {
        diagnostics.push({
          kind: "duplicate_tool_result",
          message: `A second result for tool call ${id} was dropped.`,
          entryId,
          toolCallId: id,
        });
        return;
      }
    }
    const reason = deadCalls.has(id)
      ? `its assistant message ended with an error or abort, so the call never ran`
      : closedCalls.has(id)
        ? closedCalls.get(id)
          ? `that call already has a result`
          : `it arrived after the turn of its call had ended`
        : `no preceding assistant message made that call`;
    diagnostics.push({
      kind: closedCalls.get(id) ? "duplicate_tool_result" : "orphan_tool_result",
      message: `A result for tool call ${id} (${message.toolName}) was dropped: ${reason}.`,
      entryId,
      toolCallId: id,
    });
  };

  return {
    get pushed() {
      return pushed;
    },
    push(message, entryId) {
      pushed += 1;
      if (message.role === "toolResult") {
        pushResult(message, entryId);
        return;
      }
      closeWindow();
      if (message.role === "assistant") {
        const calls = toolCallsOf(message);
        if (isDeadAssistant(message)) {
          for (const call of calls) deadCalls.add(call.id);
        } else if (calls.length > 0) {
          window = { assistant: message, entryId, calls, results: calls.map(() => undefined) };
          return;
        }
      }
      closed.push(message);
    },
    snapshot() {
      const messages = closed.slice();
      const all = diagnostics.slice();
      if (window) {
        messages.push(window.assistant);
        window.calls.forEach((call, index) => {
          const result = window!.results[index];
          if (result) {
            messages.push(result);
          } else {
            messages.push(synthesize(window!, call));
            all.push(missingDiagnostic(window!, call));
          }
        });
      }
      return { messages, diagnostics: all };
    },
  };
}

/** Repairs a whole message list at once (see the module contract). */
export function repairToolPairing(messages: readonly AgentMessage[]): PairingSnapshot {
  const pairing = createPairing();
  for (const message of messages) pairing.push(message);
  return pairing.snapshot();
}
