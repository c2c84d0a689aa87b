/**
 * The guard of a log opened WITHOUT encryption on a store that has a key store (ours): writing session content there would put it in clear beside
 * sealed sessions, and a delete would leave the key behind. `guard` rejects writes to a session's streams with `DataKeyUnavailableError`
 * (`reason: "no_encryption"`) once `findKeyStore` (run at the first write) found one; a failed check rejects every write. Calls keep call order.
 */
import { DataKeyUnavailableError } from "../../core/errors.ts";
import { keyIdOfStream } from "./session-keys.ts";

/** Runs writes of a log without encryption (see the module contract). */
export type PlainWriteGuard = <T>(streamId: string, operation: "append" | "deleteStream", run: () => Promise<T>) => Promise<T>;

/** The guard over the key-store check. */
export function createPlainWriteGuard(findKeyStore: () => Promise<string | undefined>): PlainWriteGuard {
  let settled: { keyStore: string | undefined } | undefined;
  let failure: unknown;
  let checked: Promise<void> | undefined;
  let waiting = 0;
  const step = <T>(streamId: string, operation: string, run: () => Promise<T>): Promise<T> => {
    // The check failed (the database is unreachable, the log's schema unusable): so does the write.
    if (failure !== undefined) return Promise.reject(failure);
    if (settled?.keyStore === undefined || keyIdOfStream(streamId) === undefined) return run();
    return Promise.reject(
      new DataKeyUnavailableError(
        `Stream "${streamId}" is a session of an encrypted log (its key store ${settled.keyStore} exists), and this log was opened without encryption: open it with its master key (encryption: { key }). Nothing was written.`,
        { details: { streamId, keyId: keyIdOfStream(streamId), reason: "no_encryption", operation } },
      ),
    );
  };
  return (streamId, operation, run) => {
    if ((settled !== undefined || failure !== undefined) && waiting === 0) return step(streamId, operation, run);
    // Before the check settles (and until the calls queued then have run), calls wait on it in call order; each runs as soon as it may, so group
    // commit still batches them.
    waiting += 1;
    checked ??= findKeyStore().then(
      (name) => void (settled = { keyStore: name }),
      (error: unknown) => void (failure = error),
    );
    return checked.then(() => {
      waiting -= 1;
      return step(streamId, operation, run);
    });
  };
}
