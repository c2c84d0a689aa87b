// Testing an agent three ways (docs/testing.md): a scripted test, a model-based test that finds a
// seeded bug in a hook, and a replay of a logged run after a tool's output changed. The agent has
// one custom tool, `read`, and a `toolCall` hook that blocks paths outside the workspace. Nothing
// here calls a provider: `node testing-kit.mjs` runs the same with or without ARBOR_EXAMPLE_SELF_TEST.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness, createSqliteEventLog, defineTool } from "arbor-agent";
import { AgentTestPathError, createAgentTestModel, formatReplayReport, replayRun, scriptedModel } from "arbor-agent/testing";
import { z } from "zod";

const root = mkdtempSync(join(tmpdir(), "arbor-example-"));
writeFileSync(join(root, "notes.txt"), "alpha\n");
let suffix = "";
const read = defineTool({
  name: "read",
  description: "Reads a file of the workspace",
  parameters: z.object({ path: z.string() }),
  async execute({ path }) {
    return { content: [{ type: "text", text: readFileSync(join(root, path), "utf8") + suffix }] };
  },
});
const guard = ({ input }) => (String(input.path).includes("..") ? { block: true, reason: "outside the workspace" } : undefined);

// 1. A scripted test: the hook blocks the call, the model gets an error result.
const db = join(root, "arbor.db");
{
  const model = scriptedModel([{ toolCalls: [{ id: "c1", name: "read", arguments: { path: "../etc/passwd" } }] }, { text: "I may not read that." }]);
  const harness = await createHarness({ eventLogPath: db, cwd: root, models: { main: model }, tools: [read], hooks: { toolCall: guard } });
  const outcome = await harness.prompt("show me /etc/passwd");
  const result = outcome.messages.find((message) => message.role === "toolResult");
  if (outcome.status !== "done" || !result?.isError) throw new Error(`scripted test: ${outcome.status}, ${JSON.stringify(result)}`);
  console.log("scripted: the hook blocked the call");
  await harness.close();
}

// 2. A model-based test: the hook throws on the second call of a tool (a seeded bug). The shortest
// paths (55 with this one tool) find it on 1; every simple path (getSimplePaths, 61) on 1, see docs/testing.md.
const seeded = () => {
  const calls = new Map();
  return {
    toolCall: (event) => {
      calls.set(event.toolName, (calls.get(event.toolName) ?? 0) + 1);
      if (calls.get(event.toolName) === 2) throw new Error("rate table not loaded");
      return guard(event);
    },
  };
};
const testModel = createAgentTestModel({ tools: [read], hooks: seeded, arguments: { read: { path: "notes.txt" } } });
const paths = testModel.getShortestPaths();
let failed = 0;
for (const path of paths) {
  try {
    await path.test();
  } catch (error) {
    if (!(error instanceof AgentTestPathError)) throw error;
    if (failed === 0) console.log(error.message.split("\n").slice(0, 3).join("\n"));
    failed++;
  }
}
console.log(`model-based: ${paths.length} paths, ${failed} found the seeded bug`);
if (failed === 0) throw new Error("the seeded bug was not found");

// 3. Replay: log a run that reads a file, then replay it after the tool's output changed.
{
  const model = scriptedModel([{ toolCalls: [{ id: "c2", name: "read", arguments: { path: "notes.txt" } }] }, { text: "It says alpha." }]);
  const harness = await createHarness({ eventLogPath: db, cwd: root, models: { main: model }, tools: [read], hooks: { toolCall: guard } });
  await harness.prompt("what do my notes say?");
  const sessionId = harness.session.id;
  await harness.close();
  const log = createSqliteEventLog({ path: db, readOnly: true });
  const same = await replayRun(log, sessionId, { tools: [read], hooks: { toolCall: guard } });
  console.log(`replay: ${formatReplayReport(same)}`);
  suffix = " (v2)";
  const changed = await replayRun(log, sessionId, { tools: [read], hooks: { toolCall: guard } });
  console.log(`replay after the change: ${formatReplayReport(changed)}`);
  if (!same.identical || changed.identical) throw new Error("replay did not report identical, then a divergence");
}
console.log("example ok");
