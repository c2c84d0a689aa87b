/**
 * Lazily materialized entries of a session restored from a projection snapshot (ours): the index holds STUBS (id, parentId, type, timestamp,
 * role); a full entry is read on first access and replaces its stub everywhere, once. Tree walks use stubs only; accessors return full entries.
 */
import type { SessionEntry } from "../../core/entries.ts";
import type { TreeIndex } from "./session-tree.ts";

/** Marks a stub; the value is the entry's position in append order. */
export const STUB_SEQ = Symbol.for("arbor.entryStub");

/** Reads full entries of a snapshot by append position. Synchronous. */
export interface EntryLoader {
  load(seq: number): SessionEntry;
  /** The entries at these positions, in the same order (one bulk read). */
  loadMany(seqs: readonly number[]): SessionEntry[];
  /** Every snapshot entry, in append order. */
  loadAll(): SessionEntry[];
}

/** A stand-in for an entry not read yet. */
export type EntryStub = SessionEntry & { role?: string; [STUB_SEQ]: number };

/** True if `entry` is a stub. */
export function isStub(entry: SessionEntry): entry is EntryStub {
  return (entry as Partial<EntryStub>)[STUB_SEQ] !== undefined;
}

/** The message role of a `message` entry or stub, else undefined (never reads content). */
export function roleOf(entry: SessionEntry): string | undefined {
  if (entry.type !== "message") return undefined;
  return isStub(entry) ? entry.role : (entry as { message?: { role?: string } }).message?.role;
}

function replace(index: TreeIndex, stub: EntryStub, full: SessionEntry): void {
  const seq = stub[STUB_SEQ];
  if (index.order[seq] === stub) index.order[seq] = full;
  if (index.byId.get(stub.id) === stub) index.byId.set(stub.id, full);
  const parentKey = stub.parentId === null || stub.parentId === stub.id ? null : stub.parentId;
  const siblings = index.children?.get(parentKey);
  const position = siblings ? siblings.indexOf(stub) : -1;
  if (siblings && position >= 0) siblings[position] = full;
  index.stubCount -= 1;
}

/** The full entry for `entry` (reading it from the snapshot if it is a stub, once). */
export function materialize(index: TreeIndex, entry: SessionEntry): SessionEntry;
export function materialize(index: TreeIndex, entry: SessionEntry | undefined): SessionEntry | undefined;
export function materialize(index: TreeIndex, entry: SessionEntry | undefined): SessionEntry | undefined {
  if (!entry || !isStub(entry) || !index.loader) return entry;
  const full = index.loader.load(entry[STUB_SEQ]);
  replace(index, entry, full);
  return full;
}

/** Reads these stubs in one bulk read (full entries and non-stubs are left alone). */
export function materializeMany(index: TreeIndex, entries: readonly SessionEntry[]): void {
  if (!index.loader) return;
  const stubs = entries.filter(isStub);
  if (stubs.length === 0) return;
  const loaded = index.loader.loadMany(stubs.map((stub) => stub[STUB_SEQ]));
  stubs.forEach((stub, position) => {
    if (index.byId.get(stub.id) === stub || index.order[stub[STUB_SEQ]] === stub) replace(index, stub, loaded[position]);
  });
}

/** Reads every remaining stub in one bulk read. */
export function materializeAll(index: TreeIndex): void {
  if (index.stubCount === 0 || !index.loader) return;
  const all = index.loader.loadAll();
  for (let seq = 0; seq < index.order.length; seq++) {
    const entry = index.order[seq];
    if (isStub(entry)) replace(index, entry, all[entry[STUB_SEQ]]);
  }
}
