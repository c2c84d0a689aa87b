/**
 * `arbor workflow run` / `arbor workflows` / `arbor workflow approve|deny|abort` end to end: the
 * real CLI in child processes, a real SQLite file, the real @ai-sdk/openai client against the
 * loopback OpenAI server. The run stops at its approval step with exit code 3, is listed, approved
 * from another process, resumed, and prints its output.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIServer, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { runArbor } from "../cli/cli-helpers.ts";
import { respond } from "./fixtures/review-workflow.ts";

const MODULE = fileURLToPath(new URL("./fixtures/review-module.ts", import.meta.url));
let server: OpenAIServer;
let dir: string;
beforeAll(async () => {
  server = await startOpenAIServer({ respond });
  dir = mkdtempSync(join(tmpdir(), "arbor-cli-wf-"));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("arbor workflow", () => {
  it("runs to the approval step (exit 3), lists it, records the decision, resumes to the output", async () => {
    const db = join(dir, "arbor.db");
    const env = { OPENAI_API_KEY: "test", WORKFLOW_COUNTER: join(dir, "counter") };
    const model = ["--db", db, "--model", "openai:gpt-test", "--base-url", server.url];
    const run = await runArbor(["workflow", "run", MODULE, "--input", '{"title":"Crash on start"}', "--id", "wf-1", "--cwd", dir, ...model], { env });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain("workflow wf-1");
    expect(run.stdout).toMatch(/^wf-1 ship awaiting-approval Ship "Crash on start"\? style: style-ok, safety: safety-ok$/m);

    const listed = await runArbor(["workflows", "--db", db], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^wf-1 review awaiting-approval 4\/6 \S+ waiting: ship$/m);

    const early = await runArbor(["workflow", "run", MODULE, "--resume", "wf-1", "--cwd", dir, ...model], { env });
    expect(early.code).toBe(3);

    const approved = await runArbor(["workflow", "approve", "wf-1", "ship", "--reason", "release window", "--db", db], { env });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout.trim()).toBe("wf-1 ship approved");
    expect((await runArbor(["workflow", "approve", "wf-1", "ship", "--db", db], { env })).stdout).toContain("unchanged");
    const conflict = await runArbor(["workflow", "deny", "wf-1", "ship", "--reason", "no", "--db", db], { env });
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain("already approved");

    // The run recorded its endpoint and folder: --resume needs neither the model flags nor --cwd.
    const resumed = await runArbor(["workflow", "run", MODULE, "--resume", "wf-1", "--db", db], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ triage: "triage-ok", style: "style-ok", safety: "safety-ok", approved: true });
    expect(readFileSync(join(dir, "counter"), "utf8").trim().split("\n").sort()).toEqual(["safety", "style", "triage"]);

    const json = await runArbor(["workflows", "--json", "--db", db], { env });
    expect(JSON.parse(json.stdout.trim())).toMatchObject({ workflowId: "wf-1", workflow: "review", status: "done", stepsEnded: 6, steps: 6, pendingApprovals: [] });
    // A settled run resumes to its logged output, again without flags, and runs nothing.
    const again = await runArbor(["workflow", "run", MODULE, "--resume", "wf-1", "--db", db], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(resumed.stdout));
    expect(readFileSync(join(dir, "counter"), "utf8").trim().split("\n").sort()).toEqual(["safety", "style", "triage"]);
  }, 120_000);

  it("refuses bad input and a module without a workflow, aborts a waiting run, and refuses to abort an unknown one", async () => {
    const db = join(dir, "other.db");
    const env = { OPENAI_API_KEY: "test", WORKFLOW_COUNTER: join(dir, "counter2") };
    const model = ["--db", db, "--model", "openai:gpt-test", "--base-url", server.url];
    const bad = await runArbor(["workflow", "run", MODULE, "--input", "{oops", ...model], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--input is not JSON");
    const invalid = await runArbor(["workflow", "run", MODULE, "--input", '{"title":3}', ...model], { env });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("Invalid input for workflow \"review\" at title");
    const notWorkflow = await runArbor(["workflow", "run", fileURLToPath(new URL("./fixtures/review-workflow.ts", import.meta.url)), ...model], { env });
    expect(notWorkflow.code).toBe(2);
    expect(notWorkflow.stderr).toContain("exports no workflow");

    expect((await runArbor(["workflow", "run", MODULE, "--input", '{"title":"t"}', "--id", "wf-2", "--cwd", dir, ...model], { env })).code).toBe(3);
    const aborted = await runArbor(["workflow", "abort", "wf-2", "--reason", "superseded", "--db", db], { env });
    expect(aborted.stdout.trim()).toBe("wf-2 aborted");
    expect((await runArbor(["workflows", "--db", db], { env })).stdout).toMatch(/^wf-2 review aborted 4\/6 /m);
    // Refused like every other refusing write of the CLI: exit 1, and it says nothing was written.
    const unknown = await runArbor(["workflow", "abort", "wf-none", "--db", db], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('arbor: No workflow run "wf-none" in this log. Nothing was written.');
  }, 120_000);
});
