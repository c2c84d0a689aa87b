/**
 * The `bash` tool: run a shell command in the env's cwd (pi's parameters and texts; timeout in seconds). Output is merged, streamed and accounted
 * by `bash-output.ts`; abort, timeout and the end of the call SIGKILL the whole process group, so no background child outlives it; the pgid is
 * reported through `onProcess` for crash recovery; the command is confined as `env.sandbox` says.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { z } from "zod";
import { processStartOf } from "../../core/process-group.ts";
import { defineTool, type AgentTool, type ToolResult } from "../../core/tools.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { BashOutput, BASH_MAX_LINE_CHARS, type BashOutputSnapshot } from "./bash-output.ts";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, type TruncationResult } from "./truncate.ts";
import { ignored } from "../../core/ignored.ts";

/**
 * Parameters of the bash tool (pi's).
 * @example
 * const input: z.infer<typeof bashParameters> = { command: "ls -la", timeout: 10 };
 */
export const bashParameters = z.object({
  command: z.string().describe("Bash command to execute"),
  timeout: z.number().optional().describe("Timeout in seconds (optional, no default timeout)"),
});

/** Arguments of the bash tool. */
export type BashToolInput = z.infer<typeof bashParameters>;

/** Details of a bash result when output was cut (pi's fields plus `clippedLines`). */
export interface BashToolDetails {
  truncation?: TruncationResult;
  fullOutputPath?: string;
  /** Lines clipped to {@link BASH_MAX_LINE_CHARS} characters (ours). */
  clippedLines?: number;
}

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /** Shell binary. Default `/bin/bash` if it exists, else `sh`. */
  shellPath?: string;
  /** How long to wait for stdout/stderr EOF after the shell exits, in ms. Default 2000. */
  drainTimeoutMs?: number;
  /** Minimum gap between partial updates, in ms. Default 100. */
  updateIntervalMs?: number;
  /** Longest visible line in characters. Default {@link BASH_MAX_LINE_CHARS}. */
  maxLineChars?: number;
}

type Ending = { kind: "exit"; code: number | null; signal: NodeJS.Signals | null } | { kind: "error"; error: Error };

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch (error) {
      ignored("the process is already gone", error);
    }
  }
}

/** SIGKILLs what is left of the call's process group after its shell exited (never the bare pid: it may be reused). */
function endGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch (error) {
    ignored("the process group is already empty", error);
  }
}

function formatOutput(snapshot: BashOutputSnapshot, emptyText: string): { text: string; details?: BashToolDetails } {
  const { truncation, clippedLines, fullOutputPath } = snapshot;
  let text = snapshot.content || emptyText;
  if (!truncation.truncated && clippedLines === 0) return { text };
  const where = fullOutputPath ? `Full output: ${fullOutputPath}` : "Full output could not be saved";
  const clipped = clippedLines > 0 ? `${clippedLines} long line(s) clipped to ${BASH_MAX_LINE_CHARS} chars. ` : "";
  const start = truncation.totalLines - truncation.outputLines + 1;
  const end = truncation.totalLines;
  if (!truncation.truncated) text += `\n\n[${clipped}${where}]`;
  else if (truncation.lastLinePartial) {
    text += `\n\n[Showing last ${formatSize(truncation.outputBytes)} of line ${end} (line is ${formatSize(snapshot.lastLineBytes)}). ${clipped}${where}]`;
  } else if (truncation.truncatedBy === "lines") {
    text += `\n\n[Showing lines ${start}-${end} of ${truncation.totalLines}. ${clipped}${where}]`;
  } else {
    text += `\n\n[Showing lines ${start}-${end} of ${truncation.totalLines} (${formatSize(DEFAULT_MAX_BYTES)} limit). ${clipped}${where}]`;
  }
  const details: BashToolDetails = {};
  if (truncation.truncated) details.truncation = truncation;
  if (fullOutputPath) details.fullOutputPath = fullOutputPath;
  if (clippedLines > 0) details.clippedLines = clippedLines;
  return { text, details };
}

const withStatus = (text: string, status: string) => `${text ? `${text}\n\n` : ""}${status}`;

/**
 * Creates the `bash` tool bound to an execution env. See the module contract.
 * @example
 * const tool = createBashTool(env, { drainTimeoutMs: 1000 });
 */
export function createBashTool(env: ExecutionEnv, options: BashToolOptions = {}): AgentTool<BashToolInput, BashToolDetails | undefined> {
  const shell = options.shellPath ?? (existsSync("/bin/bash") ? "/bin/bash" : "sh");
  const drainTimeoutMs = options.drainTimeoutMs ?? 2000;
  const updateIntervalMs = options.updateIntervalMs ?? 100;
  return defineTool({
    name: "bash",
    replay: "unsafe",
    label: "bash",
    description: `Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.`,
    parameters: bashParameters,
    async execute({ command, timeout }, { signal, onUpdate, onProcess, secrets }): Promise<ToolResult<BashToolDetails | undefined>> {
      if (signal.aborted) throw new Error("Command aborted");
      if (!existsSync(env.cwd)) throw new Error(`Working directory does not exist: ${env.cwd}\nCannot execute bash commands.`);
      // The harness's secrets join the env's, for the spill file.
      for (const secret of secrets ?? []) env.secrets.add(secret);
      const output = new BashOutput({
        spillDir: env.ensureSpillDir,
        maxLineChars: options.maxLineChars ?? BASH_MAX_LINE_CHARS,
        redactor: env.secrets,
        maxSpillBytes: env.spillMaxBytes,
      });
      let lastUpdateAt = Number.NEGATIVE_INFINITY;
      let updateTimer: NodeJS.Timeout | undefined;
      const emitUpdate = () => {
        updateTimer = undefined;
        lastUpdateAt = performance.now();
        const { text, details } = formatOutput(output.snapshot(), "");
        onUpdate({ content: [{ type: "text", text }], details });
      };
      const scheduleUpdate = () => {
        if (updateTimer) return;
        const wait = lastUpdateAt + updateIntervalMs - performance.now();
        if (wait <= 0) emitUpdate();
        else updateTimer = setTimeout(emitUpdate, wait);
      };

      const confined = env.sandbox.wrap({ shell, command, root: env.root, cwd: env.cwd, env: env.childEnv() });
      const child = spawn(confined.file, confined.args, {
        cwd: confined.cwd,
        detached: true,
        env: confined.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      // Logged at once (tool.updated), so crash recovery can end the group if it outlives us.
      if (child.pid !== undefined) onProcess?.({ pgid: child.pid, ...(processStartOf(child.pid) ? { processStart: processStartOf(child.pid) } : {}) });
      let timedOut = false;
      let aborted = false;
      const onAbort = () => {
        aborted = true;
        killGroup(child.pid);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      const timeoutHandle =
        timeout !== undefined && timeout > 0
          ? setTimeout(() => {
              timedOut = true;
              killGroup(child.pid);
            }, timeout * 1000)
          : undefined;
      const onData = (chunk: Buffer) => {
        output.append(chunk);
        scheduleUpdate();
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);

      const ending = await new Promise<Ending>((resolve) => {
        let exit: Ending | undefined;
        let openStreams = 2;
        let drainTimer: NodeJS.Timeout | undefined;
        const settle = () => {
          if (drainTimer) clearTimeout(drainTimer);
          child.stdout.destroy();
          child.stderr.destroy();
          resolve(exit ?? { kind: "exit", code: null, signal: null });
        };
        const onEnd = () => {
          openStreams -= 1;
          if (openStreams === 0 && exit) settle();
        };
        child.stdout.once("end", onEnd);
        child.stderr.once("end", onEnd);
        child.once("error", (error) => {
          exit = { kind: "error", error };
          settle();
        });
        child.once("exit", (code, exitSignal) => {
          exit = { kind: "exit", code, signal: exitSignal };
          if (openStreams === 0) settle();
          else drainTimer = setTimeout(settle, drainTimeoutMs);
        });
      });

      signal.removeEventListener("abort", onAbort);
      // The call owns its whole process group: background children end with it (ours).
      endGroup(child.pid);
      confined.cleanup?.();
      if (timeoutHandle) clearTimeout(timeoutHandle);
      if (updateTimer) clearTimeout(updateTimer);
      updateTimer = undefined;
      const snapshot = await output.finish();
      // Housekeeping after a spill: expired files and the oldest over the size cap go (never throws).
      if (snapshot.fullOutputPath) await env.sweepSpillFiles();
      if (ending.kind === "error") throw new Error(`Failed to run ${shell}: ${ending.error.message}`);
      if (aborted) throw new Error(withStatus(formatOutput(snapshot, "").text, "Command aborted"));
      if (timedOut) throw new Error(withStatus(formatOutput(snapshot, "").text, `Command timed out after ${timeout} seconds`));
      const { text, details } = formatOutput(snapshot, "(no output)");
      if (ending.code !== 0 && ending.code !== null) throw new Error(withStatus(text, `Command exited with code ${ending.code}`));
      if (ending.code === null && ending.signal) throw new Error(withStatus(formatOutput(snapshot, "").text, `Command terminated by ${ending.signal}`));
      return { content: [{ type: "text", text }], details };
    },
  });
}
