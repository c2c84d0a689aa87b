/**
 * Executes one approval path of the slot (`slot-graph.ts`) for real: a harness over a SQLite file, a free `read` and a gated `write` tool, real
 * decisions, restarts and a second process. Checks the slot's states, each run's end, typed refusals, and the approval invariants (the gated tool
 * runs once only when approved, after its `approval.ended`; one result per closed call). Throws {@link AgentTestPathError}.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ArborError } from "../core/errors.ts";
import { messageOfEntry } from "../core/entries.ts";
import { defineTool } from "../core/tools.ts";
import { createHarness, type AgentHarness } from "../harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { createSqliteEventLog } from "../store/sqlite/sqlite-event-log.ts";
import { BUILT_IN_INVARIANTS, checkInvariants } from "./invariants.ts";
import { pathModel, wrapTool, type PathAnswer, type PathProbe } from "./path-fixtures.ts";
import { AgentTestPathError, type PathFailure } from "./path-report.ts";
import type { SlotPath, SlotStep } from "./slot-graph.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { assertNever } from "../core/exhaustive.ts";
import { ignoreError } from "../core/ignored.ts";

/** What an executed slot path reports. */
export interface SlotReport {
  writeRuns: number;
  readRuns: number;
  modelCalls: number;
  runStatuses: string[];
  /** The gated call's result as logged, when it has one. */
  writeResult?: { isError: boolean; text: string };
}

const GATED = "kit_w";
const FREE = "kit_r";
const REASON = "denied by the path";

interface Counters {
  write: number;
  read: number;
  /** Executions of write that found no committed approval. */
  unapproved: number;
}

function tools(probe: PathProbe, counters: Counters) {
  const read = defineTool({
    name: "read",
    description: "Reads a file",
    parameters: z.object({ path: z.string() }),
    async execute() {
      counters.read += 1;
      return { content: [{ type: "text", text: "alpha" }] };
    },
  });
  const write = defineTool({
    name: "write",
    description: "Writes a file (gated by the harness's requireApproval)",
    parameters: z.object({ path: z.string(), text: z.string() }),
    async execute({ path }, context) {
      counters.write += 1;
      const stored = await probe.log.readStream(probe.streamId);
      const approved = stored.some((event) => isEventOfType(event, "approval.ended") && event.data.toolCallId === context.toolCallId && event.data.status === "approved");
      if (!approved) counters.unapproved += 1;
      return { content: [{ type: "text", text: `wrote ${path}` }] };
    },
  });
  return [read, write].map((tool) => wrapTool(tool as never, probe, () => ({})));
}

const ANSWERS: PathAnswer[] = [
  {
    toolCalls: [
      { id: FREE, name: "read", arguments: { path: "a.txt" } },
      { id: GATED, name: "write", arguments: { path: "b.txt", text: "beta" } },
    ],
  },
  ...Array.from({ length: 4 }, () => ({ text: "done" })),
];

const textOf = (message: { content: unknown }) =>
  (Array.isArray(message.content) ? message.content : []).map((part: { type: string; text?: string }) => (part.type === "text" ? part.text : "")).join("");

/** Every tool call of a model request (ai-sdk prompt) and how many results it has there. */
function pairingOf(prompt: { role: string; content: unknown }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of prompt) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as { type: string; toolCallId?: string }[]) {
      if (message.role === "assistant" && part.type === "tool-call") counts.set(part.toolCallId!, counts.get(part.toolCallId!) ?? 0);
      if (message.role === "tool" && part.type === "tool-result") counts.set(part.toolCallId!, (counts.get(part.toolCallId!) ?? 0) + 1);
    }
  }
  return counts;
}

/** Executes `path` (see the module contract); resolves with the report or throws AgentTestPathError. */
export async function executeSlotPath(path: SlotPath, options: { timeoutMs?: number } = {}): Promise<SlotReport> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const dir = mkdtempSync(join(tmpdir(), "arbor-slot-"));
  const file = join(dir, "arbor.db");
  const failures: PathFailure[] = [];
  const fail = (check: string, message: string) => failures.push({ check, message });
  const counters: Counters = { write: 0, read: 0, unapproved: 0 };
  const observed: string[] = [];
  const watchers = new Set<() => void>();
  let log: EventLog = createSqliteEventLog({ path: file });
  const probe: PathProbe = { log, streamId: "", abortRequested: false, executions: [], modelCalls: [], abort: () => {} };
  const toolSet = tools(probe, counters);
  const report: SlotReport = { writeRuns: 0, readRuns: 0, modelCalls: 0, runStatuses: [] };
  const open = async (sessionId?: string, watched = true) =>
    createHarness({
      eventLog: log,
      cwd: dir,
      models: { kit: pathModel(probe, () => ANSWERS, () => {}) },
      tools: toolSet,
      requireApproval: ["write"],
      ...(sessionId ? { sessionId } : {}),
      ...(watched
        ? {
            inspect: (event: { type: string; snapshot?: { machine?: { id: string }; value?: unknown } }) => {
              if (event.type !== "@xstate.snapshot" || event.snapshot?.machine?.id !== "agent") return;
              const state = String(event.snapshot.value);
              if (observed.at(-1) !== state) observed.push(state);
              for (const watcher of watchers) watcher();
            },
          }
        : {}),
    });
  let harness: AgentHarness | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the path did not finish within ${timeoutMs} ms`)), timeoutMs);
    timer.unref?.();
  });
  /** Resolves once `condition` holds (checked now and on every snapshot of the slot). */
  const until = (condition: () => boolean) =>
    Promise.race([
      new Promise<void>((resolve) => {
        const check = () => {
          if (!condition()) return;
          watchers.delete(check);
          resolve();
        };
        watchers.add(check);
        check();
      }),
      deadline,
    ]);
  const statuses = async () => (await log.readStream(probe.streamId)).filter((event) => isEventOfType(event, "run.ended")).map((event) => event.data.status);
  try {
    harness = await open();
    probe.streamId = sessionStreamId(harness.id);
    const sessionId = harness.id;
    let outstanding: Promise<{ status: string; pendingApprovals?: string[] }> | undefined;
    let refusal: unknown;
    const steps = path.steps;
    for (const [index, step] of steps.entries()) {
      const h: AgentHarness = harness;
      const next: SlotStep | undefined = steps[index + 1];
      switch (step.event.type) {
        case "PROMPT":
          outstanding = h.prompt("go");
          break;
        case "CONTINUE":
          outstanding = h.continue();
          break;
        case "ABORT":
          outstanding = undefined;
          h.abort("aborted by the path while the call waits");
          break;
        case "prepare.done":
          break;
        case "prepare.refused": {
          if (outstanding) {
            refusal = await Promise.race([outstanding.then(() => undefined, (error: unknown) => error ?? new Error("rejected")), deadline]);
            outstanding = undefined;
            const expected = path.steps.slice(0, index).some((earlier) => earlier.event.type === "kit.elsewhere") ? "INVALID_STATE" : "APPROVAL_PENDING";
            const code = ArborError.isInstance(refusal) ? refusal.code : undefined;
            if (code !== expected) fail("refusal", `step ${index + 1}: continue() was ${refusal === undefined ? "not refused" : `refused with ${code ?? String(refusal)}`}; the path expects ${expected}`);
          }
          await until(() => h.agent.operation() === "awaiting-approval" || h.agent.operation() === "idle");
          break;
        }
        case "run.done": {
          if (outstanding) {
            const outcome = await Promise.race([outstanding, deadline]);
            outstanding = undefined;
            if (outcome.status !== step.runStatus) fail("run-outcome", `step ${index + 1}: the run ended ${outcome.status}; the path says ${step.runStatus}`);
            if (step.runStatus === "suspended" && JSON.stringify(outcome.pendingApprovals) !== JSON.stringify([GATED])) fail("run-outcome", `the suspended run names ${JSON.stringify(outcome.pendingApprovals)} as waiting; the path expects [${GATED}]`);
          } else await Promise.race([h.waitForIdle(), deadline]);
          const last = (await statuses()).at(-1);
          if (last !== step.runStatus) fail("run-ended", `step ${index + 1}: the last run.ended says ${last}; the path says ${step.runStatus}`);
          break;
        }
        case "kit.approve":
        case "kit.deny": {
          const decision = step.event.type === "kit.approve" ? "approved" : "denied";
          const earlier = steps.slice(0, index).find((s) => s.event.type === "kit.approve" || s.event.type === "kit.deny");
          const first = earlier === undefined ? undefined : earlier.event.type === "kit.approve" ? "approved" : "denied";
          const call = decision === "approved" ? h.approve(GATED) : h.deny(GATED, { reason: REASON });
          const result = await call.then((value) => ({ value }), (error: unknown) => ({ error }));
          if (first === undefined || first === decision) {
            if ("error" in result) fail("decision", `step ${index + 1}: ${decision} was refused: ${String(result.error)}`);
            else if (result.value.changed !== (first === undefined)) fail("decision", `step ${index + 1}: ${decision} reports changed=${result.value.changed}; a ${first ? "repeated decision is a no-op" : "first decision changes"}`);
          } else if (!("error" in result) || !ArborError.isInstance(result.error) || result.error.code !== "APPROVAL_CONFLICT") {
            fail("decision", `step ${index + 1}: a ${decision} after ${first} was not refused with APPROVAL_CONFLICT`);
          }
          break;
        }
        case "kit.restart":
          await h.close();
          await log.close();
          log = createSqliteEventLog({ path: file });
          probe.log = log;
          harness = await open(sessionId);
          break;
        case "APPROVAL.AWAIT":
          await Promise.race([h.agent.whenReady(), deadline]);
          await until(() => h.agent.operation() === "awaiting-approval");
          break;
        case "APPROVAL.CLEAR":
          await until(() => h.agent.operation() === "idle");
          break;
        case "kit.elsewhere": {
          // Another process: its own log handle and harness on the same file.
          const mine = log;
          log = createSqliteEventLog({ path: file });
          const other = await open(sessionId, false);
          try {
            await other.approve(GATED);
            const outcome = await Promise.race([other.continue(), deadline]);
            if (outcome.status !== "done") fail("elsewhere", `the other process's resume ended ${outcome.status}`);
          } finally {
            await other.close();
            await log.close();
            log = mine;
          }
          break;
        }
        default:
          assertNever(step.event, "slot event");
      }
      const rest = step.state === "idle" || step.state === "awaiting-approval";
      const automatic = next?.event.type === "APPROVAL.CLEAR" || next?.event.type === "APPROVAL.AWAIT" || next?.event.type.startsWith("prepare.") || next?.event.type === "run.done";
      if (rest && !automatic && harness.agent.operation() !== step.state) fail("slot", `after step ${index + 1} (${step.event.type}) the slot is ${harness.agent.operation()}; the path says ${step.state}`);
    }
    if (outstanding) await Promise.race([outstanding, deadline]);
    await Promise.race([harness.waitForIdle(), deadline]);

    const expectedStates = path.steps.map((step) => step.state).filter((state, at, all) => state !== all[at - 1]);
    let at = 0;
    for (const state of observed) if (at < expectedStates.length && state === expectedStates[at]) at++;
    if (at < expectedStates.length) fail("states", `the agent actor went ${observed.join(" > ")}; the path goes ${expectedStates.join(" > ")}`);

    // Catch up with what another process wrote, then check the log.
    await harness.session.refresh?.();
    const events: StoredEvent[] = await log.readStream(probe.streamId);
    report.runStatuses = events.filter((event) => isEventOfType(event, "run.ended")).map((event) => event.data.status);
    report.writeRuns = counters.write;
    report.readRuns = counters.read;
    report.modelCalls = probe.modelCalls.length;
    const messages = harness.session.view.getEntries().flatMap((entry) => messageOfEntry(entry) ?? []);
    const results = messages.filter((message) => message.role === "toolResult" && message.toolCallId === GATED);
    const first = path.steps.find((step) => step.event.type === "kit.approve" || step.event.type === "kit.deny" || step.event.type === "kit.elsewhere");
    const decision = first === undefined ? "pending" : first.event.type === "kit.deny" ? "denied" : "approved";
    const aborted = path.steps.some((step) => step.runStatus === "aborted");
    const resumed = path.steps.some((step) => step.runStatus === "done") || path.steps.some((step) => step.event.type === "kit.elsewhere");
    const closed = aborted || resumed;
    if (results[0]?.role === "toolResult") report.writeResult = { isError: results[0].isError, text: textOf(results[0]) };

    if (counters.read !== 1) fail("sibling", `the free sibling read ran ${counters.read} times; it runs once, while write waits`);
    const expectedWrites = resumed && decision === "approved" ? 1 : 0;
    if (counters.write !== expectedWrites) fail("gated-runs", `the gated write ran ${counters.write} times; the path expects ${expectedWrites} (decision ${decision}${resumed ? ", resumed" : aborted ? ", aborted" : ", not resumed"})`);
    if (counters.unapproved > 0) fail("gated-before-approval", `the gated write ran ${counters.unapproved} time(s) before its approval was committed`);
    if (results.length !== (closed ? 1 : 0)) fail("gated-result", `the gated call has ${results.length} results in the log; it has ${closed ? "one (it is closed)" : "none while it waits"}`);
    if (closed && report.writeResult) {
      const want = aborted ? { isError: true, text: /./ } : decision === "approved" ? { isError: false, text: /^wrote b\.txt$/ } : { isError: true, text: new RegExp(`declined.*${REASON}`) };
      if (report.writeResult.isError !== want.isError || !want.text.test(report.writeResult.text)) {
        fail("gated-result", `the gated call's result is ${JSON.stringify(report.writeResult)}; the path expects isError=${want.isError} and text ${want.text}`);
      }
    }
    const ended = events.filter((event) => isEventOfType(event, "approval.ended")).map((event) => event.data.status);
    const wantEnded = aborted && decision === "pending" ? ["cancelled"] : decision === "pending" ? [] : [decision];
    if (JSON.stringify(ended) !== JSON.stringify(wantEnded)) fail("approval-ended", `approval.ended says ${JSON.stringify(ended)}; the path expects ${JSON.stringify(wantEnded)}`);
    const wantStatuses = ["suspended", ...(aborted ? ["aborted"] : resumed ? ["done"] : [])];
    if (JSON.stringify(report.runStatuses) !== JSON.stringify(wantStatuses)) fail("runs", `the runs ended ${report.runStatuses.join(", ")}; the path expects ${wantStatuses.join(", ")}`);
    const wantCalls = 1 + (resumed ? 1 : 0);
    if (report.modelCalls !== wantCalls) fail("model-calls", `the model was called ${report.modelCalls} times; the path expects ${wantCalls}`);
    for (const [call, request] of probe.modelCalls.entries()) {
      for (const [id, count] of pairingOf(request.prompt as never)) if (count !== 1) fail("request-pairing", `model request ${call + 1} pairs call ${id} with ${count} results`);
    }

    const pending = (await harness.pendingApprovals()).map((approval) => approval.toolCallId);
    if (JSON.stringify(pending) !== JSON.stringify(closed ? [] : [GATED])) fail("pending", `pendingApprovals() lists ${JSON.stringify(pending)}; the path expects ${closed ? "none" : GATED}`);
    const context = { sessionId, events, live: harness.session.view, executions: probe.executions, pendingToolCallIds: pending, steps: path.steps.map((step) => step.event.type) };
    await checkInvariants(file, context, BUILT_IN_INVARIANTS, fail);
  } catch (error) {
    fail("execution", error instanceof Error ? error.message : String(error));
  } finally {
    await harness?.close().catch(ignoreError("closing a path's harness after its checks; failures are already recorded"));
    await log.close().catch(ignoreError("closing a path's log after its checks; failures are already recorded"));
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length) throw new AgentTestPathError(path.description, path.steps.map((step) => `${step.event.type} → ${step.state}`), failures);
  return report;
}
