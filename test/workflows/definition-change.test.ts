/**
 * A workflow's definition is pinned to its run (issue 13): `workflow.started` records the
 * definition's shape and digest, and a resume with changed steps (removed, new, another kind,
 * moved, reordered) is refused with WorkflowDefinitionChangedError naming each difference, before
 * anything runs or is logged; the definition the run started with resumes it. The settings that
 * change how a run goes (a fan-out's `mode`, an approval's `onDeny`, a step's `retry`) are part of
 * it (`workflow.started` v3, digest form 2). A run logged before digests (`workflow.started` v1,
 * written here with its v1 schema) is compared by its step ids; one logged with a form-1 digest
 * (`workflow.started` v2, written with its v2 schema as an older Arbor did) resumes with its
 * unchanged definition. Real SQLite files.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createDefaultEventRegistry } from "../../src/store/events/index.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { definitionDigest, definitionShape } from "../../src/workflows/definition-digest.ts";
import { defineWorkflow } from "../../src/workflows/define-workflow.ts";
import { WorkflowDefinitionChangedError } from "../../src/workflows/errors.ts";
import { workflowStreamId } from "../../src/workflows/fold.ts";
import { decideWorkflowApproval } from "../../src/workflows/runs.ts";
import { approvalStep, codeStep, fanOut, type WorkflowStep } from "../../src/workflows/steps.ts";

let dir: string;
let log: EventLog;
let harness: AgentHarness;
let ran: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "arbor-wf-definition-"));
  log = createSqliteEventLog({ path: join(dir, "arbor.db") });
  harness = await createHarness({ eventLog: log, cwd: dir, models: { main: scriptedModel([]) } });
  ran = [];
});
afterEach(async () => {
  await harness.close();
  await log.close();
  rmSync(dir, { recursive: true, force: true });
});

const code = (id: string) => codeStep({ id, run: () => (ran.push(id), id) });
const release = (steps: WorkflowStep[]) => defineWorkflow({ name: "release", input: z.object({ version: z.string() }), output: z.unknown(), steps });
/** The definition the runs start with: a, a fan-out f of b and c, the gate g, then d. */
const base = () => [code("a"), fanOut({ id: "f", steps: [code("b"), code("c")] }), approvalStep({ id: "g" }), code("d")];

describe("a workflow resumed with another definition", () => {
  it("is refused naming each difference, writes nothing, and the original definition resumes it", async () => {
    const first = await release(base()).run({ version: "1.2.0" }, { harness, cwd: dir });
    expect(first).toMatchObject({ status: "suspended", pendingApprovals: ["g"] });
    const [started] = await log.readStream(workflowStreamId(first.workflowId));
    expect(started.schemaVersion).toBe(3);
    expect(started.data).toMatchObject({ definition: { digest: definitionDigest(definitionShape(base())), steps: definitionShape(base()) } });
    expect(definitionDigest(definitionShape(base()))).toMatch(/^sha256-2:[0-9a-f]{64}$/);
    expect(definitionShape(base()).filter((step) => step.id === "f" || step.id === "g" || step.id === "d")).toEqual([
      { id: "f", kind: "fanOut", mode: "all" },
      { id: "g", kind: "approval", onDeny: "fail" },
      { id: "d", kind: "code", retry: "never" },
    ]);
    await decideWorkflowApproval(log, first.workflowId, "g", { status: "approved" });
    const version = (await log.readStream(workflowStreamId(first.workflowId))).length;

    const variants: [string, WorkflowStep[], string[]][] = [
      ["another kind", [code("a"), fanOut({ id: "f", steps: [code("b"), code("c")] }), code("g"), code("d")], ['step "g" was an approval step, is now a code step']],
      ["a removed step", [code("a"), fanOut({ id: "f", steps: [code("b")] }), approvalStep({ id: "g" }), code("d")], ['step "c" (code) was removed']],
      ["a new step", [...base(), code("e")], ['step "e" (code) is new']],
      ["a moved step", [code("a"), code("b"), fanOut({ id: "f", steps: [code("c")] }), approvalStep({ id: "g" }), code("d")], ['step "b" was in fan-out "f", is now in the top level', "the steps' order changed: was a, f, b, c, g, d; is now a, b, f, c, g, d"]],
      ["another order", [code("a"), fanOut({ id: "f", steps: [code("b"), code("c")] }), code("d"), approvalStep({ id: "g" })], ["the steps' order changed: was a, f, b, c, g, d; is now a, f, b, c, d, g"]],
      ["another fan-out mode", [code("a"), fanOut({ id: "f", mode: "failFast", steps: [code("b"), code("c")] }), approvalStep({ id: "g" }), code("d")], ['step "f" mode was "all", is now "failFast"']],
      ["another onDeny", [code("a"), fanOut({ id: "f", steps: [code("b"), code("c")] }), approvalStep({ id: "g", onDeny: "continue" }), code("d")], ['step "g" onDeny was "fail", is now "continue"']],
      ["another retry", [code("a"), fanOut({ id: "f", steps: [code("b"), code("c")] }), approvalStep({ id: "g" }), codeStep({ id: "d", retry: "safe", run: () => "d" })], ['step "d" retry was "never", is now "safe"']],
      ["another retry in a fan-out", [code("a"), fanOut({ id: "f", steps: [code("b"), codeStep({ id: "c", retry: "safe", run: () => "c" })] }), approvalStep({ id: "g" }), code("d")], ['step "c" retry was "never", is now "safe"']],
    ];
    for (const [what, steps, changes] of variants) {
      const error = await release(steps).resume(first.workflowId, { harness, cwd: dir }).then(() => undefined, (rejected: unknown) => rejected);
      expect(WorkflowDefinitionChangedError.isInstance(error), what).toBe(true);
      expect((error as WorkflowDefinitionChangedError).details, what).toMatchObject({ workflowId: first.workflowId, workflow: "release", changes, storedDigest: definitionDigest(definitionShape(base())) });
      expect((error as Error).message, what).toContain(changes[0]);
    }
    expect(await log.readStream(workflowStreamId(first.workflowId))).toHaveLength(version);
    expect(ran.sort()).toEqual(["a", "b", "c"]);

    // The definition it started with (built afresh, its defaults now written out: same shape, same digest) goes on.
    const explicit = [code("a"), fanOut({ id: "f", mode: "all", steps: [code("b"), code("c")] }), approvalStep({ id: "g", onDeny: "fail" }), codeStep({ id: "d", retry: "never", run: () => (ran.push("d"), "d") })];
    expect(await release(explicit).resume(first.workflowId, { harness, cwd: dir })).toMatchObject({ status: "done", output: "d" });
    expect(ran.sort()).toEqual(["a", "b", "c", "d"]);
  });

  it("a run logged before digests (workflow.started v1) is compared by its step ids", async () => {
    // Written as an older Arbor did: schema version 1, no definition.
    const registry = createDefaultEventRegistry();
    registry.register("workflow.started", 1, z.object({ workflowId: z.string(), workflow: z.string(), input: z.unknown(), steps: z.array(z.string()) }));
    const old = createSqliteEventLog({ path: join(dir, "arbor.db"), registry });
    await old.append(workflowStreamId("old-1"), [{ type: "workflow.started", schemaVersion: 1, data: { workflowId: "old-1", workflow: "release", input: { version: "1.0.0" }, steps: ["a", "f", "b", "c", "g", "d"] } }], { expectedVersion: "no_stream" });
    await old.close();
    const [started] = await log.readStream(workflowStreamId("old-1"));
    expect(started.schemaVersion).toBe(3);
    expect(started.data).not.toHaveProperty("definition");

    const reordered = [code("a"), fanOut({ id: "f", steps: [code("c"), code("b")] }), approvalStep({ id: "g" }), code("d")];
    const error = await release(reordered).resume("old-1", { harness, cwd: dir }).then(() => undefined, (rejected: unknown) => rejected);
    expect(WorkflowDefinitionChangedError.isInstance(error)).toBe(true);
    expect((error as WorkflowDefinitionChangedError).details.changes).toEqual(["the steps' order changed: was a, f, b, c, g, d; is now a, f, c, b, g, d"]);
    expect((error as WorkflowDefinitionChangedError).details).not.toHaveProperty("storedDigest");
    expect(ran).toEqual([]);

    expect(await release(base()).resume("old-1", { harness, cwd: dir })).toMatchObject({ status: "suspended", pendingApprovals: ["g"] });
    expect(ran.sort()).toEqual(["a", "b", "c"]);
  });

  it("a run logged with a form-1 digest (workflow.started v2, an older Arbor) resumes with its unchanged definition; a changed kind is still refused", async () => {
    // Written as the previous main did: schema version 2, the digest over ids, kinds and places only.
    const shape = [
      { id: "a", kind: "code" },
      { id: "f", kind: "fanOut" },
      { id: "b", kind: "code", in: "f" },
      { id: "c", kind: "code", in: "f" },
      { id: "g", kind: "approval" },
      { id: "d", kind: "code" },
    ] as const;
    const digest = `sha256:${createHash("sha256").update(JSON.stringify(shape.map((step) => [step.id, step.kind, "in" in step ? step.in : null]))).digest("hex")}`;
    const stepShape = z.object({ id: z.string(), kind: z.string(), in: z.string().optional() });
    const registry = createDefaultEventRegistry();
    registry.register("workflow.started", 2, z.object({ workflowId: z.string(), workflow: z.string(), input: z.unknown(), steps: z.array(z.string()), definition: z.object({ digest: z.string(), steps: z.array(stepShape) }).optional() }));
    const old = createSqliteEventLog({ path: join(dir, "arbor.db"), registry });
    const data = { workflowId: "old-2", workflow: "release", input: { version: "1.1.0" }, steps: shape.map((step) => step.id), definition: { digest, steps: shape } };
    await old.append(workflowStreamId("old-2"), [{ type: "workflow.started", schemaVersion: 2, data }], { expectedVersion: "no_stream" });
    await old.close();
    const [started] = await log.readStream(workflowStreamId("old-2"));
    expect(started.schemaVersion).toBe(3);
    expect(started.data).toEqual(data);

    const kindChanged = [code("a"), fanOut({ id: "f", steps: [code("b"), code("c")] }), code("g"), code("d")];
    const error = await release(kindChanged).resume("old-2", { harness, cwd: dir }).then(() => undefined, (rejected: unknown) => rejected);
    expect(WorkflowDefinitionChangedError.isInstance(error)).toBe(true);
    expect((error as WorkflowDefinitionChangedError).details).toMatchObject({ changes: ['step "g" was an approval step, is now a code step'], storedDigest: digest });
    expect(ran).toEqual([]);

    expect(await release(base()).resume("old-2", { harness, cwd: dir })).toMatchObject({ status: "suspended", pendingApprovals: ["g"] });
    expect(ran.sort()).toEqual(["a", "b", "c"]);
  });
});
