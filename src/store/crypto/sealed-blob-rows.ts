/**
 * The workspace blob rows of an encrypted log (ours): each tenant's blobs sealed with the
 * tenant's workspace data key, below the blob store's compression and deltas.
 *
 * Contract:
 * - blobs are stored once per tenant and shared by its sessions (`workspace/blob-store.ts`), so
 *   they are sealed with a key per tenant, not per session: the tenant's workspace key, a random
 *   256-bit data key wrapped by the master key in the log's key store like a session's
 *   (`session-keys.ts` `tenantBlobKeyId`), created at the tenant's first `put`;
 * - a row's stored bytes are the compressed (or delta) bytes sealed with AES-256-GCM
 *   (`sealed-record.ts` `sealBytes`), the AAD binding them to the tenant and the blob's name:
 *   a row moved to another name or tenant, or altered, fails to open (`WorkspaceBlobError`);
 * - rows stored before encryption was on (raw deflate, which never starts with the sealed format
 *   byte) are read as they are;
 * - names (the sha256 of the contents), sizes, bases and depths stay in clear: the delete's purge
 *   and the store's deltas need them.
 */
import type { BlobRow, BlobRows } from "../workspace/blob-store.ts";
import type { LogCipher } from "./log-cipher.ts";

/** Wraps backend blob rows so that what they store is sealed (see the module contract). */
export function createSealedBlobRows(inner: BlobRows, cipher: Pick<LogCipher, "sealBlob" | "openBlob">): BlobRows {
  return {
    async rows(tenant, hashes) {
      const opened = new Map<string, BlobRow>();
      for (const [hash, row] of await inner.rows(tenant, hashes)) opened.set(hash, { ...row, data: await cipher.openBlob(tenant, hash, row.data) });
      return opened;
    },
    async insert(tenant, rows) {
      const sealed: BlobRow[] = [];
      for (const row of rows) sealed.push({ ...row, data: await cipher.sealBlob(tenant, row.hash, row.data) });
      await inner.insert(tenant, sealed);
    },
    list: (tenant) => inner.list(tenant),
    remove: (tenant, hashes) => inner.remove(tenant, hashes),
  };
}
