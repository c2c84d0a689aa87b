/** A spawned `node --import tsx` child whose stdout is read line by line (tests only). */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** A running child. */
export interface LineChild {
  process: ChildProcessWithoutNullStreams;
  /** Resolves with the next stdout line; rejects if the child exits first. */
  nextLine(): Promise<string>;
  /** Resolves when the child exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** Spawns `node --import tsx <script> ...args` from the repository root. */
export function spawnTsx(script: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): LineChild {
  const child = spawn(process.execPath, ["--import", "tsx", resolve(ROOT, script), ...args], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
  let errors = "";
  child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else queue.push(line);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on("exit", (code, signal) => done({ code, signal })),
  );
  return {
    process: child,
    nextLine: () => {
      const line = queue.shift();
      if (line !== undefined) return Promise.resolve(line);
      return new Promise((done, fail) => {
        waiting.push(done);
        void exited.then(({ code, signal }) => fail(new Error(`child exited (${code ?? signal}) before printing a line: ${errors}`)));
      });
    },
    exited,
    stderr: () => errors,
  };
}
