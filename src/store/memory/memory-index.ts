/**
 * The session-memory projection (ours; `docs/memory.md`): the current value of every key per scope (a stream), folded from `memory.written` /
 * `memory.deleted`, with full-text search (FTS5, `tsvector`, or a token match in memory). Rows are keyed by tenant, scope and key; each scope keeps
 * the version it folded, so {@link MemoryIndex.apply} is idempotent and a reader catches up after a crash; `search` matches every word, best first.
 *
 * @example
 * ```ts
 * await index.apply("default", "session-1", [{ version: 3, key: "lang", value: "ts" }]);
 * const hits = await index.search("default", "session-1", "ts", 5);
 * ```
 */

/** One folded memory event: a write (`value` set) or a deletion (`deleted`). */
export interface MemoryChange {
  version: number;
  key: string;
  value?: unknown;
  deleted?: boolean;
  time?: string;
}

/** One stored key. `updatedAt` is the ISO time of the event that wrote it. */
export interface MemoryRow {
  key: string;
  value: unknown;
  updatedAt: string;
}

/** The projection (see the module contract). */
export interface MemoryIndex {
  /** The version of the last event folded for the scope (0: none). */
  head(tenant: string, scope: string): Promise<number>;
  /** Folds `changes` (skipping those at or below the head), then moves the head to `through` (the last event read). */
  apply(tenant: string, scope: string, changes: readonly MemoryChange[], through: number): Promise<void>;
  get(tenant: string, scope: string, key: string): Promise<MemoryRow | undefined>;
  list(tenant: string, scope: string, prefix?: string): Promise<MemoryRow[]>;
  search(tenant: string, scope: string, query: string, limit: number): Promise<(MemoryRow & { score: number })[]>;
  /** Removes every row of the scope and its head. */
  drop(tenant: string, scope: string): Promise<void>;
}

/** The searchable text of a value: its strings, numbers and booleans (and object keys), space-joined. */
export function searchText(value: unknown): string {
  const parts: string[] = [];
  const walk = (item: unknown) => {
    if (item === null || item === undefined) return;
    if (typeof item === "string" || typeof item === "number" || typeof item === "boolean") parts.push(String(item));
    else if (Array.isArray(item)) item.forEach(walk);
    else if (typeof item === "object") {
      for (const [key, inner] of Object.entries(item)) {
        parts.push(key);
        walk(inner);
      }
    }
  };
  walk(value);
  return parts.join(" ");
}

/** The query's words (letters and digits), lowercased. */
export function queryWords(query: string): string[] {
  return query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/** The projection in memory (the in-memory log's). */
export function createInMemoryMemoryIndex(): MemoryIndex {
  const scopes = new Map<string, { head: number; rows: Map<string, MemoryRow> }>();
  const of = (tenant: string, scope: string) => {
    const id = `${tenant}\u0000${scope}`;
    let found = scopes.get(id);
    if (!found) scopes.set(id, (found = { head: 0, rows: new Map() }));
    return found;
  };
  return {
    async head(tenant, scope) {
      return of(tenant, scope).head;
    },
    async apply(tenant, scope, changes, through) {
      const state = of(tenant, scope);
      for (const change of changes) {
        if (change.version <= state.head) continue;
        if (change.deleted) state.rows.delete(change.key);
        else state.rows.set(change.key, { key: change.key, value: change.value, updatedAt: change.time ?? new Date().toISOString() });
      }
      state.head = Math.max(state.head, through);
    },
    async get(tenant, scope, key) {
      return of(tenant, scope).rows.get(key);
    },
    async list(tenant, scope, prefix = "") {
      return [...of(tenant, scope).rows.values()].filter((row) => row.key.startsWith(prefix)).sort((a, b) => (a.key < b.key ? -1 : 1));
    },
    async search(tenant, scope, query, limit) {
      const words = queryWords(query);
      if (words.length === 0) return [];
      const hits: (MemoryRow & { score: number })[] = [];
      for (const row of of(tenant, scope).rows.values()) {
        const text = new Set(queryWords(`${row.key} ${searchText(row.value)}`));
        if (words.every((word) => [...text].some((token) => token.startsWith(word)))) hits.push({ ...row, score: words.length / Math.max(1, text.size) });
      }
      return hits.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1)).slice(0, limit);
    },
    async drop(tenant, scope) {
      scopes.delete(`${tenant}\u0000${scope}`);
    },
  };
}
