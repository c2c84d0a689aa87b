/**
 * The built-in coding tools and their execution sandbox.
 *
 * Contract (tool sets: pi 0.73.1, `docs/pi-parity.md`): the coding set is
 * read, bash, edit, write (in that order); the read-only set is read, grep, find, ls. Every tool
 * is bound to one {@link ExecutionEnv}: paths resolve inside its root, bash runs in its cwd with
 * its environment allowlist. Tool parameters, result texts and details are pi's, with the fixes
 * listed in docs/tools.md.
 *
 * @example
 * ```ts
 * const env = createExecutionEnv({ root: "/work/project" });
 * const agent = createAgent({ session, model, tools: createCodingTools(env) });
 * ```
 */
import type { AgentTool } from "../../core/tools.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { createBashTool, type BashToolOptions } from "./bash.ts";
import { createEditTool } from "./edit.ts";
import { createFindTool } from "./find.ts";
import { createGrepTool } from "./grep.ts";
import { createLsTool } from "./ls.ts";
import { createReadTool } from "./read.ts";
import { createWriteTool } from "./write.ts";

export { createExecutionEnv, type ExecutionEnv } from "../execution-env.ts";

/** Options of the tool-set factories. */
export interface ToolSetOptions {
  bash?: BashToolOptions;
}

/**
 * pi's default coding tool set bound to `env`: read, bash, edit, write.
 *
 * @example
 * ```ts
 * const tools = createCodingTools(createExecutionEnv({ root: process.cwd() }));
 * ```
 */
export function createCodingTools(env: ExecutionEnv, options: ToolSetOptions = {}): AgentTool<any, any>[] {
  return [createReadTool(env), createBashTool(env, options.bash), createEditTool(env), createWriteTool(env)];
}

/**
 * pi's read-only tool set bound to `env`: read, grep, find, ls. None of them changes files or runs commands.
 *
 * @example
 * ```ts
 * const tools = createReadOnlyTools(createExecutionEnv({ root: repo }));
 * ```
 */
export function createReadOnlyTools(env: ExecutionEnv): AgentTool<any, any>[] {
  return [createReadTool(env), createGrepTool(env), createFindTool(env), createLsTool(env)];
}
