/**
 * A leaf's context state and the entries applied to it (`context.ts` states the projection): settings entries set the thinking level, model and
 * active tools; emitting entries push their message through the tool pairing after their `context_edit` (if any); {@link executePlan} builds the
 * state a {@link ContextPlan} describes, {@link toContext} copies it out as a `SessionContext`. Never throws.
 */
import type { CompactionEntry, SessionEntry } from "../../core/entries.ts";
import { isKnownEntry } from "../../core/entries.ts";
import type { AgentMessage, ThinkingLevel } from "../../core/messages.ts";
import type { ContextPlan, EmittingPlan, EntrySource } from "./context-plan.ts";
import { createPairing, type Pairing } from "./pairing.ts";
import type { ContextDiagnostic, SessionContext } from "../session-types.ts";

/**
 * The context message an entry contributes, if any (pi's `sessionEntryToContextMessages`, a compaction aside): `message` → its message (any role),
 * `custom_message` → a `custom` message (timestamp in ms from the entry's ISO time), `branch_summary` with a non-empty summary → `branchSummary`;
 * anything else → undefined.
 */
export function entryToMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return (entry as { message: AgentMessage }).message;
    case "custom_message": {
      const custom = entry as Extract<SessionEntry, { type: "custom_message" }>;
      return {
        role: "custom",
        customType: custom.customType,
        content: custom.content,
        display: custom.display,
        details: custom.details,
        timestamp: new Date(custom.timestamp).getTime(),
      };
    }
    case "branch_summary": {
      const summary = entry as Extract<SessionEntry, { type: "branch_summary" }>;
      if (!summary.summary) return undefined;
      return { role: "branchSummary", summary: summary.summary, fromId: summary.fromId, timestamp: new Date(summary.timestamp).getTime() };
    }
    default:
      return undefined;
  }
}

/** The state of one leaf's context, as a build or an extension leaves it. */
export interface LeafState {
  leafId: string;
  pairing: Pairing;
  thinkingLevel: ThinkingLevel;
  model: { provider: string; modelId: string } | null;
  activeToolNames: string[] | null;
  diagnostics: ContextDiagnostic[];
  /** `context_edit` replacements by target id (the latest on the path). */
  edits: Map<string, unknown>;
}

/** Applies a settings entry (thinking level, model, tools; an assistant message's model) to `state`; an unknown kind adds a diagnostic. */
export function applySettings(state: LeafState, entry: SessionEntry): void {
  switch (entry.type) {
    case "thinking_level_change":
      state.thinkingLevel = (entry as { thinkingLevel: ThinkingLevel }).thinkingLevel;
      break;
    case "model_change": {
      const change = entry as { provider: string; modelId: string };
      state.model = { provider: change.provider, modelId: change.modelId };
      break;
    }
    case "active_tools_change":
      state.activeToolNames = [...(entry as { toolNames: string[] }).toolNames];
      break;
    case "message": {
      const message = (entry as { message: AgentMessage }).message;
      if (message.role === "assistant") state.model = { provider: message.provider, modelId: message.model };
      break;
    }
    default:
      if (!isKnownEntry(entry)) {
        state.diagnostics.push({ kind: "unknown_entry", message: `Entry ${entry.id} has unknown type "${entry.type}"; it is kept but not sent to the model.`, entryId: entry.id });
      }
  }
}

/** The content a `context_edit` replacement gives, or undefined when it is not `{ content: string | array }`. */
function replacementContent(replacement: unknown): string | unknown[] | undefined {
  if (typeof replacement !== "object" || replacement === null) return undefined;
  const content = (replacement as { content?: unknown }).content;
  return typeof content === "string" || Array.isArray(content) ? content : undefined;
}

const EDITABLE_ROLES = new Set(["user", "assistant", "toolResult", "custom"]);

/** Adds the message `entry` contributes, if any. */
export function emit(state: LeafState, entry: SessionEntry): void {
  const message = entryToMessage(entry);
  if (message) emitMessage(state, entry.id, message);
}

/**
 * Adds the message entry `entryId` contributes, after its `context_edit` (if any). With `keptBeforeCompaction`, a system message is left out (pi 1.6
 * folds it into the checkpoint).
 */
function emitMessage(state: LeafState, entryId: string, message: AgentMessage, keptBeforeCompaction = false): void {
  if (message.role === "system") {
    if (keptBeforeCompaction) return;
    if (message.content === undefined || message.content === null) message = { ...message, content: "" };
  }
  if (state.edits.size > 0 && state.edits.has(entryId)) {
    const replacement = state.edits.get(entryId);
    if (replacement === null) return;
    const content = replacementContent(replacement);
    if (content === undefined) {
      state.diagnostics.push({
        kind: "context_edit_unapplied",
        message: `A context_edit of entry ${entryId} has a replacement that is not { content: string | array }; the entry is sent unchanged.`,
        entryId,
      });
    } else if (EDITABLE_ROLES.has(message.role)) {
      const normalized = typeof content === "string" && (message.role === "assistant" || message.role === "toolResult") ? [{ type: "text", text: content }] : content;
      message = { ...message, content: normalized } as AgentMessage;
    }
  }
  state.pairing.push(message, entryId);
}

function addEdit(state: LeafState, entry: SessionEntry): void {
  const edit = entry as { targetId?: unknown; replacement?: unknown };
  if (typeof edit.targetId === "string") state.edits.set(edit.targetId, edit.replacement);
}

/**
 * The state a plan describes: its edits and settings, the compaction's checkpoint and summary, then the emitted messages (delivered by `emitting`
 * when given).
 */
export function executePlan(source: EntrySource, plan: ContextPlan, emitting?: EmittingPlan): LeafState {
  const state: LeafState = { leafId: plan.leafId, pairing: createPairing(), thinkingLevel: "off", model: null, activeToolNames: null, diagnostics: [...plan.diagnostics], edits: new Map() };
  for (const id of plan.editIds ?? []) {
    const entry = source.getEntry(id);
    if (entry) addEdit(state, entry);
  }
  for (const id of plan.settingIds) {
    const entry = source.getEntry(id);
    if (entry) applySettings(state, entry);
  }
  if (plan.compactionId !== null) {
    const compaction = source.getEntry(plan.compactionId) as CompactionEntry | undefined;
    if (compaction && !(state.edits.has(compaction.id) && state.edits.get(compaction.id) === null)) {
      const checkpoint = (compaction as { systemMessage?: unknown }).systemMessage;
      if (typeof checkpoint === "object" && checkpoint !== null) state.pairing.push(checkpoint as AgentMessage, compaction.id);
      state.pairing.push(
        { role: "compactionSummary", summary: compaction.summary, tokensBefore: compaction.tokensBefore, timestamp: new Date(compaction.timestamp).getTime() },
        compaction.id,
      );
    }
  }
  if (emitting) {
    emitting.forEachEmitted((entryId, message) => emitMessage(state, entryId, message));
    return state;
  }
  source.prefetch?.(plan.emitIds);
  for (const id of plan.emitIds) {
    const entry = source.getEntry(id);
    if (entry) emit(state, entry);
  }
  return state;
}

/** A copy of `state` as the projection's `SessionContext`. */
export function toContext(state: LeafState): SessionContext {
  const { messages, diagnostics } = state.pairing.snapshot();
  return {
    leafId: state.leafId,
    messages,
    thinkingLevel: state.thinkingLevel,
    model: state.model ? { ...state.model } : null,
    activeToolNames: state.activeToolNames ? [...state.activeToolNames] : null,
    diagnostics: [...state.diagnostics, ...diagnostics],
  };
}
