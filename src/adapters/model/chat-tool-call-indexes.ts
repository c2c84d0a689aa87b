/**
 * Distinct `index`es for Chat Completions tool calls with distinct ids.
 *
 * Some OpenAI-compatible servers give every tool call of a response the same
 * `choices[].delta.tool_calls[].index` (often 0) while each call has its own `id`.
 * `@ai-sdk/openai` 3.x tracks calls by index first, so the second call's argument pieces
 * are appended to the first call's (`{"path":"a"}{"path":"b"}`) and the second call is
 * lost. This transform, in front of the AI SDK's parser, routes pieces by id: a delta
 * whose non-blank `id` is new while its `index` already belongs to another call gets a
 * fresh index; a delta naming a known id gets that id's index; a delta without an id (or
 * with a blank one, as qwen sends) continues the call last seen at its index. A delta with no
 * `index` at all (some OpenAI-compatible servers omit it; the AI SDK then fails the step) gets
 * one: its id's, a fresh one for a new id, or, without an id, the index of the call seen last.
 *
 * Contract (ours): a byte-for-byte no-op for streams whose indexes already match their ids;
 * frames that are not JSON pass through untouched; SSE framing is preserved. Never throws.
 *
 * @example
 * ```ts
 * const fixed = new Response(response.body!.pipeThrough(distinctChatToolCallIndexes()), response);
 * ```
 */
import { rewriteDataLines, sseFrameRewriter } from "./sse-frames.ts";

type ToolCallDelta = { index?: unknown; id?: unknown };
type Chunk = { choices?: { index?: unknown; delta?: { tool_calls?: ToolCallDelta[] } }[] };

/**
 * A TransformStream over Chat Completions SSE bytes that gives calls with different ids
 * different indexes (see the module contract).
 *
 * @example
 * ```ts
 * const fixed = new Response(response.body!.pipeThrough(distinctChatToolCallIndexes()), response);
 * ```
 */
export function distinctChatToolCallIndexes(): TransformStream<Uint8Array, Uint8Array> {
  /** Per choice: id → assigned index, wire index → the index of the call last seen there, indexes in use. */
  const choices = new Map<unknown, { byId: Map<string, number>; current: Map<number, number>; used: Set<number>; last?: number }>();
  const stateOf = (choice: unknown) => {
    let state = choices.get(choice);
    if (!state) {
      state = { byId: new Map(), current: new Map(), used: new Set() };
      choices.set(choice, state);
    }
    return state;
  };
  const assign = (state: ReturnType<typeof stateOf>, delta: ToolCallDelta): number | undefined => {
    const id = typeof delta.id === "string" && delta.id.trim() !== "" ? delta.id : undefined;
    if (delta.index === undefined || delta.index === null) {
      // No index on the wire: by id, else the call seen last.
      let index = id === undefined ? state.last : state.byId.get(id);
      if (index === undefined) {
        index = state.used.size === 0 ? 0 : Math.max(...state.used) + 1;
        if (id !== undefined) state.byId.set(id, index);
        state.used.add(index);
      }
      state.last = index;
      return index;
    }
    if (typeof delta.index !== "number") return undefined;
    const wire = delta.index;
    if (id === undefined) return (state.last = state.current.get(wire) ?? wire);
    let index = state.byId.get(id);
    if (index === undefined) {
      index = state.current.has(wire) || state.used.has(wire) ? Math.max(...state.used) + 1 : wire;
      state.byId.set(id, index);
      state.used.add(index);
    }
    state.current.set(wire, index);
    state.last = index;
    return index;
  };
  const edit = (payload: unknown): unknown => {
    const chunk = payload as Chunk;
    if (typeof chunk !== "object" || chunk === null || !Array.isArray(chunk.choices)) return undefined;
    let touched = false;
    for (const choice of chunk.choices) {
      const deltas = choice?.delta?.tool_calls;
      if (!Array.isArray(deltas)) continue;
      const state = stateOf(choice.index ?? 0);
      for (const delta of deltas) {
        if (typeof delta !== "object" || delta === null) continue;
        const index = assign(state, delta);
        if (index !== undefined && index !== delta.index) {
          delta.index = index;
          touched = true;
        }
      }
    }
    return touched ? chunk : undefined;
  };
  return sseFrameRewriter((frame) => (frame.includes('"tool_calls"') ? rewriteDataLines(frame, edit) : frame));
}
