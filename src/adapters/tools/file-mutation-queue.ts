/**
 * Per-file serialization of file mutations (edit, write).
 *
 * Contract (source: pi's `file-mutation-queue.ts`; keyed by realpath as pi does):
 * - operations on the same file run one at a time, in call order (FIFO);
 * - operations on different files run concurrently;
 * - the key is the realpath of the file (or of its deepest existing ancestor plus the rest, for a
 *   file that does not exist yet), so two spellings or a symlink of one file share a queue;
 * - a failing operation releases the queue; its error reaches only its own caller;
 * - {@link withHeldFileMutationQueue} keys by the held directory's device and inode plus the
 *   name (ours), for when the path spelling cannot be trusted (a symlink swapped mid-call).
 *
 * @example
 * ```ts
 * await withFileMutationQueue(absolutePath, async () => writeFile(absolutePath, text));
 * ```
 */
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

const queues = new Map<string, Promise<void>>();

/** The queue key of a path: realpath of its deepest existing ancestor joined with the missing rest. */
export function mutationQueueKey(path: string): string {
  let existing = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync.native(existing), ...rest);
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return resolve(path);
      rest.unshift(basename(existing));
      existing = parent;
    }
  }
}

/**
 * Runs `operation` after every earlier operation queued for the same file has settled.
 * Resolves or rejects with `operation`'s outcome.
 *
 * @example
 * ```ts
 * const [a, b] = await Promise.all([
 *   withFileMutationQueue("notes.md", () => appendLine("a")),
 *   withFileMutationQueue("./notes.md", () => appendLine("b")), // runs after the first
 * ]);
 * ```
 */
export async function withFileMutationQueue<T>(path: string, operation: () => Promise<T>): Promise<T> {
  return withMutationQueueKey(mutationQueueKey(path), operation);
}

/**
 * Like {@link withFileMutationQueue} for the entry `name` of a held directory, keyed by the
 * directory's device and inode: one file reached through different spellings while a symlink
 * is swapped (so the path queue keys differ) still gets one queue. Used by write and edit
 * inside their path queue.
 *
 * @example
 * ```ts
 * await withHeldFileMutationQueue(await dir.handle.stat(), "a.ts", () => replaceFileAtomically(dir, "a.ts", data));
 * ```
 */
export function withHeldFileMutationQueue<T>(directory: { dev: number; ino: number }, name: string, operation: () => Promise<T>): Promise<T> {
  return withMutationQueueKey(`inode:${directory.dev}:${directory.ino}/${name}`, operation);
}

async function withMutationQueueKey<T>(key: string, operation: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const current = new Promise<void>((resolveCurrent) => {
    release = resolveCurrent;
  });
  const tail = previous.then(() => current);
  queues.set(key, tail);
  await previous;
  try {
    return await operation();
  } finally {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  }
}
