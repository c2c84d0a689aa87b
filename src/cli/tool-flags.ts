/**
 * The CLI flags that confine the coding tools: `--sandbox`, `--allow-network`, `--env NAME`,
 * `--allow-hard-links`, and their ExecutionEnv options.
 *
 * Contract (ours):
 * - `--sandbox none` (default) or `--sandbox bubblewrap`; anything else is a usage error naming
 *   the accepted modes; `--allow-network` without bubblewrap is refused (nothing to allow);
 * - `--env NAME` (repeatable, `PREFIX*` allowed) adds to the default environment allowlist;
 * - {@link toolEnvOptions} returns the ExecutionEnv options for `root`.
 *
 * @example
 * ```ts
 * const env = createExecutionEnv(toolEnvOptions(cwd, { sandbox: "bubblewrap", env: ["GOPATH"] }));
 * ```
 */
import type { Command } from "commander";
import { DEFAULT_ENV_ALLOWLIST, type ExecutionEnvOptions } from "../adapters/execution-env.ts";
import { CliError } from "./cli-error.ts";

/** Flags of the coding tools' ExecutionEnv. */
export interface ToolFlags {
  sandbox?: string;
  allowNetwork?: boolean;
  env?: string[];
  allowHardLinks?: boolean;
  /** `--checkpoints`: record the files under `--cwd` (workspace checkpoints). */
  checkpoints?: boolean;
}

/** Adds the tool-confinement flags to a command. */
export function withToolFlags(command: Command): Command {
  return command
    .option("--sandbox <mode>", "confine bash commands: none or bubblewrap (default: none, commands run unconfined)")
    .option("--allow-network", "let bash commands use the network under --sandbox bubblewrap")
    .option("--env <name>", "also pass this environment variable to bash commands (repeatable; NAME or PREFIX*)", (value: string, previous: string[] = []) => [...previous, value])
    .option("--allow-hard-links", "let the file tools read files that have more than one hard link")
    .option("--checkpoints", "record the files under --cwd in the log after each tool call that changes them, so checkout --files and fork --files can put them back (on by itself for a session that recorded them before; docs/workspace.md)");
}

/**
 * The ExecutionEnv options for the flags.
 *
 * @throws CliError for an unknown `--sandbox` mode, or `--allow-network` without bubblewrap.
 * @example
 * ```ts
 * toolEnvOptions("/work/project", { sandbox: "bubblewrap", allowNetwork: true });
 * ```
 */
export function toolEnvOptions(root: string, flags: ToolFlags): ExecutionEnvOptions {
  const mode = flags.sandbox ?? "none";
  if (mode !== "none" && mode !== "bubblewrap") throw new CliError(`--sandbox "${mode}" is unknown; use none or bubblewrap.`);
  if (flags.allowNetwork && mode !== "bubblewrap") throw new CliError("--allow-network needs --sandbox bubblewrap (without a sandbox, commands already have the network).");
  return {
    root,
    ...(flags.env && flags.env.length > 0 ? { envAllowlist: [...DEFAULT_ENV_ALLOWLIST, ...flags.env] } : {}),
    ...(flags.allowHardLinks ? { allowHardLinks: true } : {}),
    ...(mode === "bubblewrap" ? { sandbox: { mode: "bubblewrap" as const, allowNetwork: flags.allowNetwork === true } } : {}),
  };
}
