/**
 * Runs the real `arbor` binary as a child process for end-to-end CLI tests.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** The CLI from sources (tests run against `src/`, not the build). */
export const arborBin = join(repoRoot, "scripts/arbor-dev.ts");
/** tsx's loader by absolute URL, so the CLI can run from any folder (not only the checkout). */
const tsxLoader = pathToFileURL(join(repoRoot, "node_modules/tsx/dist/loader.mjs")).href;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  /** Leave stdin open for the caller (via onSpawn) instead of ending it. */
  keepStdinOpen?: boolean;
  /** A command that runs the CLI, e.g. `["bwrap", "--ro-bind", "/", "/", ...]` (default: none). */
  wrapper?: string[];
  /** Run the CLI on a pseudo-terminal (util-linux `script`), so that stdin and stdout are TTYs; its output then includes the echoed input. */
  terminal?: boolean;
  /** Called once with the child, e.g. to send signals. */
  onSpawn?: (child: import("node:child_process").ChildProcess) => void;
}

/** Runs `arbor ...args`; resolves when the process exits. */
export function runArbor(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const command = [process.execPath, "--import", tsxLoader, arborBin, ...args];
    const quoted = command.map((part) => `'${part.replace(/'/g, "'\\''")}'`).join(" ");
    const [file, ...rest] = [...(options.wrapper ?? []), ...(options.terminal ? ["/usr/bin/script", "-qec", quoted, "/dev/null"] : command)];
    const child = spawn(file, rest, {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, ...options.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
    if (options.input !== undefined) child.stdin.end(options.input);
    else if (!options.keepStdinOpen) child.stdin.end();
    options.onSpawn?.(child);
  });
}

/** A fresh temp directory. */
export function tempDir(prefix = "arbor-cli-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
/** Starts `arbor serve` in a child process and resolves `ready` with its URL once it printed it. */
export function serveArbor(args: string[], env: NodeJS.ProcessEnv): { ready: Promise<string>; exited: Promise<CliResult>; child: () => ChildProcess } {
  return startArbor(["serve", ...args], env, /arbor serve: (http:\/\/\S+)/, 1);
}

/** Starts `arbor ...args` in a child process; `ready` resolves with group `group` of `readyLine` once its stderr matches it. */
export function startArbor(args: string[], env: NodeJS.ProcessEnv, readyLine: RegExp, group = 0): { ready: Promise<string>; exited: Promise<CliResult>; child: () => ChildProcess } {
  let child: ChildProcess | undefined;
  let resolveReady!: (text: string) => void;
  const ready = new Promise<string>((resolve) => (resolveReady = resolve));
  let seen = "";
  const exited = runArbor(args, {
    env,
    keepStdinOpen: true,
    onSpawn: (spawned) => {
      child = spawned;
      spawned.stderr!.on("data", (chunk: Buffer) => {
        seen += chunk.toString("utf8");
        const match = readyLine.exec(seen);
        if (match) resolveReady(match[group]);
      });
    },
  });
  return { ready, exited, child: () => child! };
}

