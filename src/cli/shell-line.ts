/**
 * `!cmd` and `!!cmd` in the chat (pi): runs the command with `/bin/sh -c` in the session's folder, unconfined (the user typed it), for at most
 * `timeoutMs`; output is interleaved and cut to its last `SHELL_OUTPUT_CHARS`. `!cmd` also puts pi's `contextText` in the next model call.
 */
import { spawn } from "node:child_process";

/** The most output kept (characters, the end kept). */
export const SHELL_OUTPUT_CHARS = 20_000;

/** What a `!cmd` entry keeps in its `details` (so a UI can draw it again as it was shown). */
export interface ShellDetails {
  command: string;
  output: string;
  exitCode: number | null;
}

/** What a `!` command did. */
export interface ShellLineResult {
  output: string;
  exitCode: number | null;
  truncated: boolean;
  /** The user message text for the context (`!cmd`). */
  contextText: string;
}

/** Runs `command` (see the module contract). */
export function runShellLine(command: string, cwd: string, timeoutMs = 120_000): Promise<ShellLineResult> {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const take = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.length > 2 * SHELL_OUTPUT_CHARS) output = output.slice(-SHELL_OUTPUT_CHARS);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const finish = (exitCode: number | null) => {
      clearTimeout(timer);
      const truncated = output.length > SHELL_OUTPUT_CHARS;
      const shown = truncated ? output.slice(-SHELL_OUTPUT_CHARS) : output;
      const body = shown.trim() === "" ? "(no output)" : `\`\`\`\n${shown.replace(/\n$/, "")}\n\`\`\``;
      const notes = [truncated ? `(output cut to its last ${SHELL_OUTPUT_CHARS} characters)` : "", exitCode !== 0 ? `Command exited with code ${exitCode ?? "unknown (killed)"}` : ""].filter(Boolean);
      resolve({ output: shown, exitCode, truncated, contextText: [`Ran \`${command}\``, body, ...notes].join("\n") });
    };
    child.on("error", (error) => {
      output += String(error.message);
      finish(null);
    });
    child.on("close", (code) => finish(code));
  });
}
