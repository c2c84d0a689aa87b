/**
 * Nested ignore files for directory walks, with git's semantics.
 *
 * Contract (ours; pi reads the same files but prefixes every pattern with the
 * directory, which breaks slash-less patterns in nested files):
 * - `.gitignore`, `.ignore` and `.fdignore` are read in every directory the
 *   walk enters (pi's set), with the `ignore` package;
 * - a path is tested against each level from the deepest directory up to the
 *   root, relative to that level's directory; the first level with a matching
 *   rule (ignore or `!` re-include) decides, so deeper files override
 *   shallower ones as in git;
 * - unreadable ignore files are skipped silently.
 *
 * @example
 * ```ts
 * const root = IgnoreRules.root("/skills");
 * const child = root.enter("/skills/team");
 * child.ignores("/skills/team/draft", true); // true if some level ignores "draft/"
 * ```
 */
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

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
    matcher ??= ignore();
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
