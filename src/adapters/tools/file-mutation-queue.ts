/**
 * Per-file serialization of edits and writes: one at a time per file, in call order, concurrent across files. The key is the realpath (so spellings
 * and symlinks share a queue), or with {@link withHeldFileMutationQueue} the held directory's device and inode plus the name.
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

/** Runs `operation` after every earlier operation queued for the same file has settled. Resolves or rejects with `operation`'s outcome. */
export async function withFileMutationQueue<T>(path: string, operation: () => Promise<T>): Promise<T> {
  return withMutationQueueKey(mutationQueueKey(path), operation);
}

/**
 * Like {@link withFileMutationQueue} for the entry `name` of a held directory, keyed by the directory's device and inode: one file reached through
 * different spellings while a symlink is swapped (so the path queue keys differ) still gets one queue. Used by write and edit inside their path
 * queue.
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
