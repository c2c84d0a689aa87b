/**
 * Distinct `index`es for Chat Completions tool calls with distinct ids, in front of the AI SDK's parser (some servers give every call index 0, and
 * `@ai-sdk/openai` 3.x would glue their arguments). Pieces are routed by id; a delta without id or index continues the call last seen. A
 * byte-for-byte no-op when indexes already match ids; non-JSON frames pass through; never throws.
 */
import { rewriteDataLines, sseFrameRewriter } from "./sse-frames.ts";

type ToolCallDelta = { index?: unknown; id?: unknown };
type Chunk = { choices?: { index?: unknown; delta?: { tool_calls?: ToolCallDelta[] } }[] };

/** A TransformStream over Chat Completions SSE bytes that gives calls with different ids different indexes (see the module contract). */
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
