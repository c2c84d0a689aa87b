/**
 * Context plans and paths from the session index (ours): the {@link ContextPlan} `context.ts` finds by walking the path, found instead with a few
 * indexed queries per linear run, for streams without `unusual` entries; a cycle or broken link returns undefined (the caller walks). The plan
 * equals `planFull`'s, its emitted entries given as seq ranges ({@link emittingRows}) so they can be read from stored context text.
 */
import type { CompactionEntry } from "../../core/entries.ts";
import type { ContextPlan } from "./context.ts";
import type { ContextDiagnostic } from "../session-types.ts";
import type { IndexedEntry, SessionIndex } from "./session-index.ts";

/** A stretch of the path: entries `from…to` (seqs), each the parent of the next. */
export type PathRun = { from: number; to: number };

/** The path root→`leaf` as runs, root first; undefined on a cycle or a missing row. */
export function pathRuns(index: SessionIndex, streamId: string, leaf: IndexedEntry, entries: number): PathRun[] | undefined {
  const runs: PathRun[] = [];
  let row: IndexedEntry | undefined = leaf;
  let length = 0;
  while (row) {
    runs.push({ from: row.runStart, to: row.seq });
    length += row.seq - row.runStart + 1;
    if (length > entries) return undefined;
    const start = row.runStart === row.seq ? row : index.at(streamId, row.runStart);
    if (!start) return undefined;
    if (start.parentSeq === null) break;
    if (start.parentSeq >= start.seq) return undefined;
    row = index.at(streamId, start.parentSeq);
    if (!row) return undefined;
  }
  return runs.reverse();
}

/** A place on the path: run index, then seq. */
type Place = { run: number; seq: number };

const later = (a: Place | undefined, b: Place | undefined) => (!a ? b : !b ? a : a.run > b.run || (a.run === b.run && a.seq > b.seq) ? a : b);

/**
 * The planned context at `leafId` (its `emitIds` empty) plus the path's runs and the seq ranges whose emitting entries it emits, in emission order;
 * or undefined (see the module contract).
 */
export function planFromIndex(
  index: SessionIndex,
  streamId: string,
  leafId: string,
  entries: number,
  hasUnknown: boolean,
): { plan: ContextPlan; runs: PathRun[]; emitRanges: PathRun[]; keptRanges: number } | undefined {
  const leaf = index.byId(streamId, leafId);
  if (!leaf) return undefined;
  const runs = pathRuns(index, streamId, leaf, entries);
  if (!runs) return undefined;
  const lastOnPath = (kinds: readonly string[], role?: string): Place | undefined => {
    for (let run = runs.length - 1; run >= 0; run--) {
      const row = index.lastOf(streamId, kinds, runs[run].from, runs[run].to, role);
      if (row) return { run, seq: row.seq };
    }
    return undefined;
  };
  const rowsOnPath = (kinds: readonly string[] | "unknown" | undefined, from: Place, to: Place): IndexedEntry[] => {
    const rows: IndexedEntry[] = [];
    for (let run = from.run; run <= to.run; run++) {
      const low = run === from.run ? from.seq : runs[run].from;
      const high = run === to.run ? to.seq : runs[run].to;
      if (low <= high) for (const row of index.inRange(streamId, low, high, kinds)) rows.push(row);
    }
    return rows;
  };
  const first: Place = { run: 0, seq: runs[0].from };
  const last: Place = { run: runs.length - 1, seq: runs[runs.length - 1].to };
  const compactionAt = lastOnPath(["compaction"]);
  const thinking = lastOnPath(["thinking_level_change"]);
  const model = later(lastOnPath(["model_change"]), lastOnPath(["message"], "assistant"));
  const tools = lastOnPath(["active_tools_change"]);
  const idAt = (place: Place) => index.at(streamId, place.seq)!.id;
  const settingIds = [thinking, model, tools].filter((place): place is Place => place !== undefined).map(idAt);
  const diagnostics: ContextDiagnostic[] = hasUnknown
    ? rowsOnPath("unknown", first, last).map((row) => ({ kind: "unknown_entry", message: `Entry ${row.id} has unknown type "${row.kind}"; it is kept but not sent to the model.`, entryId: row.id }))
    : [];
  // The emitted entries are most of a path: planned as seq ranges, read by the caller (rows, or stored context text).
  const rangesOnPath = (from: Place, to: Place): PathRun[] => {
    const ranges: PathRun[] = [];
    for (let run = from.run; run <= to.run; run++) {
      const low = run === from.run ? from.seq : runs[run].from;
      const high = run === to.run ? to.seq : runs[run].to;
      if (low <= high) ranges.push({ from: low, to: high });
    }
    return ranges;
  };
  let emitRanges: PathRun[] = [];
  let keptRanges = 0;
  let compactionId: string | null = null;
  if (!compactionAt) {
    emitRanges = rangesOnPath(first, last);
  } else {
    const compactionRow = index.at(streamId, compactionAt.seq)!;
    compactionId = compactionRow.id;
    const [compaction] = index.entries(streamId, [compactionRow]) as CompactionEntry[];
    const kept = compaction ? index.byId(streamId, compaction.firstKeptEntryId) : undefined;
    const keptRun = kept ? runs.findIndex((run, position) => position <= compactionAt.run && kept.seq >= run.from && kept.seq <= run.to) : -1;
    if (kept && keptRun >= 0 && (keptRun < compactionAt.run || kept.seq < compactionAt.seq)) {
      const beforeCompaction: Place = compactionAt.seq > runs[compactionAt.run].from ? { run: compactionAt.run, seq: compactionAt.seq - 1 } : { run: compactionAt.run - 1, seq: runs[compactionAt.run - 1].to };
      emitRanges = rangesOnPath({ run: keptRun, seq: kept.seq }, beforeCompaction);
      keptRanges = emitRanges.length;
    }
    const afterCompaction: Place = compactionAt.seq < runs[compactionAt.run].to ? { run: compactionAt.run, seq: compactionAt.seq + 1 } : { run: compactionAt.run + 1, seq: runs[compactionAt.run + 1]?.from ?? 0 };
    if (afterCompaction.run < runs.length) emitRanges = emitRanges.concat(rangesOnPath(afterCompaction, last));
  }
  // The edits that count are among the selected entries (pi 1.6's buildSessionProjection).
  const editIds = emitRanges.flatMap((range) => index.inRange(streamId, range.from, range.to, ["context_edit"]).map((row) => row.id));
  const plan: ContextPlan = { leafId, diagnostics, missingParents: [], settingIds, compactionId, emitIds: [], ...(editIds.length > 0 ? { editIds } : {}) };
  return { plan, runs, emitRanges, keptRanges };
}

const EMITTING = new Set(["message", "custom_message", "branch_summary"]);

/**
 * The index rows of the entries in `ranges` (seqs, path order) whose kind can emit a message (`message`, `custom_message`, `branch_summary`), in the
 * same order.
 */
export function emittingRows(index: SessionIndex, streamId: string, ranges: readonly PathRun[]): IndexedEntry[] {
  const rows: IndexedEntry[] = [];
  // One primary-key range scan per range, filtered here (the kind index would cost a look-up per row).
  for (const range of ranges) for (const row of index.inRange(streamId, range.from, range.to)) if (EMITTING.has(row.kind)) rows.push(row);
  return rows;
}
