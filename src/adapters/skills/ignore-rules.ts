/**
 * Nested ignore files (`.gitignore`, `.ignore`, `.fdignore`) for directory walks, with git's semantics: each level is tested from the deepest
 * directory up, relative to its own directory, and the first level with a matching rule decides. Unreadable ignore files are skipped.
 */
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type createIgnore from "ignore";
import type { Ignore } from "ignore";
import { lazyRequire } from "../../core/lazy-require.ts";

/** The `ignore` package, loaded on first use (it is not needed until a `.gitignore` is read). */
const ignore = lazyRequire<typeof createIgnore>("ignore");

const IGNORE_FILE_NAMES = [".gitignore", ".ignore", ".fdignore"];

interface Level {
  dir: string;
  matcher: Ignore;
}

function readLevel(dir: string): Level | undefined {
  let matcher: Ignore | undefined;
  for (const fileName of IGNORE_FILE_NAMES) {
    let text: string;
    try {
      text = readFileSync(join(dir, fileName), "utf8");
    } catch {
      continue;
    }
    matcher ??= ignore()();
    matcher.add(text);
  }
  return matcher ? { dir, matcher } : undefined;
}

function toPosix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}

/** The ignore rules in force in one directory of a walk. Immutable; {@link IgnoreRules.enter} returns a new object. */
export class IgnoreRules {
  private constructor(private readonly levels: readonly Level[]) {}

  /** Rules for the walk's root directory (reads its ignore files). */
  static root(dir: string): IgnoreRules {
    const level = readLevel(dir);
    return new IgnoreRules(level ? [level] : []);
  }

  /** Rules for a subdirectory `dir` (adds its ignore files, if any). */
  enter(dir: string): IgnoreRules {
    const level = readLevel(dir);
    return level ? new IgnoreRules([...this.levels, level]) : this;
  }

  /** True when `path` (absolute, inside the walk) is ignored. `isDirectory` lets `dir/` patterns match. */
  ignores(path: string, isDirectory: boolean): boolean {
    for (let index = this.levels.length - 1; index >= 0; index--) {
      const level = this.levels[index];
      const rel = toPosix(relative(level.dir, path));
      if (rel === "" || rel.startsWith("..")) continue;
      const result = level.matcher.test(isDirectory ? `${rel}/` : rel);
      if (result.ignored) return true;
      if (result.unignored) return false;
    }
    return false;
  }
}
