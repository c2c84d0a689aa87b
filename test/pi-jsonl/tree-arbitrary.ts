/**
 * fast-check generator of pi v3 session trees with valid tool pairing: branches, compactions
 * at valid cut points (pi's findCutPoint rules), branch summaries, labels, model/thinking
 * changes, custom entries, custom messages, bash executions, session info, unknown kinds and
 * dead (error/aborted) assistants. Used by the differential tests against pi 0.73.1
 * ({@link opsArbitrary}) and, with the entries pi 1.x writes as well ({@link ops1xArbitrary}:
 * system messages, usage and context_edit entries, compactions with a system checkpoint and
 * usage or retaining nothing, deferred assistants, 1.x message fields), against pi 1.6.
 */
import fc from "fast-check";

export type PiEntry = Record<string, unknown> & { type: string; id: string; parentId: string | null; timestamp: string };

/** One generation step; interpreted by {@link buildTree}. */
export type Op =
  | { kind: "user"; text: string }
  | { kind: "turn"; calls: number; provider: number; withThinking: boolean }
  | { kind: "assistantText"; provider: number; stop: "stop" | "length" | "error" | "aborted"; deadCall: boolean }
  | { kind: "thinking"; level: number }
  | { kind: "model"; provider: number }
  | { kind: "tools"; names: number }
  | { kind: "custom" }
  | { kind: "customMessage"; asString: boolean; display: boolean }
  | { kind: "bash"; exclude: boolean; exitCode: number; output: boolean }
  | { kind: "label"; pick: number; clear: boolean }
  | { kind: "info"; name: string }
  | { kind: "unknown" }
  | { kind: "branch"; pick: number; summary: "none" | "empty" | "text"; usage?: boolean }
  | { kind: "compaction"; pick: number; checkpoint?: boolean; retainNone?: boolean }
  // pi 1.x
  | { kind: "system"; sections: boolean; tools: boolean; content: boolean }
  | { kind: "usage"; known: boolean }
  | { kind: "edit"; pick: number; mode: "omit" | "string" | "blocks" }
  | { kind: "turn1x"; calls: number; provider: number; deferred: boolean; nested: boolean };

const PROVIDERS = [
  ["anthropic", "claude-sonnet-4-5"],
  ["openai", "gpt-5"],
  ["google", "gemini-2.5-pro"],
] as const;
const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];

const word = fc.stringMatching(/^[a-z ]{0,12}$/);

/** An arbitrary list of operations. */
export const opsArbitrary: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant("user" as const), text: word }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("turn" as const), calls: fc.integer({ min: 0, max: 3 }), provider: fc.nat(2), withThinking: fc.boolean() }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("assistantText" as const),
        provider: fc.nat(2),
        stop: fc.constantFrom("stop" as const, "length" as const, "error" as const, "aborted" as const),
        deadCall: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("thinking" as const), level: fc.nat(5) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("model" as const), provider: fc.nat(2) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("tools" as const), names: fc.nat(3) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("custom" as const) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("customMessage" as const), asString: fc.boolean(), display: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("bash" as const), exclude: fc.boolean(), exitCode: fc.integer({ min: 0, max: 2 }), output: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("label" as const), pick: fc.nat(1000), clear: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("info" as const), name: word }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("unknown" as const) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("branch" as const), pick: fc.nat(1000), summary: fc.constantFrom("none" as const, "empty" as const, "text" as const) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("compaction" as const), pick: fc.nat(1000) }) },
  ),
  { minLength: 1, maxLength: 40 },
);

const baseOps = opsArbitrary;

/**
 * Operations of pi 1.x sessions: everything {@link opsArbitrary} makes plus system messages,
 * usage and context_edit entries, checkpointed and retain-none compactions, summaries with usage,
 * deferred assistants and 1.x message fields.
 */
export const ops1xArbitrary: fc.Arbitrary<Op[]> = fc
  .tuple(
    baseOps,
    fc.array(
      fc.oneof(
        { weight: 2, arbitrary: fc.record({ kind: fc.constant("system" as const), sections: fc.boolean(), tools: fc.boolean(), content: fc.boolean() }) },
        { weight: 2, arbitrary: fc.record({ kind: fc.constant("usage" as const), known: fc.boolean() }) },
        { weight: 5, arbitrary: fc.record({ kind: fc.constant("edit" as const), pick: fc.nat(1000), mode: fc.constantFrom("omit" as const, "string" as const, "blocks" as const) }) },
        { weight: 3, arbitrary: fc.record({ kind: fc.constant("turn1x" as const), calls: fc.integer({ min: 0, max: 2 }), provider: fc.nat(2), deferred: fc.boolean(), nested: fc.boolean() }) },
        {
          weight: 2,
          arbitrary: fc.record({ kind: fc.constant("compaction" as const), pick: fc.nat(1000), checkpoint: fc.boolean(), retainNone: fc.boolean() }),
        },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant("branch" as const), pick: fc.nat(1000), summary: fc.constant("text" as const), usage: fc.constant(true) }) },
      ),
      { minLength: 1, maxLength: 25 },
    ),
    fc.array(fc.nat(), { maxLength: 25 }),
  )
  .map(([base, extra, positions]) => {
    // Interleave the 1.x operations into the base ones (a system message first, as pi writes it, half the time).
    const ops = [...base];
    extra.forEach((op, index) => ops.splice((positions[index] ?? index) % (ops.length + 1), 0, op));
    return ops;
  });

/** A generated tree: entries in file order and the ids where a new turn may start. */
export interface GeneratedTree {
  entries: PiEntry[];
  /** Entries that are not inside a tool batch (safe leaves for new children). */
  boundaries: string[];
}

function isCutPoint(entry: PiEntry): boolean {
  if (entry.type === "branch_summary" || entry.type === "custom_message") return true;
  if (entry.type !== "message") return false;
  const role = (entry.message as { role: string }).role;
  return role === "user" || role === "assistant" || role === "bashExecution" || role === "custom";
}

/** Interprets operations into a pi v3 entry list with valid pairing. Deterministic. */
export function buildTree(ops: Op[], seed = 0): GeneratedTree {
  const entries: PiEntry[] = [];
  const byId = new Map<string, PiEntry>();
  const boundaries: string[] = [];
  let leaf: string | null = null;
  let clock = Date.UTC(2026, 0, 1) + seed * 1000;
  let counter = 0;
  let callCounter = 0;
  const nextId = () => `${(counter++).toString(16).padStart(6, "0")}${(seed % 256).toString(16).padStart(2, "0")}`;
  const add = (fields: Record<string, unknown> & { type: string }, boundary = true): PiEntry => {
    clock += 1000;
    // pi's field order: type, id, parentId, timestamp, then the rest.
    const { type, ...rest } = fields;
    const ordered = { type, id: nextId(), parentId: leaf, timestamp: new Date(clock).toISOString(), ...rest } as PiEntry;
    entries.push(ordered);
    byId.set(ordered.id, ordered);
    leaf = ordered.id;
    if (boundary) boundaries.push(ordered.id);
    return ordered;
  };
  const path = (): PiEntry[] => {
    const result: PiEntry[] = [];
    let current = leaf ? byId.get(leaf) : undefined;
    while (current) {
      result.unshift(current);
      current = current.parentId ? byId.get(current.parentId) : undefined;
    }
    return result;
  };
  const usage = (n: number) => ({ input: 10 * n, output: n, cacheRead: 0, cacheWrite: 0, totalTokens: 11 * n, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 * n } });
  const assistant = (provider: number, content: unknown[], stopReason: string, extra: Record<string, unknown> = {}) => ({
    role: "assistant",
    content,
    api: "test-api",
    provider: PROVIDERS[provider][0],
    model: PROVIDERS[provider][1],
    usage: usage(content.length + 1),
    stopReason,
    timestamp: clock + 1000,
    ...extra,
  });

  for (const op of ops) {
    switch (op.kind) {
      case "user":
        add({ type: "message", message: { role: "user", content: op.text.length % 2 ? op.text : [{ type: "text", text: op.text }], timestamp: clock + 1000 } });
        break;
      case "turn": {
        const calls = Array.from({ length: op.calls }, () => ({ type: "toolCall", id: `call_${callCounter++}`, name: "read", arguments: { path: `f${callCounter}.ts` } }));
        const content: unknown[] = [...(op.withThinking ? [{ type: "thinking", thinking: "hmm" }] : []), { type: "text", text: "working" }, ...calls];
        add({ type: "message", message: assistant(op.provider, content, calls.length ? "toolUse" : "stop") }, calls.length === 0);
        calls.forEach((call, index) => {
          add(
            { type: "message", message: { role: "toolResult", toolCallId: call.id, toolName: "read", content: [{ type: "text", text: `content ${call.id}` }], details: { n: index }, isError: index === 2, timestamp: clock + 1000 } },
            index === calls.length - 1,
          );
        });
        break;
      }
      case "assistantText": {
        const dead = op.stop === "error" || op.stop === "aborted";
        const content: unknown[] = [{ type: "text", text: "answer" }];
        if (dead && op.deadCall) content.push({ type: "toolCall", id: `call_${callCounter++}`, name: "bash", arguments: {} });
        add({ type: "message", message: assistant(op.provider, content, op.stop, dead ? { errorMessage: "Request was aborted" } : {}) });
        break;
      }
      case "thinking":
        add({ type: "thinking_level_change", thinkingLevel: LEVELS[op.level] });
        break;
      case "model":
        add({ type: "model_change", provider: PROVIDERS[op.provider][0], modelId: PROVIDERS[op.provider][1] });
        break;
      case "tools":
        add({ type: "active_tools_change", toolNames: ["read", "bash", "edit"].slice(0, op.names) });
        break;
      case "custom":
        add({ type: "custom", customType: "ext", data: { n: counter } });
        break;
      case "customMessage":
        add({ type: "custom_message", customType: "ext", content: op.asString ? "note" : [{ type: "text", text: "note block" }], display: op.display, details: { n: 1 } });
        break;
      case "bash":
        add({
          type: "message",
          message: { role: "bashExecution", command: "ls", output: op.output ? "a\nb" : "", exitCode: op.exitCode, cancelled: false, truncated: false, timestamp: clock + 1000, ...(op.exclude ? { excludeFromContext: true } : {}) },
        });
        break;
      case "label": {
        if (entries.length === 0) break;
        const target = entries[op.pick % entries.length].id;
        add(op.clear ? { type: "label", targetId: target } : { type: "label", targetId: target, label: `L${op.pick % 7}` });
        break;
      }
      case "info":
        add({ type: "session_info", name: op.name });
        break;
      case "unknown":
        add({ type: "future_kind", payload: { anything: [1, 2] } });
        break;
      case "branch": {
        const options = [null, ...boundaries];
        const target = options[op.pick % options.length];
        const from = leaf;
        leaf = target;
        if (op.summary !== "none") {
          add({
            type: "branch_summary",
            fromId: from ?? "root",
            summary: op.summary === "empty" ? "" : `summary of ${from}`,
            details: { readFiles: [], modifiedFiles: [] },
            ...(op.usage ? { usage: usage(5) } : {}),
          });
        }
        break;
      }
      case "system":
        add({
          type: "message",
          message: {
            role: "system",
            content: op.content ? `prompt ${counter}` : "",
            ...(op.sections ? { sections: { preamble: "You are pi.", [`s${counter % 3}`]: counter % 2 ? null : "more" } } : {}),
            ...(op.tools ? { toolsAdded: [{ name: "read", description: "Read a file", parameters: {} }], toolsRemoved: [{ name: "write" }] } : {}),
            timestamp: clock + 1000,
          },
        });
        break;
      case "usage":
        add({ type: "usage", kind: op.known ? "cache_warm" : "kind_from_pi_2", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(3), ...(op.known ? {} : { note: "later kind" }) });
        break;
      case "turn1x": {
        const calls = Array.from({ length: op.calls }, () => ({ type: "toolCall", id: `call_${callCounter++}`, name: "read", arguments: { path: `f${callCounter}.ts` } }));
        const stop = calls.length ? "toolUse" : op.deferred ? "deferred" : "stop";
        const extra = {
          responseModel: `${PROVIDERS[op.provider][1]}-2026`,
          responseId: `resp_${counter}`,
          thinkingLevel: "low",
          diagnostics: [{ kind: "retry", attempt: 1 }],
          usage: { ...usage(2), reasoning: 1, cacheWrite1h: 0 },
          ...(stop === "deferred" ? { deferred: { provider: PROVIDERS[op.provider][0], modelId: PROVIDERS[op.provider][1], api: "test-api", id: `batch_${counter}` } } : {}),
        };
        add({ type: "message", message: assistant(op.provider, [{ type: "text", text: "1x" }, ...calls], stop, extra) }, calls.length === 0);
        calls.forEach((call, index) => {
          add(
            {
              type: "message",
              message: {
                role: "toolResult",
                toolCallId: call.id,
                toolName: "read",
                content: [{ type: "text", text: `content ${call.id}` }],
                isError: false,
                timestamp: clock + 1000,
                ...(op.nested ? { usage: usage(1), nestedCalls: { calls: [{ id: "n1", name: "grep", status: "ok" }], complete: true } } : {}),
              },
            },
            index === calls.length - 1,
          );
        });
        break;
      }
      case "edit": {
        // Targets that keep tool pairing intact: omit anything but assistants with calls and tool
        // results; replace the content of user, custom and tool-result messages, assistants without calls, and others (no effect in pi).
        const targets = entries.filter((entry) => {
          if (entry.type === "context_edit" || entry.type === "label" || entry.type === "usage") return false;
          if (entry.type !== "message") return true;
          const message = entry.message as { role: string; content?: unknown; stopReason?: string };
          const hasCalls = message.role === "assistant" && Array.isArray(message.content) && (message.content as { type: string }[]).some((block) => block.type === "toolCall");
          if (op.mode === "omit") return message.role !== "toolResult" && !(hasCalls && message.stopReason !== "error" && message.stopReason !== "aborted");
          return !hasCalls;
        });
        if (targets.length === 0) break;
        const target = targets[op.pick % targets.length].id;
        const replacement = op.mode === "omit" ? null : op.mode === "string" ? { content: `edited ${target}` } : { content: [{ type: "text", text: `edited blocks ${target}` }] };
        add({ type: "context_edit", targetId: target, replacement });
        break;
      }
      case "compaction": {
        const current = path();
        if (current.length === 0 || current[current.length - 1].type === "compaction") break;
        // pi's range starts at the previous compaction's firstKeptEntryId.
        let start = 0;
        for (let index = current.length - 1; index >= 0; index--) {
          if (current[index].type === "compaction") {
            const kept = current.findIndex((entry) => entry.id === current[index].firstKeptEntryId);
            start = kept >= 0 ? kept : index + 1;
            break;
          }
        }
        const cuts = current.slice(start).filter(isCutPoint);
        if (cuts.length === 0) break;
        const cut = cuts[op.pick % cuts.length];
        const compaction = add({ type: "compaction", summary: `summary up to ${cut.id}`, firstKeptEntryId: cut.id, tokensBefore: 1000 + op.pick, details: { readFiles: [], modifiedFiles: [] } });
        // pi 1.x: retain-none names itself; the checkpoint is the replayed system state, with the summary's usage.
        if (op.retainNone) compaction.firstKeptEntryId = compaction.id;
        if (op.checkpoint) {
          compaction.usage = usage(4);
          compaction.systemMessage = { role: "system", content: `checkpoint ${compaction.id}`, sections: { preamble: "You are pi." }, toolsAdded: [], timestamp: clock };
        }
        break;
      }
    }
  }
  return { entries, boundaries };
}

/** The pi v3 JSONL text of a generated tree. */
export function toJsonl(entries: PiEntry[], id = "019b7a00-0000-7000-8000-00000000abcd"): string {
  const header = { type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp/generated" };
  return [header, ...entries].map((value) => JSON.stringify(value)).join("\n") + "\n";
}
