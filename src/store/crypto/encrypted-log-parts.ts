/**
 * What an encrypted log exposes differently (ours): its admin handle (`log.encryption`), its sealed memory projection, its workspace blob store
 * sealed with each tenant's workspace key (`sealed-blob-rows.ts`; blobs are shared by a tenant's sessions, so no session key could cover them), and
 * {@link sealedAppend}, which seals prepared events once the stream's key exists and enqueues them in call order across streams.
 */
import type { AppendResult } from "../event-log.ts";
import type { EventRecord, PreparedEvent } from "../log/log-prepare.ts";
import type { MemoryIndex } from "../memory/memory-index.ts";
import { createBlobStore, type BlobRows, type WorkspaceBlobStore } from "../workspace/blob-store.ts";
import type { LogCipher, LogEncryption } from "./log-cipher.ts";
import { createSealedBlobRows } from "./sealed-blob-rows.ts";
import { createSealedMemoryIndex } from "./sealed-memory-index.ts";
import { clearEventOf } from "./clear-read.ts";

/** The encrypted log's `encryption`, `memoryIndex` and `workspaceBlobs`; `readRecords` reads a stream's stored rows, forwards, as they are. */
export function encryptedLogParts(
  cipher: LogCipher,
  memoryIndex: MemoryIndex,
  blobRows: BlobRows,
  readRecords: (streamId: string) => Promise<EventRecord[]>,
): { encryption: LogEncryption; memoryIndex: MemoryIndex; workspaceBlobs: WorkspaceBlobStore } {
  return {
    encryption: { masterKeyId: cipher.masterKeyId, rotate: () => cipher.rotate(), readClear: async (streamId) => (await readRecords(streamId)).map(clearEventOf) },
    memoryIndex: createSealedMemoryIndex(memoryIndex, cipher),
    workspaceBlobs: createBlobStore(createSealedBlobRows(blobRows, cipher)),
  };
}

/**
 * Seals `prepared` with the stream's key (creating it on the first append) and hands the sealed events to `enqueue`; the promise settles as the
 * enqueued write does.
 */
export function sealedAppend(
  cipher: LogCipher,
  streamId: string,
  prepared: PreparedEvent[],
  enqueue: (events: PreparedEvent[], resolve: (result: AppendResult) => void, reject: (error: unknown) => void) => void,
): Promise<AppendResult> {
  return new Promise<AppendResult>((resolve, reject) => {
    try {
      const step = cipher.inOrder(streamId, prepared, () => enqueue(cipher.seal(streamId, prepared), resolve, reject));
      if (step instanceof Promise) step.catch(reject);
    } catch (error) {
      reject(error);
    }
  });
}
