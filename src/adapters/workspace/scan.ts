/**
 * The workspace scan: every file, symlink and folder under a root with size, mtime, ctime, inode and mode, honouring nested `.gitignore` files
 * (`.git` never scanned, links never followed, sockets and devices left out). Synchronous; a {@link WorkspaceScanner} keeps compiled rules between
 * scans and hashing goes through {@link StatCache} (git's "racily clean" rule). Vanished entries are left out; an unreadable folder is an error.
 */
import fs from "node:fs";
import { join, sep } from "node:path";
import type createIgnore from "ignore";
import type { Ignore } from "ignore";
import { lazyRequire } from "../../core/lazy-require.ts";

/** The `ignore` package, loaded on first use (it is not needed until a `.gitignore` is read). */
const ignore = lazyRequire<typeof createIgnore>("ignore");

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

/** A folder's compiled `.gitignore`, with the stat that tells whether the file changed since. */
interface CompiledRules extends Rules {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
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
 * A scanner of one root that keeps each folder's compiled `.gitignore` between scans (compiled again only when the file's size, mtime, ctime or inode
 * changed), so a scan of an unchanged tree costs its `readdir`s and `lstat`s and the rules' cached answers.
 */
export class WorkspaceScanner {
  private readonly root: string;
  private readonly rules = new Map<string, CompiledRules>();

  constructor(root: string) {
    this.root = root;
  }

  /** Every entry under the root that `.gitignore` does not exclude (see the module contract). */
  scan(): Map<string, ScanEntry> {
    const entries = new Map<string, ScanEntry>();
    const seen = new Set<string>();
    const walk = (directory: string, relative: string, stack: Rules[]) => {
      let names: fs.Dirent[];
      try {
        names = fs.readdirSync(directory, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT" && relative !== "") return;
        throw error;
      }
      let rules = stack;
      if (names.some((dirent) => dirent.name === ".gitignore")) {
        const own = this.rulesIn(directory, relative);
        if (own) {
          seen.add(relative);
          rules = [...stack, own];
        }
      }
      const prefix = relative === "" ? "" : `${relative}/`;
      for (const dirent of names) {
        const name = dirent.name;
        if (name === ".git") continue;
        const path = prefix + name;
        const absolute = `${directory}${sep}${name}`;
        const stat = fs.lstatSync(absolute, { throwIfNoEntry: false });
        if (!stat) continue;
        if (stat.isDirectory()) {
          if (rules.length > 0 && ignoredBy(rules, path, true)) continue;
          entries.set(path, { kind: "dir", mode: stat.mode & 0o7777 });
          walk(absolute, path, rules);
        } else if (stat.isFile()) {
          if (rules.length > 0 && ignoredBy(rules, path, false)) continue;
          entries.set(path, { kind: "file", size: stat.size, mode: stat.mode & 0o7777, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino });
        } else if (stat.isSymbolicLink()) {
          if (rules.length > 0 && ignoredBy(rules, path, false)) continue;
          try {
            entries.set(path, { kind: "symlink", target: fs.readlinkSync(absolute) });
          } catch {
            continue;
          }
        }
      }
    };
    walk(this.root, "", []);
    // Rules of folders that are gone (or lost their .gitignore) are dropped.
    for (const base of this.rules.keys()) if (!seen.has(base)) this.rules.delete(base);
    return entries;
  }

  /** The folder's rules: compiled once, again only when its `.gitignore` changed; undefined when unreadable. */
  private rulesIn(directory: string, base: string): Rules | undefined {
    const file = `${directory}${sep}.gitignore`;
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile()) return undefined;
    const known = this.rules.get(base);
    if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs && known.ctimeMs === stat.ctimeMs && known.ino === stat.ino && stat.mtimeMs < Date.now() - RACY_MS) return known;
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch {
      return undefined;
    }
    const compiled: CompiledRules = { base, rules: ignore()({ allowRelativePaths: true }).add(text), size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
    this.rules.set(base, compiled);
    return compiled;
  }
}

/** The entry at one relative path (no `.gitignore` check: the caller asked for it), or undefined when nothing is there. */
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
 * Hashes seen per path: a file whose size, mtime, ctime and inode are as when it was last hashed is not read again, unless it changed within {@link
 * RACY_MS} of that read (git's racily-clean rule: a write in the same timestamp tick would keep the mtime).
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
