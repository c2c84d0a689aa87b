/**
 * Helpers shared by the built-in tools: {@link abortable} (rejects with pi's "Operation aborted" on abort), {@link replaceFileAtomically} (temp
 * file in the held directory, flushed, renamed; the target untouched on failure), {@link describeFsError} (pi's "Error code: X"), and
 * {@link statIfPresent} (`undefined` only for a missing path; EACCES and the like are thrown).
 */
import { randomBytes } from "node:crypto";
import { constants as fsConstants, type Stats } from "node:fs";
import { access, lstat, open, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { PathEscapeError } from "../../core/errors.ts";
import { heldPath, isMissingPath, type HeldDirectory } from "../beneath.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { ignoreError } from "../../core/ignored.ts";

/** pi's text for an aborted tool. */
export const ABORTED_MESSAGE = "Operation aborted";

/** Throws `Error("Operation aborted")` when the signal is aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error(ABORTED_MESSAGE);
}

/** Runs `operation`, rejecting with `Error("Operation aborted")` when `signal` aborts first (the operation itself is not cancelled). */
export function abortable<T>(signal: AbortSignal | undefined, operation: () => Promise<T>): Promise<T> {
  if (signal?.aborted) return Promise.reject(new Error(ABORTED_MESSAGE));
  if (!signal) return operation();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(ABORTED_MESSAGE));
    signal.addEventListener("abort", onAbort, { once: true });
    operation().then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Writes `data` to the file `name` inside a held directory (see `beneath.ts`) through a flushed temp file in that same directory and a rename within
 * it, so the target is either the old content or the new content, never a mix, and neither the temp file nor the result can land anywhere but in the
 * directory the handle holds. Keeps the target's permission bits.
 * @throws the fs error when the directory is not writable or the target is a directory;
 *   PathEscapeError when the target is (now) a symbolic link.
 */
export async function replaceFileAtomically(directory: HeldDirectory, name: string, data: Uint8Array, signal?: AbortSignal): Promise<void> {
  const target = heldPath(directory, name);
  const shown = join(directory.path, name);
  const temp = heldPath(directory, `.${name}.arbor-${randomBytes(6).toString("hex")}.tmp`);
  let mode = 0o666 & ~process.umask();
  try {
    const existing = await lstat(target);
    if (existing.isSymbolicLink()) {
      throw new PathEscapeError(`Path "${shown}" refused: the file is a symbolic link ("${name}").`, { details: { path: shown, component: name } });
    }
    if (existing.isDirectory()) {
      const error: NodeJS.ErrnoException = new Error(`EISDIR: illegal operation on a directory, open '${shown}'`);
      error.code = "EISDIR";
      throw error;
    }
    mode = existing.mode & 0o7777;
    // The rename below would replace a file the user may not write: refuse as a plain write would.
    await access(target, fsConstants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const handle = await open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, mode);
  try {
    await handle.writeFile(data);
    await handle.chmod(mode);
    await handle.sync();
    await handle.close();
    throwIfAborted(signal);
    await rename(temp, target);
  } catch (error) {
    await handle.close().catch(ignoreError("closing the temp file of a failed replace; the replace's error is thrown"));
    await rm(temp, { force: true });
    throw error;
  }
}

/** `stat` of `path`, or `undefined` when nothing is there (ENOENT, ENOTDIR); other fs errors are thrown. */
export async function statIfPresent(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if (isMissingPath(error)) return undefined;
    throw error;
  }
}

/** The absolute directory `path` names (default `.`), read through the env; throws pi's `Path not found: ABS` or `Not a directory: ABS`. */
export async function resolveDirectory(env: ExecutionEnv, path: string | undefined): Promise<string> {
  const directory = await env.resolvePath(path || ".", "read");
  const stats = await statIfPresent(directory);
  if (!stats) throw new Error(`Path not found: ${directory}`);
  if (!stats.isDirectory()) throw new Error(`Not a directory: ${directory}`);
  return directory;
}

/** pi's wording of an fs error: `"Error code: ENOENT"`, or the message when there is no code. */
export function describeFsError(error: unknown): string {
  if (error instanceof Error && "code" in error && typeof error.code === "string") return `Error code: ${error.code}`;
  return error instanceof Error ? error.message : String(error);
}
