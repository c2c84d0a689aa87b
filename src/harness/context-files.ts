/**
 * Project context files: `AGENTS.md` (or `CLAUDE.md`) instructions appended to the system prompt.
 *
 * Contract (pi 0.73.1's `loadProjectContextFiles` and `buildSystemPrompt`; the folder names ours):
 * - from one folder the first of `AGENTS.md`, `AGENTS.MD`, `CLAUDE.md`, `CLAUDE.MD` that exists is
 *   read (UTF-8, as is); an unreadable one is skipped with a warning on stderr (pi);
 * - {@link loadContextFiles}: the global agent folder's file first, then one file per folder from
 *   the filesystem root down to `cwd` (outermost first); a file already taken is not taken twice;
 * - the global agent folder is `$ARBOR_AGENT_DIR` (a leading `~` is the home folder), else
 *   `~/.arbor/agent` ({@link defaultAgentDir}; pi's is `~/.pi/agent`);
 * - {@link formatContextFiles} is the section `buildSystemPrompt` appends after the prompt and
 *   before the skills catalog: `\n\n# Project Context\n\nProject-specific instructions and
 *   guidelines:\n\n` then `## <path>\n\n<content>\n\n` per file; nothing for no files.
 *
 * @example
 * ```ts
 * const files = loadContextFiles({ cwd: "/home/me/app/src", agentDir: defaultAgentDir() });
 * // [{ path: "/home/me/.arbor/agent/AGENTS.md", content: "…" }, { path: "/home/me/app/AGENTS.md", content: "…" }]
 * ```
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** One loaded context file: its absolute path and its text. */
export interface ContextFile {
  path: string;
  content: string;
}

const CANDIDATES = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"] as const;

/**
 * The global agent folder: `$ARBOR_AGENT_DIR` (with `~` expanded), else `~/.arbor/agent`.
 *
 * @example
 * ```ts
 * defaultAgentDir({ ARBOR_AGENT_DIR: "~/agents" }); // "/home/me/agents"
 * ```
 */
export function defaultAgentDir(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.ARBOR_AGENT_DIR;
  if (given) return given === "~" ? homedir() : given.startsWith("~/") ? join(homedir(), given.slice(2)) : resolve(given);
  return join(homedir(), ".arbor", "agent");
}

function contextFileIn(folder: string): ContextFile | undefined {
  for (const name of CANDIDATES) {
    const path = join(folder, name);
    if (!existsSync(path)) continue;
    try {
      return { path, content: readFileSync(path, "utf8") };
    } catch (error) {
      process.stderr.write(`Warning: Could not read ${path}: ${String(error)}\n`);
    }
  }
  return undefined;
}

/**
 * The context files for `cwd`: the global folder's, then the ancestors' from the root down to
 * `cwd` (see the module contract). Reads files; never writes.
 *
 * @example
 * ```ts
 * loadContextFiles({ cwd: process.cwd(), agentDir: defaultAgentDir() }).map((file) => file.path);
 * ```
 */
export function loadContextFiles(options: { cwd: string; agentDir: string }): ContextFile[] {
  const files: ContextFile[] = [];
  const seen = new Set<string>();
  const global = contextFileIn(options.agentDir);
  if (global) {
    files.push(global);
    seen.add(global.path);
  }
  const ancestors: ContextFile[] = [];
  let folder = options.cwd;
  const root = resolve("/");
  for (;;) {
    const file = contextFileIn(folder);
    if (file && !seen.has(file.path)) {
      ancestors.unshift(file);
      seen.add(file.path);
    }
    if (folder === root) break;
    const parent = resolve(folder, "..");
    if (parent === folder) break;
    folder = parent;
  }
  return [...files, ...ancestors];
}

/**
 * The `# Project Context` section for `files` ("" for none), byte-identical to pi's.
 *
 * @example
 * ```ts
 * formatContextFiles([{ path: "/repo/AGENTS.md", content: "Use pnpm." }]);
 * // "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n## /repo/AGENTS.md\n\nUse pnpm.\n\n"
 * ```
 */
export function formatContextFiles(files: readonly ContextFile[]): string {
  if (files.length === 0) return "";
  let section = "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n";
  for (const { path, content } of files) section += `## ${path}\n\n${content}\n\n`;
  return section;
}
