/**
 * Per-file serialization of file mutations (edit, write).
 *
 * Contract (source: pi's `file-mutation-queue.ts`; keyed by realpath as pi does):
 * - operations on the same file run one at a time, in call order (FIFO);
 * - operations on different files run concurrently;
 * - the key is the realpath of the file (or of its deepest existing ancestor plus the rest, for a
 *   file that does not exist yet), so two spellings or a symlink of one file share a queue;
 * - a failing operation releases the queue; its error reaches only its own caller.
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
  const key = mutationQueueKey(path);
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
