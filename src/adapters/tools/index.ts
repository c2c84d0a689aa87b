/**
 * The built-in coding tools (read, bash, edit, write) and read-only tools (read, grep, find, ls), each bound to one {@link ExecutionEnv}. Parameters,
 * texts and details are pi's, with the fixes in docs/tools.md.
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
 * @example
 * const tools = createCodingTools(createExecutionEnv({ root: process.cwd() }));
 */
export function createCodingTools(env: ExecutionEnv, options: ToolSetOptions = {}): AgentTool<any, any>[] {
  return [createReadTool(env), createBashTool(env, options.bash), createEditTool(env), createWriteTool(env)];
}

/**
 * pi's read-only tool set bound to `env`: read, grep, find, ls. None of them changes files or runs commands.
 * @example
 * const tools = createReadOnlyTools(createExecutionEnv({ root: repo }));
 */
export function createReadOnlyTools(env: ExecutionEnv): AgentTool<any, any>[] {
  return [createReadTool(env), createGrepTool(env), createFindTool(env), createLsTool(env)];
}
