/**
 * The hook runner: holds the handlers of every hook point and combines their results by the rules in `hook-types.ts` (registration order, patches
 * field by field, first `block`/`cancel` wins). A throwing handler is recorded as `hook.failed` and skipped (`toolCall`: it blocks); changes are
 * recorded as `hook.applied` with field names only, synchronously and in order.
 */
import { InvalidArgumentError } from "../core/errors.ts";
import type { AgentMessage } from "../core/messages.ts";
import {
  HOOK_NAMES,
  type BeforeAgentStartEvent,
  type BeforeProviderRequestEvent,
  type HandlerOf,
  type HarnessHooks,
  type HookName,
  type ProviderRequestOptions,
  type SessionBeforeCompactEvent,
  type SessionBeforeCompactResult,
  type SessionBeforeTreeEvent,
  type SessionBeforeTreeResult,
  type ToolCallEvent,
  type ToolResultEvent,
  type HookSignatures,
} from "./hook-types.ts";

/** A diagnostic the runner emits; the harness logs it as an event of the same type. */
export type HookRecord =
  | { type: "hook.applied"; data: { hook: HookName; changes: string[] }; metadata?: Record<string, unknown> }
  | { type: "hook.failed"; data: { hook: HookName; error: string }; metadata?: Record<string, unknown> };

/** Options of {@link createHookRunner}. */
export interface HookRunnerOptions {
  /** Handlers registered at construction (before any `on()`). */
  hooks?: HarnessHooks;
  /** Receives `hook.applied` / `hook.failed` records, synchronously. */
  record?: (record: HookRecord) => void;
}

/** The outcome of the `toolCall` hook. */
export interface ToolCallDecision {
  block: boolean;
  reason?: string;
  /** The input to execute with (possibly mutated or replaced). */
  input: Record<string, unknown>;
}

/** The outcome of `sessionBeforeTree`: the preparation's overrides plus cancel/summary. */
export type TreeDecision = SessionBeforeTreeResult & { cancel: boolean };

/** Runs hook handlers. See the module contract. */
export interface HookRunner {
  /** Registers a handler after the existing ones; returns a function that removes it. Throws InvalidArgumentError for an unknown hook or a non-function. */
  on<Name extends HookName>(name: Name, handler: HandlerOf<Name>): () => void;
  /** True if at least one handler is registered for `name`. */
  has(name: HookName): boolean;
  /** Chains `messages` (appended) and `systemPrompt` (replaced); returns the final event. */
  beforeAgentStart(event: BeforeAgentStartEvent): Promise<BeforeAgentStartEvent>;
  /** Returns the messages for one model call (a clone when any handler ran). */
  context(messages: AgentMessage[]): Promise<AgentMessage[]>;
  /** Returns the patched stream options. */
  beforeProviderRequest(event: BeforeProviderRequestEvent): Promise<ProviderRequestOptions>;
  /** Returns the payload to send. */
  beforeProviderPayload(payload: unknown): Promise<unknown>;
  toolCall(event: ToolCallEvent): Promise<ToolCallDecision>;
  /** Returns the patched result fields. */
  toolResult(event: ToolResultEvent): Promise<ToolResultEvent>;
  sessionBeforeCompact(event: SessionBeforeCompactEvent): Promise<SessionBeforeCompactResult>;
  sessionBeforeTree(event: SessionBeforeTreeEvent): Promise<TreeDecision>;
  /** Runs an observe-only hook; return values are ignored. */
  observe<Name extends ObserveHookName>(name: Name, event: HookSignatures[Name][0]): Promise<void>;
}

/** Hooks whose handlers only observe. */
export type ObserveHookName =
  | "afterProviderResponse"
  | "sessionCompact"
  | "sessionTree"
  | "retryScheduled"
  | "retryAttemptStart"
  | "retryFinished"
  | "modelUpdate"
  | "thinkingLevelUpdate"
  | "toolsUpdate"
  | "resourcesUpdate";

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether a hook left a value as it was: equal JSON, or the same value when it cannot be serialised. */
export function sameJson(a: unknown, b: unknown): boolean {
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return a === b;
  }
}

/**
 * Creates a hook runner.
 * @throws nothing: handler failures become `hook.failed` records (or blocks, for `toolCall`).
 * @example
 * const runner = createHookRunner({ record: (r) => console.log(r.type, r.data) });
 * runner.on("toolCall", ({ toolName }) => (toolName === "rm" ? { block: true, reason: "denied" } : undefined));
 */
export function createHookRunner(options: HookRunnerOptions = {}): HookRunner {
  const handlers = new Map<HookName, HandlerOf<any>[]>(HOOK_NAMES.map((name) => [name, []]));
  const record = options.record ?? (() => {});
  for (const name of HOOK_NAMES) {
    const given = options.hooks?.[name];
    if (given === undefined) continue;
    handlers.get(name)!.push(...((Array.isArray(given) ? given : [given]) as HandlerOf<any>[]));
  }

  const list = (name: HookName) => [...(handlers.get(name) ?? [])];
  const failed = (hook: HookName, index: number, error: unknown) =>
    record({ type: "hook.failed", data: { hook, error: errorText(error) }, metadata: { handlerIndex: index } });
  const applied = (hook: HookName, changes: Set<string>, metadata?: Record<string, unknown>) => {
    if (changes.size > 0) record({ type: "hook.applied", data: { hook, changes: [...changes] }, metadata });
  };

  /** Runs each handler of `name`, skipping (and recording) throws; `visit` folds each result. */
  async function each<Name extends HookName>(
    name: Name,
    makeEvent: () => HookSignatures[Name][0],
    visit: (result: NonNullable<HookSignatures[Name][1]>) => boolean | void,
  ): Promise<void> {
    const all = list(name);
    for (let index = 0; index < all.length; index++) {
      let result: unknown;
      try {
        result = await all[index](makeEvent());
      } catch (error) {
        failed(name, index, error);
        continue;
      }
      if (result !== undefined && result !== null && visit(result as NonNullable<HookSignatures[Name][1]>) === true) return;
    }
  }

  return {
    on(name, handler) {
      const bucket = handlers.get(name);
      if (!bucket) throw new InvalidArgumentError(`Unknown hook "${String(name)}". Known hooks: ${HOOK_NAMES.join(", ")}.`);
      if (typeof handler !== "function") throw new InvalidArgumentError(`on("${name}"): the handler must be a function.`);
      bucket.push(handler as HandlerOf<any>);
      return () => {
        const at = bucket.indexOf(handler as HandlerOf<any>);
        if (at >= 0) bucket.splice(at, 1);
      };
    },
    has: (name) => (handlers.get(name)?.length ?? 0) > 0,

    async beforeAgentStart(event) {
      const current: BeforeAgentStartEvent = { ...event, messages: [...event.messages], images: [...event.images] };
      const changes = new Set<string>();
      await each("beforeAgentStart", () => ({ ...current, messages: [...current.messages] }), (result) => {
        if (result.messages?.length) {
          current.messages.push(...result.messages);
          changes.add("messages");
        }
        if (typeof result.systemPrompt === "string") {
          current.systemPrompt = result.systemPrompt;
          changes.add("systemPrompt");
        }
      });
      applied("beforeAgentStart", changes);
      return current;
    },

    async context(messages) {
      if (!this.has("context")) return messages;
      let current = structuredClone(messages);
      const changes = new Set<string>();
      await each("context", () => ({ messages: current }), (result) => {
        if (Array.isArray(result.messages)) {
          current = result.messages;
          changes.add("messages");
        }
      });
      applied("context", changes);
      return current;
    },

    async beforeProviderRequest(event) {
      const current: ProviderRequestOptions = { ...event.options };
      const changes = new Set<string>();
      await each("beforeProviderRequest", () => ({ ...event, options: { ...current } }), (result) => {
        for (const [key, value] of Object.entries(result)) {
          if (key === "model" || value === undefined) continue;
          (current as unknown as Record<string, unknown>)[key] = value;
          changes.add(key);
        }
      });
      applied("beforeProviderRequest", changes);
      return current;
    },

    async beforeProviderPayload(payload) {
      let current = payload;
      const changes = new Set<string>();
      await each("beforeProviderPayload", () => ({ payload: current }), (result) => {
        if (result.payload !== undefined) {
          current = result.payload;
          changes.add("payload");
        }
      });
      applied("beforeProviderPayload", changes);
      return current;
    },

    async toolCall(event) {
      let input = event.input;
      const before = structuredClone(event.input);
      const all = list("toolCall");
      const metadata = { toolCallId: event.toolCallId, toolName: event.toolName };
      for (let index = 0; index < all.length; index++) {
        try {
          const result = await all[index]({ toolCallId: event.toolCallId, toolName: event.toolName, input });
          if (result?.input !== undefined) input = result.input;
          if (result?.block === true) {
            record({ type: "hook.applied", data: { hook: "toolCall", changes: ["block"] }, metadata });
            return { block: true, reason: result.reason ?? "Tool execution was blocked", input };
          }
        } catch (error) {
          record({ type: "hook.failed", data: { hook: "toolCall", error: errorText(error) }, metadata: { ...metadata, handlerIndex: index } });
          record({ type: "hook.applied", data: { hook: "toolCall", changes: ["block"] }, metadata });
          return { block: true, reason: errorText(error), input };
        }
      }
      applied("toolCall", new Set(sameJson(before, input) ? [] : ["input"]), metadata);
      return { block: false, input };
    },

    async toolResult(event) {
      const current: ToolResultEvent = { ...event };
      const changes = new Set<string>();
      await each("toolResult", () => ({ ...current }), (result) => {
        for (const key of ["content", "details", "isError", "terminate"] as const) {
          if (result[key] === undefined) continue;
          (current as unknown as Record<string, unknown>)[key] = result[key];
          changes.add(key);
        }
      });
      applied("toolResult", changes, { toolCallId: event.toolCallId, toolName: event.toolName });
      return current;
    },

    async sessionBeforeCompact(event) {
      const outcome: SessionBeforeCompactResult = {};
      const changes = new Set<string>();
      await each("sessionBeforeCompact", () => event, (result) => {
        if (result.cancel === true) {
          outcome.cancel = true;
          delete outcome.compaction;
          changes.clear();
          changes.add("cancel");
          return true;
        }
        if (result.compaction) {
          outcome.compaction = result.compaction;
          changes.add("compaction");
        }
      });
      applied("sessionBeforeCompact", changes);
      return outcome;
    },

    async sessionBeforeTree(event) {
      const preparation = { ...event.preparation };
      const outcome: TreeDecision = { cancel: false };
      const changes = new Set<string>();
      await each("sessionBeforeTree", () => ({ ...event, preparation: { ...preparation } }), (result) => {
        if (result.cancel === true) {
          changes.clear();
          changes.add("cancel");
          for (const key of Object.keys(outcome)) delete (outcome as unknown as Record<string, unknown>)[key];
          outcome.cancel = true;
          return true;
        }
        if (result.summary) {
          outcome.summary = result.summary;
          changes.add("summary");
        }
        for (const key of ["customInstructions", "replaceInstructions", "label"] as const) {
          if (result[key] === undefined) continue;
          (preparation as Record<string, unknown>)[key] = result[key];
          (outcome as unknown as Record<string, unknown>)[key] = result[key];
          changes.add(key);
        }
      });
      applied("sessionBeforeTree", changes);
      return outcome;
    },

    async observe(name, event) {
      await each(name, () => event, () => {});
    },
  };
}
