/**
 * Recorded provider bodies as scripted responses: `.chunks.txt` (one JSON chunk per line, framed as SSE), `.sse`/`.bin` (raw, byte for byte),
 * `.json` (whole, 200 or 400 for an error body). A missing file throws the `fs` error.
 */
import { readFileSync } from "node:fs";
import type { ScriptedResponse, StreamTiming } from "./openai-server.ts";

function sseFramesOfChunksFile(text: string): string[] {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  return [...lines.map((line) => `data: ${line}\n\n`), "data: [DONE]\n\n"];
}

function sseFramesOfRawBody(text: string): string[] {
  return text.split(/(?<=\n\n)/).filter((piece) => piece.length > 0);
}

/**
 * A recorded fixture as one response: `.chunks.txt` (one JSON chunk per line → SSE + `[DONE]`), `.sse` / `.bin` (raw SSE replayed as recorded),
 * `.json` (a body; status 200, or 400 when it is an `{"error":…}` body, unless `options.status`). Throws when the file cannot be read.
 * @example
 * server.script(fixtureResponse("/path/to/openai-text.chunks.txt"));
 */
export function fixtureResponse(path: string, options: { status?: number; headers?: Record<string, string> } & StreamTiming = {}): ScriptedResponse {
  const text = readFileSync(path, "utf8");
  if (path.endsWith(".json")) {
    const isError = /^\s*\{\s*"error"/.test(text);
    return { kind: "body", status: options.status ?? (isError ? 400 : 200), body: text, headers: { "content-type": "application/json", ...options.headers } };
  }
  const frames = path.endsWith(".chunks.txt") ? sseFramesOfChunksFile(text) : sseFramesOfRawBody(text);
  return { kind: "frames", frames, status: options.status ?? 200, headers: { "content-type": "text/event-stream", ...options.headers }, ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}) };
}

/**
 * A `.chunks.txt` Responses fixture holding several responses back to back, split at
 * each `response.created` into one response per turn (each ends with `[DONE]`).
 * @example
 * server.script(fixtureResponses("/path/to/openai-reasoning-encrypted-content.1.chunks.txt"));
 */
export function fixtureResponses(path: string, timing: StreamTiming = {}): ScriptedResponse[] {
  const lines = readFileSync(path, "utf8").split(/\r?\n/).filter((line) => line.trim() !== "");
  const turns: string[][] = [];
  for (const line of lines) {
    if (turns.length === 0 || /"type"\s*:\s*"response\.created"/.test(line)) turns.push([]);
    turns[turns.length - 1].push(line);
  }
  return turns.map((turn) => ({ kind: "frames", frames: sseFramesOfChunksFile(turn.join("\n")), status: 200, headers: { "content-type": "text/event-stream" }, ...timing }));
}
