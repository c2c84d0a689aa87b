/**
 * Test helpers: the real @modelcontextprotocol/server-everything, over stdio
 * and Streamable HTTP on a loopback port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ToolExecuteContext, ToolResult } from "../../src/core/tools.ts";
import type { McpStdioServerConfig } from "../../src/adapters/mcp/index.ts";
import { freePort } from "../free-port.ts";

/** Entry point of the installed server-everything (its package.json `bin`). */
export const EVERYTHING_ENTRY = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

/** A stdio config that runs server-everything with this Node. */
export function everythingStdio(name = "everything", extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
  return { name, transport: "stdio", command: process.execPath, args: [EVERYTHING_ENTRY, "stdio"], ...extra };
}

/** A tool context with a fresh signal, recording updates. */
export function toolContext(signal: AbortSignal = new AbortController().signal): ToolExecuteContext & { updates: ToolResult[] } {
  const updates: ToolResult[] = [];
  return { toolCallId: "call-1", idempotencyKey: "call-1", signal, onUpdate: (partial) => updates.push(partial), context: undefined, updates };
}

/** Starts server-everything's Streamable HTTP transport; resolves once it listens. */
export async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_ENTRY, "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise<void>((ready, fail) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`listening on port ${port}`)) ready();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => fail(new Error(`server-everything exited with ${String(code)} before listening: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
