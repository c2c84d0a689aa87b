/**
 * Opening files beneath a held directory handle, refusing symbolic links at every component (the model is `openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS)`): each component is opened relative to the previous handle through `/proc/self/fd/<fd>/<name>` with `O_NOFOLLOW`, so no
 * path string is resolved twice. Bad names and links throw {@link PathEscapeError}; a missing one throws the fs error. Callers close what they get.
 * Without `/proc/self/fd` (not Linux) it falls back to per-component `O_NOFOLLOW` opens by path.
 */
import { constants, existsSync } from "node:fs";
import { mkdir, open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { PathEscapeError } from "../core/errors.ts";
import { ignoreError } from "../core/ignored.ts";

/** A directory handle with the canonical path it was opened at (for messages and the non-Linux fallback). */
export interface HeldDirectory {
  readonly handle: FileHandle;
  /** Canonical absolute path the handle was opened at. */
  readonly path: string;
}

/** Whether an fs error means that nothing is at the path (`ENOENT`, or `ENOTDIR`: a file where a directory should be). */
export function isMissingPath(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** Device and inode of a directory, to check that a base was not replaced. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

const PROC_FD = existsSync("/proc/self/fd");
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The path that reaches `directory` (and `name` inside it) through its held handle. */
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
 * @throws PathEscapeError when the base is a symbolic link or was replaced; the fs error when missing.
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
 * @throws PathEscapeError when a component is a symbolic link or not a directory; the fs error otherwise.
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
    await current.handle.close().catch(ignoreError("closing a directory handle after a failed walk; the walk's error is thrown"));
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
 * Opens the file `name` inside a held directory with `O_NOFOLLOW` (plus `flags`, default read-only and non-blocking so a FIFO cannot hang the open).
 * @throws PathEscapeError when `name` is a symbolic link; the fs error otherwise (ENOENT, EISDIR...).
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

/** Keeps the chain of open directories for a run of sorted relative paths, so each directory opens once and at most one chain is open. */
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
