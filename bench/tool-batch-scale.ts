/**
 * How the time of one response's tool batch grows with its size (issue 19 item 8): N calls of a
 * trivial tool in one model response, the cap raised to N, in-memory session. Prints ms per N;
 * linear growth means the CPU ms per call stays flat (wall time depends on the machine's load). Run: `node --import tsx bench/tool-batch-scale.ts 250 500 1000`.
 */
import { z } from "zod";
import type { AssistantMessage } from "../src/core/messages.ts";
import type { ModelClient } from "../src/core/model-stream.ts";
import { defineTool } from "../src/core/tools.ts";
import { createAgent } from "../src/machines/agent.ts";
import { createMemoryEventLog } from "../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";

const tool = defineTool({
  name: "t",
  description: "echo",
  parameters: z.object({ n: z.number() }),
  async execute({ n }) {
    return { content: [{ type: "text", text: `ran ${n}` }] };
  },
});

function bulkModel(count: number): ModelClient {
  let replies = 0;
  return {
    provider: "fake",
    modelId: "fake-model",
    api: "fake-api",
    async *stream() {
      const first = replies++ === 0;
      const message: AssistantMessage = {
        role: "assistant",
        content: first ? Array.from({ length: count }, (_, n) => ({ type: "toolCall" as const, id: `c${n}`, name: "t", arguments: { n } })) : [{ type: "text", text: "ok" }],
        api: "fake-api",
        provider: "fake",
        model: "fake-model",
        usage: { input: 1, output: 1, cacheRead: null, cacheWrite: null, totalTokens: 2 },
        stopReason: first ? "toolUse" : "stop",
        timestamp: Date.now(),
      };
      yield { type: "start", partial: { ...message, content: [] } };
      yield { type: "done", message };
    },
  };
}

for (const count of process.argv.slice(2).map(Number)) {
  const session = await createSessionRepository({ log: createMemoryEventLog() }).create({ cwd: "/tmp" });
  const started = performance.now();
  const cpu = process.cpuUsage();
  const outcome = await createAgent({ session, model: bulkModel(count), tools: [tool], maxToolCallsPerResponse: count }).prompt("go");
  const ms = performance.now() - started;
  const cpuMs = process.cpuUsage(cpu).user / 1000;
  console.log(`${count} calls: ${ms.toFixed(0)} ms wall, ${cpuMs.toFixed(0)} ms CPU (${(cpuMs / count).toFixed(2)} ms CPU per call), ${outcome.status}`);
}
