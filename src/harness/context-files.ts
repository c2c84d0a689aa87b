/**
 * Project context files (`AGENTS.md`, else `CLAUDE.md`) appended to the system prompt as pi does: the global agent folder's (`$ARBOR_AGENT_DIR`,
 * else `~/.arbor/agent`) first, then one per folder from the root down to `cwd`, each once; unreadable ones are skipped with a warning.
 * {@link formatContextFiles} renders the `# Project Context` section.
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
 * @example
 * defaultAgentDir({ ARBOR_AGENT_DIR: "~/agents" }); // "/home/me/agents"
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
 * @example
 * loadContextFiles({ cwd: process.cwd(), agentDir: defaultAgentDir() }).map((file) => file.path);
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
 * @example
 * formatContextFiles([{ path: "/repo/AGENTS.md", content: "Use pnpm." }]);
 * // "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n## /repo/AGENTS.md\n\nUse pnpm.\n\n"
 */
export function formatContextFiles(files: readonly ContextFile[]): string {
  if (files.length === 0) return "";
  let section = "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n";
  for (const { path, content } of files) section += `## ${path}\n\n${content}\n\n`;
  return section;
}
