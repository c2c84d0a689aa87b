/**
 * The workspace scan: every file, symlink and folder under a root, with what tells a change
 * (size, mtime, ctime, inode, mode), respecting `.gitignore` (the `ignore` package).
 *
 * Contract (ours; the size-and-mtime-then-hash rule is git's index "racily clean" check):
 * - paths are POSIX and relative to the root; `.git` is never scanned; a `.gitignore` in any
 *   folder applies below it, deeper rules override shallower ones, `!negations` re-include;
 *   ignored entries are not scanned (an ignored folder is never entered);
 * - symlinks are recorded as links (never followed); sockets, FIFOs and devices are left out;
 * - the scan is synchronous (one `readdirSync` per folder, one `lstatSync` per entry): on a
 *   20,000-file tree it is the cost of those calls; hashing is the caller's, through
 *   {@link StatCache} so an unchanged file is not read again;
 * - an entry that vanishes during the scan is left out; an unreadable folder is an error.
 *
 * @example
 * ```ts
 * const entries = scanWorkspace("/repo");
 * for (const [path, entry] of entries) if (entry.kind === "file") console.log(path, entry.size);
 * ```
 */
import fs from "node:fs";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";

/** One scanned entry. `mode` is the permission bits. */
export type ScanEntry =
  | { kind: "file"; size: number; mode: number; mtimeMs: number; ctimeMs: number; ino: number }
  | { kind: "symlink"; target: string }
  | { kind: "dir"; mode: number };

interface Rules {
  /** The folder's path relative to the root ("" for the root). */
  base: string;
  rules: Ignore;
}

function rulesIn(directory: string, base: string): Rules | undefined {
  let text: string;
  try {
    text = fs.readFileSync(join(directory, ".gitignore"), "utf8");
  } catch {
    return undefined;
  }
  return { base, rules: ignore({ allowRelativePaths: true }).add(text) };
}

function ignoredBy(stack: readonly Rules[], path: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const { base, rules } of stack) {
    const relative = base === "" ? path : path.slice(base.length + 1);
    const result = rules.test(isDirectory ? `${relative}/` : relative);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/**
 * Every entry under `root` that `.gitignore` does not exclude (see the module contract).
 *
 * @example
 * ```ts
 * const entries = scanWorkspace(process.cwd());
 * ```
 */
export function scanWorkspace(root: string): Map<string, ScanEntry> {
  const entries = new Map<string, ScanEntry>();
  const walk = (directory: string, relative: string, stack: Rules[]) => {
    const own = rulesIn(directory, relative);
    const rules = own ? [...stack, own] : stack;
    let names: fs.Dirent[];
    try {
      names = fs.readdirSync(directory, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT" && relative !== "") return;
      throw error;
    }
    for (const dirent of names) {
      const name = dirent.name;
      if (name === ".git") continue;
      const path = relative === "" ? name : `${relative}/${name}`;
      const absolute = join(directory, name);
      let stat: fs.Stats;
      try {
        stat = fs.lstatSync(absolute);
      } catch {
        continue;
      }
      if (stat.isDirectory()) {
        if (ignoredBy(rules, path, true)) continue;
        entries.set(path, { kind: "dir", mode: stat.mode & 0o7777 });
        walk(absolute, path, rules);
      } else if (stat.isFile()) {
        if (ignoredBy(rules, path, false)) continue;
        entries.set(path, { kind: "file", size: stat.size, mode: stat.mode & 0o7777, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino });
      } else if (stat.isSymbolicLink()) {
        if (ignoredBy(rules, path, false)) continue;
        try {
          entries.set(path, { kind: "symlink", target: fs.readlinkSync(absolute) });
        } catch {
          continue;
        }
      }
    }
  };
  walk(root, "", []);
  return entries;
}

/**
 * The entry at one relative path (no `.gitignore` check: the caller asked for it), or
 * undefined when nothing is there.
 *
 * @example
 * ```ts
 * const entry = scanPath("/repo", "src/a.ts");
 * ```
 */
export function scanPath(root: string, path: string): ScanEntry | undefined {
  const absolute = join(root, path);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(absolute);
  } catch {
    return undefined;
  }
  if (stat.isDirectory()) return { kind: "dir", mode: stat.mode & 0o7777 };
  if (stat.isFile()) return { kind: "file", size: stat.size, mode: stat.mode & 0o7777, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
  if (stat.isSymbolicLink()) return { kind: "symlink", target: fs.readlinkSync(absolute) };
  return undefined;
}

/** A file's hash as last read, with the stat that tells whether it may have changed since. */
interface Cached {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  hash: string;
}

/**
 * Hashes seen per path: a file whose size, mtime, ctime and inode are as when it was last hashed
 * is not read again, unless it changed within {@link RACY_MS} of that read (git's racily-clean rule:
 * a write in the same timestamp tick would keep the mtime).
 *
 * @example
 * ```ts
 * const cache = new StatCache();
 * const hash = cache.lookup("a.txt", entry);
 * ```
 */
export class StatCache {
  private readonly byPath = new Map<string, Cached & { readAt: number }>();

  /** The cached hash when `entry` is unchanged since it was read, else undefined. */
  lookup(path: string, entry: Extract<ScanEntry, { kind: "file" }>): string | undefined {
    const cached = this.byPath.get(path);
    if (!cached) return undefined;
    if (cached.size !== entry.size || cached.mtimeMs !== entry.mtimeMs || cached.ctimeMs !== entry.ctimeMs || cached.ino !== entry.ino) return undefined;
    if (entry.mtimeMs >= cached.readAt - RACY_MS || entry.ctimeMs >= cached.readAt - RACY_MS) return undefined;
    return cached.hash;
  }

  /** Records the hash of `entry` as read at `readAt` (ms since the epoch; default now). */
  remember(path: string, entry: Extract<ScanEntry, { kind: "file" }>, hash: string, readAt = Date.now()): void {
    this.byPath.set(path, { size: entry.size, mtimeMs: entry.mtimeMs, ctimeMs: entry.ctimeMs, ino: entry.ino, hash, readAt });
  }

  forget(path: string): void {
    this.byPath.delete(path);
  }
}

/** A file changed this close (ms) before it was hashed is hashed again next time. */
export const RACY_MS = 100;
