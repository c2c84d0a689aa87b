/**
 * Hierarchical .gitignore matching for grep, find and ls (the `ignore` package, git's semantics): rules from every `.gitignore` from `top` down, each
 * relative to its directory; `.git` ignored by default; files read once per filter (one filter per call). {@link GitignoreFilter.globFs} lets
 * `tinyglobby` skip ignored directories.
 */
import fs from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type createIgnore from "ignore";
import type { Ignore } from "ignore";
import { lazyRequire } from "../../core/lazy-require.ts";

/** The `ignore` package, loaded on first use (it is not needed until a `.gitignore` is read). */
const ignore = lazyRequire<typeof createIgnore>("ignore");

/** Options of {@link GitignoreFilter}. */
export interface GitignoreFilterOptions {
  /** Treat a `.git` entry as ignored. Default true. */
  skipGitDirectory?: boolean;
}

/** Matches paths against the .gitignore files between `top` and the path. See the module contract. */
export class GitignoreFilter {
  private readonly top: string;
  private readonly skipGitDirectory: boolean;
  private readonly rules = new Map<string, Ignore | null>();

  constructor(top: string, options: GitignoreFilterOptions = {}) {
    this.top = resolve(top);
    this.skipGitDirectory = options.skipGitDirectory ?? true;
  }

  private rulesOf(directory: string): Ignore | null {
    let rules = this.rules.get(directory);
    if (rules === undefined) {
      try {
        rules = ignore()({ allowRelativePaths: true }).add(fs.readFileSync(join(directory, ".gitignore"), "utf8"));
      } catch {
        rules = null;
      }
      this.rules.set(directory, rules);
    }
    return rules;
  }

  /** True when the entry at `path` (absolute) is ignored by the rules above it. Ancestors are not checked. */
  isIgnored(path: string, isDirectory: boolean): boolean {
    const absolute = resolve(path);
    if (this.skipGitDirectory && absolute.endsWith(`${sep}.git`)) return true;
    if (!absolute.startsWith(this.top + sep)) return false;
    const chain: string[] = [];
    for (let directory = dirname(absolute); ; directory = dirname(directory)) {
      chain.unshift(directory);
      if (directory === this.top || directory === dirname(directory)) break;
    }
    let ignored = false;
    for (const directory of chain) {
      const rules = this.rulesOf(directory);
      if (!rules) continue;
      const relativePath = relative(directory, absolute).split(sep).join("/");
      if (!relativePath) continue;
      const result = rules.test(isDirectory ? `${relativePath}/` : relativePath);
      if (result.ignored) ignored = true;
      else if (result.unignored) ignored = false;
    }
    return ignored;
  }

  /** True when `path` or any directory between `top` and it is ignored. */
  isIgnoredDeep(path: string, isDirectory: boolean): boolean {
    const absolute = resolve(path);
    for (let directory = dirname(absolute); directory.startsWith(this.top + sep); directory = dirname(directory)) {
      if (this.isIgnored(directory, true)) return true;
    }
    return this.isIgnored(absolute, isDirectory);
  }

  /** A tinyglobby/fdir fs adapter that hides ignored entries from directory listings. */
  globFs(): { readdir: typeof fs.readdir; readdirSync: typeof fs.readdirSync } {
    const keep = (directory: string, entries: fs.Dirent[]) =>
      entries.filter((entry) => !this.isIgnored(join(resolve(directory), entry.name), entry.isDirectory()));
    const readdir = ((directory: string, options: unknown, callback: (error: NodeJS.ErrnoException | null, entries?: fs.Dirent[]) => void) => {
      fs.readdir(directory, options as { withFileTypes: true }, (error, entries) => {
        callback(error, error ? entries : keep(directory, entries));
      });
    }) as unknown as typeof fs.readdir;
    const readdirSync = ((directory: string, options: unknown) =>
      keep(directory, fs.readdirSync(directory, options as { withFileTypes: true }))) as unknown as typeof fs.readdirSync;
    return { readdir, readdirSync };
  }
}
