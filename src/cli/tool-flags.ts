/**
 * The CLI flags that confine the coding tools (`--sandbox none|bubblewrap`, `--allow-network`, `--env NAME`, `--allow-hard-links`) and their
 * ExecutionEnv options; a bad mode, or `--allow-network` without bubblewrap, is a usage error.
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
  /** `--mcp <name>=<command or URL>` (repeatable; `mcp-config.ts`). */
  mcp?: string[];
}

/** Adds the tool-confinement flags to a command. */
export function withToolFlags(command: Command): Command {
  return command
    .option("--sandbox <mode>", "confine bash commands: none or bubblewrap (default: none, commands run unconfined)")
    .option("--allow-network", "let bash commands use the network under --sandbox bubblewrap")
    .option("--env <name>", "also pass this environment variable to bash commands (repeatable; NAME or PREFIX*)", (value: string, previous: string[] = []) => [...previous, value])
    .option("--allow-hard-links", "let the file tools read files that have more than one hard link")
    .option("--mcp <name=command|url>", "use the tools of this MCP server: name=https://host/mcp (Streamable HTTP) or name=\"command args\" (stdio); repeatable; adds to and overrides .arbor/mcp.json (docs/mcp.md)", (value: string, previous: string[] = []) => [...previous, value])
    .option("--checkpoints", "record the files under --cwd in the log after each tool call that changes them, so checkout --files and fork --files can put them back (on by itself for a session that recorded them before; docs/workspace.md)");
}

/**
 * The ExecutionEnv options for the flags.
 * @throws CliError for an unknown `--sandbox` mode, or `--allow-network` without bubblewrap.
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
