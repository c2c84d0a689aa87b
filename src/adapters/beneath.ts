/**
 * Opening files beneath a held directory handle, refusing symbolic links at every component.
 *
 * Contract (ours; the model is Linux `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, which Node
 * does not expose and no well-kept npm package wraps without a native build):
 * - a walk starts from a directory opened once ({@link openBase}) and opens each further component
 *   RELATIVE TO THE PREVIOUS HANDLE through `/proc/self/fd/<fd>/<name>`, with
 *   `O_DIRECTORY | O_NOFOLLOW` for directories and `O_NOFOLLOW` for the last component, so a
 *   component that is (or becomes, mid-walk) a symbolic link fails the walk instead of being
 *   followed. No path string is ever resolved again after its handle is held;
 * - components must be plain names: `""`, `.`, `..` and names with `/` or NUL are refused;
 * - a refused component throws {@link PathEscapeError} naming the path and the component
 *   (`details.component`); a missing one throws the fs error (`ENOENT`) unchanged, so callers keep
 *   pi's "Path not found" texts; with `create`, missing directories are made inside the held
 *   parent (`mkdir /proc/self/fd/<fd>/<name>`) and then opened with `O_NOFOLLOW` like the others;
 * - callers own every returned handle and must close it; intermediate handles are closed here;
 * - {@link heldPath} is the path through which a held handle (plus an optional child name) is
 *   reached: `/proc/self/fd/<fd>[/<name>]`. Where `/proc/self/fd` is missing (not Linux), it falls
 *   back to the canonical path the handle was opened at, and the walk is then only as good as a
 *   per-component `O_NOFOLLOW` open by path (documented in docs/security.md).
 *
 * @example
 * ```ts
 * const base = await openBase("/work/project", rootIdentity);
 * const dir = await openDirectoryBeneath(base, ["src", "lib"], { create: true, path: "src/lib" });
 * const temp = heldPath(dir, ".a.ts.tmp"); // "/proc/self/fd/23/.a.ts.tmp"
 * ```
 */
import { constants, existsSync } from "node:fs";
import { mkdir, open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { PathEscapeError } from "../core/errors.ts";

/** A directory handle with the canonical path it was opened at (for messages and the non-Linux fallback). */
export interface HeldDirectory {
  readonly handle: FileHandle;
  /** Canonical absolute path the handle was opened at. */
  readonly path: string;
}

/** Device and inode of a directory, to check that a base was not replaced. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

const PROC_FD = existsSync("/proc/self/fd");
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The path that reaches `directory` (and `name` inside it) through its held handle.
 *
 * @example
 * ```ts
 * await rename(heldPath(dir, tempName), heldPath(dir, "a.ts"));
 * ```
 */
export function heldPath(directory: HeldDirectory, name?: string): string {
  const base = PROC_FD ? `/proc/self/fd/${directory.handle.fd}` : directory.path;
  return name === undefined ? base : `${base}/${name}`;
}

function refuse(path: string, component: string, why: string): never {
  throw new PathEscapeError(`Path "${path}" refused: ${why} ("${component}").`, { details: { path, component } });
}

function checkName(path: string, name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    refuse(path, name, "a path component must be a plain name");
  }
}

/**
 * Opens the directory a walk starts from. With `identity`, the opened directory must have that
 * device and inode (the root recorded when the env was created), else PathEscapeError.
 *
 * @throws PathEscapeError when the base is a symbolic link or was replaced; the fs error when missing.
 * @example
 * ```ts
 * const base = await openBase(env.root, identity);
 * ```
 */
export async function openBase(path: string, identity?: FileIdentity): Promise<HeldDirectory> {
  let handle: FileHandle;
  try {
    handle = await open(path, DIRECTORY_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") refuse(path, path, "the base directory is no longer a directory");
    throw error;
  }
  if (identity) {
    const stats = await handle.stat();
    if (stats.dev !== identity.dev || stats.ino !== identity.ino) {
      await handle.close();
      refuse(path, path, "the base directory was replaced since it was checked");
    }
  }
  return { handle, path };
}

/** Options of {@link openDirectoryBeneath}. */
export interface WalkOptions {
  /** Create missing directories inside their held parent. Default false. */
  create?: boolean;
  /** The path as the caller names it in errors. Default: the joined components. */
  path?: string;
}

/**
 * Opens the directory `components` below `base` (an empty list re-opens `base` itself). `base`
 * stays open and owned by the caller. See the module contract.
 *
 * @throws PathEscapeError when a component is a symbolic link or not a directory; the fs error otherwise.
 * @example
 * ```ts
 * const dir = await openDirectoryBeneath(base, ["a", "b"]);
 * try { ... } finally { await dir.handle.close(); }
 * ```
 */
export async function openDirectoryBeneath(base: HeldDirectory, components: readonly string[], options: WalkOptions = {}): Promise<HeldDirectory> {
  const shown = options.path ?? components.join("/");
  // The held handle's own magic link is followed on purpose (it IS the held directory).
  let current: HeldDirectory = { handle: await open(heldPath(base), constants.O_RDONLY | constants.O_DIRECTORY), path: base.path };
  try {
    for (const name of components) {
      checkName(shown, name);
      const next = await openChildDirectory(current, name, shown, options.create === true);
      await current.handle.close();
      current = next;
    }
    return current;
  } catch (error) {
    await current.handle.close().catch(() => undefined);
    throw error;
  }
}

async function openChildDirectory(parent: HeldDirectory, name: string, shown: string, create: boolean): Promise<HeldDirectory> {
  const path = join(parent.path, name);
  for (let attempt = 0; ; attempt += 1) {
    try {
      return { handle: await open(heldPath(parent, name), DIRECTORY_FLAGS), path };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ELOOP" || code === "ENOTDIR") refuse(shown, name, "a component is a symbolic link or not a directory");
      if (code !== "ENOENT" || !create || attempt > 0) throw error;
    }
    try {
      await mkdir(heldPath(parent, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}

/**
 * Opens the file `name` inside a held directory with `O_NOFOLLOW` (plus `flags`, default
 * read-only and non-blocking so a FIFO cannot hang the open).
 *
 * @throws PathEscapeError when `name` is a symbolic link; the fs error otherwise (ENOENT, EISDIR...).
 * @example
 * ```ts
 * const file = await openFileIn(dir, "a.ts", "src/a.ts");
 * ```
 */
export async function openFileIn(directory: HeldDirectory, name: string, path: string, flags = constants.O_RDONLY | constants.O_NONBLOCK): Promise<FileHandle> {
  checkName(path, name);
  try {
    return await open(heldPath(directory, name), flags | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") refuse(path, name, "the file is a symbolic link");
    throw error;
  }
}

/**
 * Keeps the chain of open directories for a run of sorted relative paths (find and grep results),
 * so each directory is opened once per run and at most one chain (the path depth) is open.
 *
 * @example
 * ```ts
 * const walker = new HeldWalker(searchDir);
 * for (const rel of sortedPaths) { const dir = await walker.directoryOf(rel); ... }
 * await walker.close();
 * ```
 */
export class HeldWalker {
  private readonly chain: { name: string; directory: HeldDirectory }[] = [];

  constructor(private readonly base: HeldDirectory) {}

  /** The held parent directory of `relative` (POSIX separators, no leading `/`), and the last name. */
  async directoryOf(relative: string): Promise<{ directory: HeldDirectory; name: string }> {
    const parts = relative.split("/").filter((part) => part !== "");
    const name = parts.pop() ?? "";
    let common = 0;
    while (common < this.chain.length && common < parts.length && this.chain[common].name === parts[common]) common += 1;
    while (this.chain.length > common) await this.chain.pop()!.directory.handle.close();
    for (let index = common; index < parts.length; index += 1) {
      const parent = index === 0 ? this.base : this.chain[index - 1].directory;
      checkName(relative, parts[index]);
      this.chain.push({ name: parts[index], directory: await openChildDirectory(parent, parts[index], relative, false) });
    }
    return { directory: this.chain.length > 0 ? this.chain[this.chain.length - 1].directory : this.base, name };
  }

  /** Closes the open chain (not the base). */
  async close(): Promise<void> {
    while (this.chain.length > 0) await this.chain.pop()!.directory.handle.close();
  }
}
