/**
 * The workspace blob store (ours; content addressing as git's objects): file contents named by the hex sha256 of their raw bytes, kept compressed in
 * the log's own database, one namespace per tenant (never shared across tenants). `put` stores only new names and returns the bytes it added; a blob
 * may be a delta against an earlier one of the same path (at most {@link MAX_DELTA_DEPTH} deep); `get` checks the bytes against the name
 * (`WorkspaceBlobError`); `remove` deletes names nothing references.
 */
import { createHash } from "node:crypto";
import { deflateRawSync, inflateRawSync, constants } from "node:zlib";
import { WorkspaceBlobError } from "../../core/errors.ts";

/** A blob to store: its name, raw bytes and, optionally, an earlier blob to delta against. */
export interface BlobInput {
  hash: string;
  data: Buffer;
  base?: { hash: string; data: Buffer };
}

/** A stored blob's row (what the backends keep). */
export interface BlobRow {
  hash: string;
  size: number;
  base: string | null;
  depth: number;
  data: Buffer;
}

/** The store (see the module contract). */
export interface WorkspaceBlobStore {
  put(tenant: string, blobs: readonly BlobInput[]): Promise<number>;
  get(tenant: string, hash: string): Promise<Buffer>;
  /** The names of `hashes` the tenant has. */
  has(tenant: string, hashes: readonly string[]): Promise<Set<string>>;
  /** Every blob of the tenant with its base. */
  list(tenant: string): Promise<{ hash: string; base: string | null; bytes: number }[]>;
  remove(tenant: string, hashes: readonly string[]): Promise<number>;
}

/** How deep a delta chain may go before a blob is stored alone. */
export const MAX_DELTA_DEPTH = 8;

/** The sha256 name of `data`. */
export function blobHash(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The backend rows of a store: {@link createBlobStore} adds the codec on top. */
export interface BlobRows {
  rows(tenant: string, hashes: readonly string[]): Promise<Map<string, BlobRow>>;
  insert(tenant: string, rows: readonly BlobRow[]): Promise<void>;
  list(tenant: string): Promise<{ hash: string; base: string | null; bytes: number }[]>;
  remove(tenant: string, hashes: readonly string[]): Promise<number>;
}

const LEVEL = { level: constants.Z_DEFAULT_COMPRESSION };

/** A store over backend rows: compression, deltas and checks. */
export function createBlobStore(backend: BlobRows): WorkspaceBlobStore {
  const get = async (tenant: string, hash: string, depth = 0): Promise<Buffer> => {
    const row = (await backend.rows(tenant, [hash])).get(hash);
    if (!row) throw new WorkspaceBlobError(`Workspace blob ${hash} is not in the store of tenant "${tenant}".`, { details: { hash, tenant } });
    if (depth > MAX_DELTA_DEPTH + 1) throw new WorkspaceBlobError(`Workspace blob ${hash}: delta chain too deep.`, { details: { hash, tenant } });
    let data: Buffer;
    try {
      data = row.base === null ? inflateRawSync(row.data) : inflateRawSync(row.data, { dictionary: await get(tenant, row.base, depth + 1) });
    } catch (error) {
      if (error instanceof WorkspaceBlobError) throw error;
      throw new WorkspaceBlobError(`Workspace blob ${hash} of tenant "${tenant}" is corrupt (${(error as Error).message}).`, { details: { hash, tenant } });
    }
    if (data.length !== row.size || blobHash(data) !== hash) {
      throw new WorkspaceBlobError(`Workspace blob ${hash} of tenant "${tenant}" does not match its name.`, { details: { hash, tenant } });
    }
    return data;
  };
  return {
    async put(tenant, blobs) {
      const unique = new Map<string, BlobInput>();
      for (const blob of blobs) unique.set(blob.hash, blob);
      if (unique.size === 0) return 0;
      const bases = [...unique.values()].flatMap((blob) => (blob.base ? [blob.base.hash] : []));
      const known = await backend.rows(tenant, [...unique.keys(), ...bases]);
      const rows: BlobRow[] = [];
      for (const blob of unique.values()) {
        if (known.has(blob.hash)) continue;
        const alone = deflateRawSync(blob.data, LEVEL);
        let row: BlobRow = { hash: blob.hash, size: blob.data.length, base: null, depth: 0, data: alone };
        const base = blob.base ? known.get(blob.base.hash) : undefined;
        if (blob.base && base && base.depth < MAX_DELTA_DEPTH && blob.base.hash !== blob.hash) {
          // The longest matches against the earlier version: level 9, and fixed Huffman codes when smaller (a tiny delta's dynamic tables cost more than it).
          const dynamic = deflateRawSync(blob.data, { level: 9, dictionary: blob.base.data });
          const fixed = deflateRawSync(blob.data, { level: 9, strategy: constants.Z_FIXED, dictionary: blob.base.data });
          const delta = fixed.length < dynamic.length ? fixed : dynamic;
          if (delta.length < alone.length) row = { ...row, base: blob.base.hash, depth: base.depth + 1, data: delta };
        }
        rows.push(row);
      }
      if (rows.length) await backend.insert(tenant, rows);
      return rows.reduce((sum, row) => sum + row.data.length, 0);
    },
    get: (tenant, hash) => get(tenant, hash),
    async has(tenant, hashes) {
      return new Set((await backend.rows(tenant, hashes)).keys());
    },
    list: (tenant) => backend.list(tenant),
    remove: (tenant, hashes) => backend.remove(tenant, hashes),
  };
}

/** Rows in memory (the in-memory log's store; tests). */
export function createMemoryBlobRows(): BlobRows {
  const tenants = new Map<string, Map<string, BlobRow>>();
  const of = (tenant: string) => tenants.get(tenant) ?? tenants.set(tenant, new Map()).get(tenant)!;
  return {
    async rows(tenant, hashes) {
      const all = of(tenant);
      return new Map(hashes.flatMap((hash) => (all.has(hash) ? [[hash, all.get(hash)!] as const] : [])));
    },
    async insert(tenant, rows) {
      for (const row of rows) if (!of(tenant).has(row.hash)) of(tenant).set(row.hash, row);
    },
    async list(tenant) {
      return [...of(tenant).values()].map((row) => ({ hash: row.hash, base: row.base, bytes: row.data.length }));
    },
    async remove(tenant, hashes) {
      let removed = 0;
      for (const hash of hashes) if (of(tenant).delete(hash)) removed++;
      return removed;
    },
  };
}
