/**
 * The memory projection of an encrypted log (ours): in a session scope, a row's key is the keyed digest of the memory key (`$h:…`) and its value
 * the sealed JSON of `[key, value]`, so the backend's rows and full-text index hold neither a key name nor a word of a value. `get` finds by
 * digest; `list` and `search` open the scope's rows and match here, O(the scope's rows). Rows written before digests are still read; principal
 * scopes pass through; the rows go with the session and are unreadable once its key is destroyed.
 */
import type { LogCipher } from "./log-cipher.ts";
import { queryWords, searchText, type MemoryChange, type MemoryIndex, type MemoryRow } from "../memory/memory-index.ts";

const DIGEST_PREFIX = "$h:";

/** Wraps a memory index so that session scopes hold sealed keys and values (see the module contract). */
export function createSealedMemoryIndex(inner: MemoryIndex, cipher: Pick<LogCipher, "encrypts" | "ready" | "sealText" | "openText" | "digest">): MemoryIndex {
  const rowKey = (scope: string, key: string) => cipher.digest(scope, "memory key", key);
  const open = (scope: string, row: MemoryRow): MemoryRow => {
    const plain = JSON.parse(cipher.openText(scope, `memory:${row.key}`, row.value as string)) as unknown;
    if (!row.key.startsWith(DIGEST_PREFIX)) return { ...row, value: plain };
    const [key, value] = plain as [string, unknown];
    return { key, value, updatedAt: row.updatedAt };
  };
  const rowsOf = async (tenant: string, scope: string, prefix = ""): Promise<MemoryRow[]> => {
    const rows = await inner.list(tenant, scope);
    if (rows.length === 0) return [];
    await cipher.ready(scope);
    return rows
      .map((row) => open(scope, row))
      .filter((row) => row.key.startsWith(prefix))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  };
  return {
    head: (tenant, scope) => inner.head(tenant, scope),
    async apply(tenant, scope, changes, through) {
      if (!cipher.encrypts(scope)) return inner.apply(tenant, scope, changes, through);
      await cipher.ready(scope);
      const sealed = changes.flatMap((change): MemoryChange[] => {
        const hidden = rowKey(scope, change.key);
        // A clear row of the key (written before keys were digested) goes with any change of it.
        const legacy: MemoryChange = { version: change.version, key: change.key, deleted: true };
        if (change.deleted || change.value === undefined) return [legacy, { ...change, key: hidden }];
        return [legacy, { ...change, key: hidden, value: cipher.sealText(scope, `memory:${hidden}`, JSON.stringify([change.key, change.value])) }];
      });
      return inner.apply(tenant, scope, sealed, through);
    },
    async get(tenant, scope, key) {
      if (!cipher.encrypts(scope)) return inner.get(tenant, scope, key);
      // A scope with no memory has no rows to find (and its session may have no key yet).
      if ((await inner.head(tenant, scope)) === 0) return undefined;
      await cipher.ready(scope);
      const row = (await inner.get(tenant, scope, rowKey(scope, key))) ?? (await inner.get(tenant, scope, key));
      return row && open(scope, row);
    },
    async list(tenant, scope, prefix) {
      return cipher.encrypts(scope) ? rowsOf(tenant, scope, prefix) : inner.list(tenant, scope, prefix);
    },
    async search(tenant, scope, query, limit) {
      if (!cipher.encrypts(scope)) return inner.search(tenant, scope, query, limit);
      const words = queryWords(query);
      if (words.length === 0) return [];
      const hits: (MemoryRow & { score: number })[] = [];
      for (const row of await rowsOf(tenant, scope)) {
        const text = new Set(queryWords(`${row.key} ${searchText(row.value)}`));
        if (words.every((word) => [...text].some((token) => token.startsWith(word)))) hits.push({ ...row, score: words.length / Math.max(1, text.size) });
      }
      return hits.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1)).slice(0, limit);
    },
    drop: (tenant, scope) => inner.drop(tenant, scope),
  };
}
