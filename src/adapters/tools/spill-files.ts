/**
 * The lifetime of bash spill files: each env spills into its own 0700 folder; {@link sweepSpillFiles} deletes spill files older than `retentionMs`,
 * then the oldest until the rest fit `maxBytes` (defaults 7 days, 256 MiB), skipping other users' files and never throwing; `removeSpillFiles`
 * deletes an env's own folder when its session ends.
 */
import { lstat, readdir, rm, rmdir, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { ignoreError } from "../../core/ignored.ts";

/** Spill files are housekeeping: what cannot be read or removed is left alone. */
const HOUSEKEEPING = "spill-file housekeeping never throws";
const leaveAlone = ignoreError(HOUSEKEEPING);
const leaveAloneAs = <T>(fallback: T) => ignoreError(HOUSEKEEPING, fallback);

/**
 * How long a spill file is kept, in ms (7 days).
 * @example
 * const retentionMs = DEFAULT_SPILL_RETENTION_MS * 2; // keep spill files 14 days
 */
export const DEFAULT_SPILL_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * The most all spill files under one spill root may take, in bytes (256 MiB); also the cap of one file.
 * @example
 * const budget = DEFAULT_SPILL_MAX_BYTES / 2; // keep half the default total of spill files
 */
export const DEFAULT_SPILL_MAX_BYTES = 256 * 1024 * 1024;

const SPILL_NAME = /^arbor-bash-[0-9a-f]+\.log$/;

/** Options of {@link sweepSpillFiles}. */
export interface SpillSweepOptions {
  /** The folder holding env folders (or spill files directly). */
  root: string;
  /** Age (ms since the last modification) after which a file is deleted. */
  retentionMs: number;
  /** Total size (bytes) the files kept may take. */
  maxBytes: number;
  /** Also sweep the folders directly under `root` (env folders). Default true. */
  nested?: boolean;
  /** The clock, in ms since the epoch. Default `Date.now()`. */
  now?: number;
}

/** What a sweep did. */
export interface SpillSweepResult {
  /** Absolute paths of the deleted files, oldest first. */
  removed: string[];
  /** Bytes the kept files take. */
  keptBytes: number;
}

interface SpillFile {
  path: string;
  size: number;
  mtimeMs: number;
}

async function spillFilesIn(folder: string, uid: number | undefined): Promise<SpillFile[]> {
  const names = await readdir(folder).catch(leaveAloneAs([] as string[]));
  const files: SpillFile[] = [];
  for (const name of names) {
    if (!SPILL_NAME.test(name)) continue;
    const path = join(folder, name);
    const stats = await lstat(path).catch(leaveAlone);
    if (!stats?.isFile() || (uid !== undefined && stats.uid !== uid)) continue;
    files.push({ path, size: stats.size, mtimeMs: stats.mtimeMs });
  }
  return files;
}

/**
 * Deletes expired spill files, then the oldest until the total fits (see the module contract). Never throws.
 * @example
 * const { removed } = await sweepSpillFiles({ root, retentionMs: 0, maxBytes: 0 }); // deletes every spill file
 */
export async function sweepSpillFiles(options: SpillSweepOptions): Promise<SpillSweepResult> {
  const now = options.now ?? Date.now();
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const folders: string[] = [options.root];
  if (options.nested !== false) {
    for (const entry of (await readdir(options.root, { withFileTypes: true }).catch(leaveAlone)) ?? []) {
      if (entry.isDirectory()) folders.push(join(options.root, entry.name));
    }
  }
  const files = (await Promise.all(folders.map((folder) => spillFilesIn(folder, uid)))).flat().sort((a, b) => a.mtimeMs - b.mtimeMs);
  const removed: string[] = [];
  let total = files.reduce((sum, file) => sum + file.size, 0);
  for (const file of files) {
    if (now - file.mtimeMs <= options.retentionMs && total <= options.maxBytes) continue;
    if (await unlink(file.path).then(() => true, leaveAloneAs(false))) {
      removed.push(file.path);
      total -= file.size;
    }
  }
  for (const folder of folders.slice(1)) {
    const stats = await lstat(folder).catch(leaveAlone);
    if (stats && (uid === undefined || stats.uid === uid) && now - stats.mtimeMs > options.retentionMs) await rmdir(folder).catch(leaveAlone);
  }
  return { removed, keptBytes: total };
}

/** Deletes a spill folder and everything in it. Never throws. */
export async function removeSpillFolder(folder: string): Promise<void> {
  await rm(folder, { recursive: true, force: true }).catch(leaveAlone);
}

/**
 * The spill files a session's tool results point at (`details.fullOutputPath` of a truncated bash result), in entry order, without repeats. Only
 * paths whose file name is a spill file's (`arbor-bash-<hex>.log`) are returned, so a result that names another file is never a target.
 * @example
 * const paths = spillFilesOf(session.view.getEntries());
 */
export function spillFilesOf(entries: readonly unknown[]): string[] {
  const paths = new Set<string>();
  for (const entry of entries) {
    const message = (entry as { type?: unknown; message?: { role?: unknown; details?: unknown } }).message;
    if ((entry as { type?: unknown }).type !== "message" || message?.role !== "toolResult") continue;
    const path = (message.details as { fullOutputPath?: unknown } | undefined)?.fullOutputPath;
    if (typeof path === "string" && SPILL_NAME.test(basename(path))) paths.add(path);
  }
  return [...paths];
}

/**
 * Deletes the given spill files: each must be a regular file (not a link) named like a spill file and owned by this user; anything else, and a file
 * already gone, is skipped. Never throws. Returns the paths deleted. `arbor rm` calls it with {@link spillFilesOf} the deleted session.
 * @example
 * const removed = await removeSpillFiles(spillFilesOf(session.view.getEntries()));
 */
export async function removeSpillFiles(paths: readonly string[]): Promise<string[]> {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const removed: string[] = [];
  for (const path of paths) {
    if (!SPILL_NAME.test(basename(path))) continue;
    const stats = await lstat(path).catch(leaveAlone);
    if (!stats?.isFile() || (uid !== undefined && stats.uid !== uid)) continue;
    if (await unlink(path).then(() => true, leaveAloneAs(false))) removed.push(path);
  }
  return removed;
}
