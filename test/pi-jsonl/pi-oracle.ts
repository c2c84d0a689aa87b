/**
 * The comparison the pi differential tests make, for one pi version's own functions (0.73.1
 * and 1.6 are passed in): for every entry taken as leaf, Arbor's context after import equals
 * pi's buildSessionContext (messages, thinkingLevel, model), and what Arbor's convertToLlm gives a
 * provider equals what pi's gives, system messages aside (Arbor's harness owns the system prompt).
 * A leaf inside a tool batch (assistant with calls, results still to come) is where Arbor repairs
 * on purpose: there Arbor = pi + one synthetic error result per unanswered call, and nothing else.
 */
import { expect } from "vitest";
import { exportPiSession } from "../../src/adapters/pi-jsonl/index.ts";
import { convertToLlm } from "../../src/core/convert-to-llm.ts";
import type { SessionView } from "../../src/store/session-types.ts";

/** A pi entry as its functions see it. */
export type AnyEntry = { type: string; id: string; parentId: string | null };

/** The pi functions a comparison needs (the same names in 0.73.1 and 1.6). */
export interface PiFunctions {
  parseSessionEntries(text: string): unknown[];
  migrateSessionEntries(entries: never): void;
  buildSessionContext(entries: never, leafId?: string | null): { messages: unknown[]; thinkingLevel: string; model: unknown };
  convertToLlm(messages: never): unknown[];
}

const PAIRING_KINDS = new Set(["missing_tool_result", "orphan_tool_result", "duplicate_tool_result"]);

/** JSON round trip: compare what a provider would receive (drops undefined-valued keys, as JSON does). */
export function json<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value));
}

function isSynthetic(message: { role: string; details?: unknown }): boolean {
  return message.role === "toolResult" && (message.details as { arborSynthetic?: boolean } | undefined)?.arborSynthetic === true;
}

/** Tool calls of live assistants in pi's context that have no result after them. */
function unansweredCalls(messages: readonly { role: string; content?: unknown; stopReason?: string; toolCallId?: string }[]): string[] {
  const open: string[] = [];
  for (const message of messages) {
    if (message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted" && Array.isArray(message.content)) {
      for (const block of message.content as { type: string; id: string }[]) if (block.type === "toolCall") open.push(block.id);
    } else if (message.role === "toolResult") {
      open.splice(open.indexOf(message.toolCallId!), 1);
    }
  }
  return open;
}

/** The comparisons against one pi version. */
export function piOracle(pi: PiFunctions) {
  const entriesOf = (text: string): AnyEntry[] => {
    const fileEntries = pi.parseSessionEntries(text) as AnyEntry[];
    pi.migrateSessionEntries(fileEntries as never);
    return fileEntries.filter((entry) => entry.type !== "session");
  };
  const contextOf = (entries: AnyEntry[], leafId: string | null | undefined) => {
    const context = pi.buildSessionContext(entries as never, leafId);
    return { messages: context.messages as { role: string }[], thinkingLevel: context.thinkingLevel, model: context.model };
  };
  /** What reaches a provider: pi's convertToLlm without system messages (pi-ai turns those into the system prompt). */
  const providerMessages = (messages: unknown[]) => pi.convertToLlm(messages as never).filter((message) => (message as { role: string }).role !== "system");

  /** Compares Arbor's context with pi's for every entry as leaf; `idOf` maps pi ids to Arbor ids. Returns the number of leaves. */
  const compareEveryLeaf = (view: SessionView, piEntries: AnyEntry[], idOf: (piId: string) => string = (id) => id): number => {
    let compared = 0;
    for (const piEntry of piEntries) {
      const expected = contextOf(piEntries, piEntry.id);
      const actual = view.buildContext({ leafId: idOf(piEntry.id) });
      const repairs = actual.diagnostics.filter((diagnostic) => PAIRING_KINDS.has(diagnostic.kind));
      const synthetic = actual.messages.filter(isSynthetic);
      expect(repairs.map((diagnostic) => diagnostic.kind).every((kind) => kind === "missing_tool_result")).toBe(true);
      expect(synthetic.map((message) => (message as { toolCallId: string }).toolCallId)).toEqual(unansweredCalls(expected.messages as never));
      expect(repairs.length).toBe(synthetic.length);
      const withoutRepairs = actual.messages.filter((message) => !isSynthetic(message));
      expect(json(withoutRepairs), `messages at leaf ${piEntry.id}`).toEqual(json(expected.messages));
      expect(actual.thinkingLevel).toEqual(expected.thinkingLevel);
      expect(json(actual.model)).toEqual(json(expected.model));
      expect(json(convertToLlm(expected.messages as never)), `pi's messages through Arbor's convertToLlm at leaf ${piEntry.id}`).toEqual(json(providerMessages(expected.messages)));
      expect(json(convertToLlm(withoutRepairs)), `provider messages at leaf ${piEntry.id}`).toEqual(json(providerMessages(expected.messages)));
      compared += 1;
    }
    return compared;
  };

  /** Export, parse with pi: every leaf again, and pi's default leaf (the last line) is Arbor's leaf. */
  const compareExport = (view: SessionView, text = exportPiSession(view)): void => {
    const exported = entriesOf(text);
    expect(exported.map((entry) => entry.id).sort()).toEqual(view.getEntries().map((entry) => entry.id).sort());
    const ids = new Set(exported.map((entry) => entry.id));
    for (const entry of exported) if (entry.parentId !== null) expect(ids.has(entry.parentId)).toBe(true);
    compareEveryLeaf(view, exported);
    if (view.leafId !== null) {
      const piDefault = contextOf(exported, undefined);
      const arbor = view.buildContext();
      expect(json(arbor.messages.filter((message) => !isSynthetic(message)))).toEqual(json(piDefault.messages));
      expect(json(arbor.model)).toEqual(json(piDefault.model));
      expect(arbor.thinkingLevel).toEqual(piDefault.thinkingLevel);
    }
  };

  return { entriesOf, contextOf, compareEveryLeaf, compareExport, isSynthetic };
}
