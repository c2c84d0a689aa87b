/**
 * A loopback OpenAI-compatible server that plays a scripted coding session, so the
 * main job can be tried without a model or a key:
 *
 *   npm run demo-server            # prints the base URL and a command to try
 *
 * It answers from what it is asked, so any number of runs, `--continue`, Ctrl-C
 * and `checkout --summarize` work: a request without tools (a summary) gets a
 * summary; otherwise the number of tool results since the last user message picks
 * the step: write a file, run bash on it, edit it, read it back, then answer.
 * Binds 127.0.0.1 only; serves until Ctrl-C.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOpenAIServer, textResponse, toolCallResponse, type RecordedRequest, type ScriptedResponse } from "../src/testing/index.ts";

type Item = { role?: string; type?: string };

/** Tool results after the last user message, in either wire format. */
function toolResultsThisTurn(body: { messages?: Item[]; input?: Item[] }): number {
  const items = body.messages ?? body.input ?? [];
  let count = 0;
  for (const item of items) {
    if (item.role === "user") count = 0;
    else if (item.role === "tool" || item.type === "function_call_output") count += 1;
  }
  return count;
}

function respond(request: RecordedRequest): ScriptedResponse {
  const body = (request.body ?? {}) as { tools?: unknown[]; messages?: Item[]; input?: Item[] };
  const timing = { delayMs: 15 };
  if (!body.tools || body.tools.length === 0) {
    return textResponse("## Goal\nTry Arbor's demo.\n\n## Progress\n- Wrote, ran, edited and read greeting.txt.\n\n## Next Steps\n1. Try a real model.", timing);
  }
  const step = toolResultsThisTurn(body);
  const id = `call_${Date.now().toString(36)}_${step}`;
  switch (step) {
    case 0:
      return toolCallResponse([{ id, name: "write", arguments: { path: "greeting.txt", content: "Hello from Arbor!\n" } }], { text: "I'll write a greeting file first.", ...timing });
    case 1:
      return toolCallResponse([{ id, name: "bash", arguments: { command: "cat greeting.txt && wc -c greeting.txt" } }], timing);
    case 2:
      return toolCallResponse([{ id, name: "edit", arguments: { path: "greeting.txt", edits: [{ oldText: "Hello", newText: "Hi" }] } }], timing);
    case 3:
      return toolCallResponse([{ id, name: "read", arguments: { path: "greeting.txt" } }], timing);
    default:
      return textResponse('Done: I wrote greeting.txt, ran it through bash, changed "Hello" to "Hi", and read it back.', timing);
  }
}

const server = await startOpenAIServer({ respond });
const workdir = mkdtempSync(join(tmpdir(), "arbor-demo-"));
console.log(`demo OpenAI-compatible server: ${server.url}`);
console.log("try, from the Arbor checkout:");
console.log(`  OPENAI_API_KEY=demo npx arbor run --base-url ${server.url} --model openai:demo --cwd ${workdir} "make a greeting"`);
console.log("(the agent's files go to that --cwd; stop the server with Ctrl-C)");
