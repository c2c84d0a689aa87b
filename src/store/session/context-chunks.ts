/**
 * Stored context text (ours): what the entries of a session stream contribute to a context, kept by the writer as JSON text in aligned chunks of
 * {@link CHUNK_ENTRIES} (merged into blocks of {@link BLOCK_ENTRIES}) of the session index's seqs, so a long linear context is a few parses instead
 * of one per entry; the SQLite log stores it (`sqlite-context-chunks.ts`). Each item depends on its own entry only; {@link emitStoredContext}
 * visits the same ids and messages as reading every entry, falling back to the entries where no chunk covers or one does not decode.
 */
import type { SessionEntry } from "../../core/entries.ts";
import type { AgentMessage } from "../../core/messages.ts";
import { entryToMessage } from "./context.ts";
import { emittingRows, type PathRun } from "./index-plan.ts";
import type { ContextChunkText, SessionIndex, StoredContextChunk } from "./session-index.ts";

/** Entries per chunk as first written (one chunk per aligned run of this many appended entries). */
export const CHUNK_ENTRIES = 16;
/** Entries per merged chunk: the {@link CHUNK_ENTRIES} chunks of an aligned block become one. */
export const BLOCK_ENTRIES = 256;

/** The text of a chunk, see {@link ContextChunkText}. */
export type ChunkText = ContextChunkText;

const NONE = "-".charCodeAt(0);
const MESSAGE = "m".charCodeAt(0);

function kindOf(entry: SessionEntry): "m" | "e" | "-" {
  switch (entry.type) {
    case "message":
      return entryToMessage(entry) ? "m" : "-";
    case "custom_message":
    case "branch_summary":
      return "e";
    default:
      return "-";
  }
}

/** The chunk text of consecutive entries (seq order). Throws only what `JSON.stringify` throws. */
export function encodeChunk(entries: readonly SessionEntry[]): ChunkText {
  let kinds = "";
  const ids: string[] = [];
  const items: string[] = [];
  for (const entry of entries) {
    const kind = kindOf(entry);
    kinds += kind;
    if (kind === "-") continue;
    ids.push(JSON.stringify(entry.id));
    items.push(JSON.stringify(kind === "m" ? (entry as { message: unknown }).message : entry));
  }
  return { kinds, ids: `[${ids.join(",")}]`, items: `[${items.join(",")}]` };
}

/** One chunk text for consecutive chunks (seq order), by concatenating their texts (no parse). */
export function mergeChunks(chunks: readonly ChunkText[]): ChunkText {
  const join = (arrays: string[]) => `[${arrays.map((array) => array.slice(1, -1)).filter((inner) => inner.length > 0).join(",")}]`;
  return { kinds: chunks.map((chunk) => chunk.kinds).join(""), ids: join(chunks.map((chunk) => chunk.ids)), items: join(chunks.map((chunk) => chunk.items)) };
}

type Visit = (entryId: string, message: AgentMessage) => void;

/** Visits the emitted entries of `low…high` (within `chunk`); false when the chunk does not decode (nothing visited). */
function emitChunk(chunk: StoredContextChunk, low: number, high: number, visit: Visit): boolean {
  const text = chunk.text();
  if (!text) return false;
  let ids: unknown;
  let items: unknown;
  try {
    ids = JSON.parse(text.ids);
    items = JSON.parse(text.items);
  } catch {
    return false;
  }
  const kinds = text.kinds;
  if (!Array.isArray(ids) || !Array.isArray(items) || ids.length !== items.length || kinds.length !== chunk.to - chunk.from + 1) return false;
  let count = 0;
  for (let position = 0; position < kinds.length; position++) if (kinds.charCodeAt(position) !== NONE) count += 1;
  if (count !== items.length) return false;
  let item = 0;
  for (let seq = chunk.from; seq <= high; seq++) {
    const kind = kinds.charCodeAt(seq - chunk.from);
    if (kind === NONE) continue;
    if (seq >= low) {
      const value = items[item];
      const message = kind === MESSAGE ? (value as AgentMessage) : entryToMessage(value as SessionEntry);
      if (message) visit(ids[item] as string, message);
    }
    item += 1;
  }
  return true;
}

/** Visits the emitted entries of `low…high` read one by one through the index. */
function emitEntries(index: SessionIndex, streamId: string, low: number, high: number, visit: Visit): void {
  if (low > high) return;
  for (const entry of index.entries(streamId, emittingRows(index, streamId, [{ from: low, to: high }]))) {
    const message = entry ? entryToMessage(entry) : undefined;
    if (message) visit(entry.id, message);
  }
}

/**
 * Visits the id and message of every entry of `ranges` (seqs, emission order) that gives a context message, from the stored chunks where they cover
 * and the entries elsewhere (see the module contract). Reads synchronously; throws what the index's reads throw.
 */
export function emitStoredContext(index: SessionIndex, streamId: string, ranges: readonly PathRun[], visit: Visit): void {
  for (const range of ranges) {
    let next = range.from;
    const chunks = index.contextChunks ? index.contextChunks(streamId, range.from, range.to) : [];
    for (const chunk of chunks) {
      if (next > range.to) break;
      if (chunk.to < next) continue;
      if (chunk.from > next) {
        emitEntries(index, streamId, next, Math.min(range.to, chunk.from - 1), visit);
        next = chunk.from;
        if (next > range.to) break;
      }
      const high = Math.min(range.to, chunk.to);
      if (!emitChunk(chunk, next, high, visit)) emitEntries(index, streamId, next, high, visit);
      next = high + 1;
    }
    emitEntries(index, streamId, next, range.to, visit);
  }
}
