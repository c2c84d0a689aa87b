/**
 * Small helpers shared by the built-in tools: abort handling, safe file replacement, error text.
 *
 * Contract (ours):
 * - {@link abortable} settles with the operation's outcome, or rejects with
 *   `Error("Operation aborted")` (pi's text) as soon as the signal aborts;
 * - {@link replaceFileAtomically} never leaves a half-written file: it writes a temp file inside
 *   the held directory of the target, flushes it, copies the target's permission bits, then
 *   renames it over the target within that directory.
 *   On failure or abort the temp file is removed and the target is untouched; a target the
 *   process may not write (e.g. mode 0444) is refused with EACCES, as a plain write would be;
 * - {@link describeFsError} turns a Node fs error into pi's "Error code: X" wording.
 *
 * @example
 * ```ts
 * const text = await abortable(signal, () => readFile(path, "utf8"));
 * ```
 */
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { access, lstat, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { PathEscapeError } from "../../core/errors.ts";
import { heldPath, type HeldDirectory } from "../beneath.ts";

/** pi's text for an aborted tool. */
export const ABORTED_MESSAGE = "Operation aborted";

/** Throws `Error("Operation aborted")` when the signal is aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error(ABORTED_MESSAGE);
}

/**
 * Runs `operation`, rejecting with `Error("Operation aborted")` when `signal` aborts first.
 * The operation itself is not cancelled; callers check the signal between steps.
 *
 * @example
 * ```ts
 * await abortable(context.signal, async () => { ... });
 * ```
 */
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
 * Writes `data` to the file `name` inside a held directory (see `beneath.ts`) through a flushed
 * temp file in that same directory and a rename within it, so the target is either the old
 * content or the new content, never a mix, and neither the temp file nor the result can land
 * anywhere but in the directory the handle holds. Keeps the target's permission bits.
 *
 * @throws the fs error when the directory is not writable or the target is a directory;
 *   PathEscapeError when the target is (now) a symbolic link.
 * @example
 * ```ts
 * const dir = await env.openDirectory(dirname(target), { create: true });
 * try { await replaceFileAtomically(dir, basename(target), Buffer.from("hello"), signal); } finally { await dir.handle.close(); }
 * ```
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
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  }
}

/** pi's wording of an fs error: `"Error code: ENOENT"`, or the message when there is no code. */
export function describeFsError(error: unknown): string {
  if (error instanceof Error && "code" in error && typeof error.code === "string") return `Error code: ${error.code}`;
  return error instanceof Error ? error.message : String(error);
}
