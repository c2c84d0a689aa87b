/**
 * Test helpers for the built-in tools: temp roots, running a tool the way the loop does
 * (prepareArguments → validate → execute), and pi's own tool definitions for differential tests.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { AgentTool, ToolResult } from "../../src/core/tools.ts";

const roots: string[] = [];

/** A fresh temp directory (realpath), removed after the test. */
export function tempDir(prefix = "arbor-tools-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  roots.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs a tool as the loop does; returns the result or throws the tool's error. */
export async function runTool<Args, Details>(
  tool: AgentTool<Args, Details>,
  rawArgs: unknown,
  options: { signal?: AbortSignal; onUpdate?: (partial: ToolResult) => void } = {},
): Promise<ToolResult<Details>> {
  const prepared = tool.prepareArguments ? tool.prepareArguments(rawArgs) : rawArgs;
  const validation = tool.validate(prepared);
  if (!validation.ok) throw new Error(validation.message);
  return tool.execute(validation.value, {
    toolCallId: "call-1",
    idempotencyKey: "call-1",
    signal: options.signal ?? new AbortController().signal,
    onUpdate: options.onUpdate ?? (() => undefined),
    context: undefined,
  });
}

/** Runs a tool and returns its outcome as text, with `error` set when it threw. */
export async function outcome(tool: AgentTool<any, any>, rawArgs: unknown, options?: Parameters<typeof runTool>[2]) {
  try {
    const result = await runTool(tool, rawArgs, options);
    return { error: false, text: textOf(result), result };
  } catch (error) {
    return { error: true, text: (error as Error).message, result: undefined, thrown: error };
  }
}

/** The concatenated text parts of a result. */
export function textOf(result: { content: { type: string; text?: string }[] }): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

interface PiToolDefinition {
  execute(toolCallId: string, params: unknown, signal?: AbortSignal, onUpdate?: unknown, ctx?: unknown): Promise<{ content: { type: string; text?: string }[]; details?: unknown }>;
}

/** Runs one of pi 0.73.1's tool definitions; returns text and error flag like {@link outcome}. */
export async function piOutcome(definition: PiToolDefinition, params: unknown, signal?: AbortSignal) {
  try {
    const result = await definition.execute("call-1", params, signal, undefined, undefined);
    return { error: false, text: textOf(result), result };
  } catch (error) {
    return { error: true, text: (error as Error).message, result: undefined };
  }
}
