/**
 * Resuming a workflow run that another live process drives is refused (`WorkflowRunError`), and that other process is told apart from this one by
 * pid, host and start time: a replica on another host with this process's pid (containers often run as pid 1) is another process. Real SQLite file.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { defineWorkflow } from "../../src/workflows/define-workflow.ts";
import { workflowStreamId } from "../../src/workflows/fold.ts";
import { readWorkflowRun } from "../../src/workflows/runs.ts";
import { codeStep } from "../../src/workflows/steps.ts";
import { tempDir } from "../cli/cli-helpers.ts";

const dir = tempDir("arbor-workflow-owner-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("resuming a workflow another process drives", () => {
  for (const owner of [
    { label: "another pid on another host", pid: process.pid + 1, host: "replica-b.internal" },
    { label: "this pid on another host", pid: process.pid, host: "replica-b.internal" },
  ]) {
    it(`is refused for ${owner.label}, and the step does not run here`, async () => {
      const log = createSqliteEventLog({ path: join(dir, `${owner.pid}-${owner.host}.db`) });
      const harness = await createHarness({ eventLog: log, cwd: dir, models: { main: createOpenAIModel({ modelId: "m", baseURL: "http://127.0.0.1:9/v1", apiKey: "x", api: "chat" }) } });
      try {
        let ran = 0;
        const workflow = defineWorkflow({ name: "once", input: z.object({}), output: z.number(), steps: [codeStep({ id: "once", retry: "safe", run: () => ++ran })] });
        const live = { pid: owner.pid, host: owner.host, processStart: "12345" };
        await log.append(workflowStreamId("wf-1"), [
          { type: "workflow.started", data: { workflowId: "wf-1", workflow: "once", input: {}, steps: ["once"] }, metadata: { owner: live } },
          { type: "step.started", data: { workflowId: "wf-1", stepId: "once", kind: "code", attempt: 1 }, metadata: { owner: live } },
        ]);
        expect((await readWorkflowRun(log, "wf-1"))?.status).toBe("running");
        await expect(workflow.resume("wf-1", { harness, cwd: dir })).rejects.toMatchObject({ name: "WorkflowRunError", message: expect.stringContaining("is being driven by process") });
        expect(ran).toBe(0);
      } finally {
        await harness.close();
        await log.close();
      }
    });
  }
});
