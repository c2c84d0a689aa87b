/**
 * Runs the real `arbor` CLI on a real pseudo-terminal (node-pty) and keeps what it draws in a
 * headless terminal emulator (@xterm/headless), so tests assert the screen a person would see.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pty from "node-pty";
import xterm from "@xterm/headless";
import { afterEach, beforeEach } from "vitest";
import { startOpenAIServer, type OpenAIServer } from "../../src/testing/index.ts";
import { arborBin, repoRoot } from "./cli-helpers.ts";

const tsxLoader = pathToFileURL(join(repoRoot, "node_modules/tsx/dist/loader.mjs")).href;

/** A CLI process on a pseudo-terminal and the emulator that renders its output. */
export interface PtyArbor {
  /** Types `text` (use `\r` for Enter). */
  write(text: string): void;
  /** Pastes `text` as a terminal does with bracketed paste on (the CLI asks for it). */
  paste(text: string): void;
  resize(cols: number, rows: number): void;
  /** Every line of the emulator's buffer (scrollback included), right-trimmed. */
  lines(): string[];
  /** The buffer as one string. */
  screen(): string;
  /** Everything the process wrote, raw. */
  raw(): string;
  /** Resolves once the rendered buffer matches `pattern` (rejects after `timeoutMs` with the screen). */
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number>;
  kill(): void;
}

export interface PtyOptions {
  cols?: number;
  rows?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Wraps the command in `sh -c 'stty …; exec …'`, e.g. `stty rows 0 cols 0` for a zero-size terminal. */
  stty?: string;
}

/**
 * The environment of a person's terminal: this process's, less the CI runner's `CI` marker (with
 * it set, ora and is-interactive treat even a real terminal as non-interactive), with `extra` on top.
 */
function terminalEnv(extra: NodeJS.ProcessEnv | undefined): Record<string, string> {
  const { CI: _ci, ...rest } = process.env;
  return { ...rest, TERM: "xterm-256color", ...extra } as Record<string, string>;
}

/** Starts `arbor ...args` on a pseudo-terminal. */
export function spawnArborPty(args: string[], options: PtyOptions = {}): PtyArbor {
  const cols = options.cols ?? 100;
  const rows = options.rows ?? 30;
  const term = new xterm.Terminal({ cols: Math.max(cols, 20), rows: Math.max(rows, 5), scrollback: 5000, allowProposedApi: true });
  const command = [process.execPath, "--import", tsxLoader, arborBin, ...args];
  const quoted = command.map((part) => `'${part.replace(/'/g, "'\\''")}'`).join(" ");
  const [file, argv] = options.stty ? ["/bin/sh", ["-c", `stty ${options.stty}; exec ${quoted}`]] : [command[0], command.slice(1)];
  const child = pty.spawn(file, argv, {
    // node-pty sets TERM to `name`.
    name: options.env?.TERM ?? "xterm-256color",
    cols: Math.max(cols, 1),
    rows: Math.max(rows, 1),
    cwd: options.cwd ?? repoRoot,
    env: terminalEnv(options.env),
  });
  let raw = "";
  let pending = Promise.resolve();
  child.onData((data) => {
    raw += data;
    pending = pending.then(() => new Promise<void>((resolve) => term.write(data, resolve)));
  });
  const exited = new Promise<number>((resolve) => child.onExit(({ exitCode }) => resolve(exitCode)));
  const lines = () => {
    const buffer = term.buffer.active;
    const out: string[] = [];
    for (let index = 0; index < buffer.length; index++) out.push(buffer.getLine(index)?.translateToString(true) ?? "");
    while (out.length > 0 && out.at(-1) === "") out.pop();
    return out;
  };
  const screen = () => lines().join("\n");
  let exitedFlag = false;
  void exited.then(() => (exitedFlag = true));
  return {
    write: (text) => {
      if (!exitedFlag) child.write(text);
    },
    paste: (text) => {
      if (!exitedFlag) child.write(`\x1b[200~${text}\x1b[201~`);
    },
    resize: (newCols, newRows) => {
      if (newCols > 0 && newRows > 0) child.resize(newCols, newRows);
      else {
        // node-pty refuses a zero size; the kernel does not: set it on the pts and tell the process.
        execFileSync("stty", ["-F", (child as unknown as { _pty: string })._pty, "rows", String(newRows), "cols", String(newCols)]);
        process.kill(child.pid, "SIGWINCH");
      }
      term.resize(Math.max(newCols, 20), Math.max(newRows, 5));
    },
    lines,
    screen,
    raw: () => raw,
    async waitFor(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      const test = (text: string) => (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text));
      for (;;) {
        await pending;
        const text = screen();
        if (test(text)) return text;
        if (Date.now() > deadline) throw new Error(`screen never showed ${String(pattern)}; screen:\n${text}`);
        if (exitedFlag && test(screen()) === false) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          await pending;
          if (test(screen())) return screen();
          throw new Error(`process exited before the screen showed ${String(pattern)}; screen:\n${screen()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    exited: exited.then(async (code) => {
      await pending;
      return code;
    }),
    kill: () => {
      if (!exitedFlag) child.kill("SIGKILL");
    },
  };
}

/** A loopback OpenAI server started before each test, and the arbor under test (`running`), killed after it with the server closed. */
export function ptyChatPerTest(): { server: OpenAIServer; running: PtyArbor | undefined } {
  const each = {} as { server: OpenAIServer; running: PtyArbor | undefined };
  beforeEach(async () => {
    each.server = await startOpenAIServer();
  });
  afterEach(async () => {
    each.running?.kill();
    each.running = undefined;
    await each.server.close();
  });
  return each;
}
