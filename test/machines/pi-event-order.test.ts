/**
 * Differential test of the loop's event order against pi 0.73.1's real Agent
 * (`shared/oracle/pi-agent-events.mjs`, run in a child process with PI_ORACLE_DIR = the repo), scenario by
 * scenario. Our logged events are mapped to pi's names; `entry.appended`,
 * `message.delta` and `queue.changed` have no pi counterpart and are left out.
 * Abort differs on purpose (pi makes one more model call): see abort.test.ts.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../../src/machines/agent.ts";
import type { AgentOptions } from "../../src/machines/agent-types.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { sharedPath } from "../shared-dir.ts";
import { fakeModel, memorySession, sessionEvents, sleepTool, type FakeStep } from "./helpers.ts";

const ORACLE = sharedPath("oracle", "pi-agent-events.mjs");
/** pi 0.73.1 is installed in the repository's node_modules. */
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCENARIOS = ["parallel", "sequential", "steer", "followup", "block", "unknown-tool", "error"] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Brief {
  t: string;
  id?: string;
  role?: string;
  isError?: boolean;
  toolResults?: string[];
}

let pi: Record<string, Brief[]> = {};

async function runOracle(): Promise<Record<string, Brief[]>> {
  const { stdout } = await promisify(execFile)(process.execPath, [ORACLE, "all"], {
    env: { ...process.env, PI_ORACLE_DIR: REPO_ROOT },
    timeout: 60_000,
  });
  const sections: Record<string, Brief[]> = {};
  let current: Brief[] = [];
  for (const line of stdout.split("\n")) {
    if (line.startsWith("# ")) sections[line.slice(2).trim()] = current = [];
    else if (line.trim()) {
      const event = JSON.parse(line) as Brief & Record<string, unknown>;
      const brief: Brief = { t: event.t };
      if (event.id) brief.id = event.id;
      if (event.role) brief.role = event.role;
      if (event.t === "tool_execution_end") brief.isError = event.isError;
      if (event.t === "turn_end") brief.toolResults = event.toolResults;
      if (event.t === "turn_end" || event.t === "message_update") delete brief.role;
      current.push(brief);
    }
  }
  return sections;
}

/** Maps our logged events to pi's brief events. */
export function toPiBriefs(events: StoredEvent[]): Brief[] {
  const roles = new Map<string, string>();
  const entries = new Map<string, { role: string; toolCallId?: string }>();
  const briefs: Brief[] = [];
  for (const event of events) {
    const data = event.data as Record<string, any>;
    switch (event.type) {
      case "run.started":
        briefs.push({ t: "agent_start" });
        break;
      case "run.ended":
        briefs.push({ t: "agent_end" });
        break;
      case "turn.started":
        briefs.push({ t: "turn_start" });
        break;
      case "turn.ended":
        briefs.push({ t: "turn_end", toolResults: data.toolCallIds });
        break;
      case "entry.appended":
        if (data.entry.type === "message") entries.set(data.entry.id, { role: data.entry.message.role, toolCallId: data.entry.message.toolCallId });
        break;
      case "message.started":
        roles.set(data.messageId, data.role);
        briefs.push({ t: "message_start", role: data.role });
        break;
      case "message.ended": {
        const brief: Brief = { t: "message_end", role: data.role };
        const entry = data.entryId ? entries.get(data.entryId) : undefined;
        if (entry?.toolCallId) {
          brief.id = entry.toolCallId;
          // pi prints the toolResult id on message_start too: patch the matching start.
          for (let index = briefs.length - 1; index >= 0; index -= 1) {
            if (briefs[index].t === "message_start" && briefs[index].role === "toolResult" && !briefs[index].id) {
              briefs[index].id = entry.toolCallId;
              break;
            }
          }
        }
        briefs.push(brief);
        break;
      }
      case "tool.started":
        briefs.push({ t: "tool_execution_start", id: data.toolCallId });
        break;
      case "tool.updated":
        briefs.push({ t: "tool_execution_update", id: data.toolCallId });
        break;
      case "tool.ended":
        briefs.push({ t: "tool_execution_end", id: data.toolCallId, isError: data.isError });
        break;
    }
  }
  return briefs;
}

const twoCalls: FakeStep = {
  toolCalls: [
    { id: "A", name: "slow", arguments: { ms: 60 } },
    { id: "B", name: "fast", arguments: { ms: 10 } },
  ],
};

async function runOurs(scenario: Scenario): Promise<{ briefs: Brief[]; errorResults: string[] }> {
  const { log, session } = await memorySession();
  const tools = [sleepTool("slow"), sleepTool("fast")];
  const options: Partial<AgentOptions> = {};
  let steps: FakeStep[] = [twoCalls, { text: "done" }];
  if (scenario === "sequential") options.toolExecution = "sequential";
  if (scenario === "steer") steps = [twoCalls, { text: "after steer" }];
  if (scenario === "followup") steps = [{ text: "done" }, { text: "after followup" }];
  if (scenario === "block") options.hooks = { beforeToolCall: ({ toolCallId }) => (toolCallId === "A" ? { block: true, reason: "nope" } : undefined) };
  if (scenario === "unknown-tool") steps = [{ toolCalls: [{ id: "X", name: "missing", arguments: { ms: 1 } }] }, { text: "done" }];
  if (scenario === "error") steps = [{ error: "boom 503", info: { retryable: false } }];
  const agent = createAgent({ session, model: fakeModel(steps), tools, ...options });
  if (scenario === "followup") agent.followUp("FOLLOW");
  if (scenario === "steer") {
    const subscription = agent.runEvents$.subscribe((event) => {
      if (event.type === "tool.started") {
        subscription.unsubscribe();
        agent.steer("STEER");
      }
    });
  }
  await agent.prompt("go");
  await agent.dispose();
  const events = await sessionEvents(log, session.id);
  const errorResults = session.view
    .buildContext()
    .messages.flatMap((message) => (message.role === "toolResult" && message.isError ? [(message.content[0] as { text: string }).text] : []));
  return { briefs: toPiBriefs(events), errorResults };
}

describe("event order matches pi 0.73.1", () => {
  beforeAll(async () => {
    expect(existsSync(ORACLE)).toBe(true);
    pi = await runOracle();
  }, 90_000);

  it.each(SCENARIOS)("%s", async (scenario) => {
    const ours = await runOurs(scenario);
    expect(pi[scenario]?.length).toBeGreaterThan(0);
    expect(ours.briefs).toEqual(pi[scenario]);
  });

  it("abort differs on purpose: the same events up to the batch's turn end, then no model call", async () => {
    const { log, session } = await memorySession();
    const model = fakeModel([twoCalls, { text: "never" }]);
    const agent = createAgent({ session, model, tools: [sleepTool("slow"), sleepTool("fast")] });
    const subscription = agent.runEvents$.subscribe((event) => {
      if (event.type === "tool.ended" && event.data.toolCallId === "B") {
        subscription.unsubscribe();
        agent.abort();
      }
    });
    const outcome = await agent.prompt("go");
    await agent.dispose();
    expect(outcome.status).toBe("aborted");
    expect(model.calls).toBe(1);
    const expected = pi.abort;
    // pi: ..., turn_end, turn_start, message_start/end(assistant, aborted), turn_end, agent_end.
    const secondTurn = expected.findIndex((brief, index) => brief.t === "turn_start" && index > 1);
    expect(expected.slice(secondTurn).map((brief) => brief.t)).toEqual(["turn_start", "message_start", "message_end", "turn_end", "agent_end"]);
    expect(toPiBriefs(await sessionEvents(log, session.id))).toEqual([...expected.slice(0, secondTurn), { t: "agent_end" }]);
  });

  it("uses pi's texts for blocked and unknown tools", async () => {
    expect((await runOurs("block")).errorResults).toEqual(["nope"]);
    expect((await runOurs("unknown-tool")).errorResults).toEqual(["Tool missing not found"]);
  });
});
