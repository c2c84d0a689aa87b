// A workflow as a machine: an agent triages an issue, two agents review it at once (a fan-out),
// a human approves, and the report is written as an artifact. The run stops at the approval step
// (`suspended`); the decision is recorded in the log, and `resume` goes on without running any
// finished step again (a crash in between would resume the same way).
// `node workflow.mjs` needs OPENAI_API_KEY (for a local server, also OPENAI_BASE_URL); with
// ARBOR_EXAMPLE_SELF_TEST=1 it runs against Arbor's loopback test server.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness, createOpenAIModel } from "arbor-agent";
import { defineAgent } from "arbor-agent/agent";
import { startOpenAIServer, textResponse } from "arbor-agent/testing";
import { agentStep, approvalStep, artifactStep, decideWorkflowApproval, defineWorkflow, fanOut, listWorkflowRuns } from "arbor-agent/workflow";
import { z } from "zod";

const selfTest = process.env.ARBOR_EXAMPLE_SELF_TEST === "1";
const root = mkdtempSync(join(tmpdir(), "arbor-workflow-"));
// The loopback server answers each agent by the instructions it was given.
const answers = {
  triage: { label: "bug", severity: 2 },
  style: { verdict: "clear", notes: "short and reproducible" },
  risk: { verdict: "low", notes: "no data loss" },
};
const server = selfTest
  ? await startOpenAIServer({
      respond: (request) => {
        const system = JSON.stringify(request.body.messages?.[0]?.content ?? "");
        const name = Object.keys(answers).find((agent) => system.includes(`[${agent}]`));
        return name ? textResponse(JSON.stringify(answers[name])) : undefined;
      },
    })
  : undefined;

const Review = z.object({ verdict: z.string(), notes: z.string() });
const triage = defineAgent({ name: "triage", instructions: "[triage] Label the issue and rate its severity from 1 (worst) to 3.", input: z.object({ title: z.string() }), output: z.object({ label: z.enum(["bug", "feature"]), severity: z.number().int() }) });
const style = defineAgent({ name: "style", instructions: "[style] Is the report clear? Answer with a verdict and notes.", output: Review });
const risk = defineAgent({ name: "risk", instructions: "[risk] How risky is the fix? Answer with a verdict and notes.", output: Review });

const review = defineWorkflow({
  name: "issue-review",
  input: z.object({ title: z.string() }),
  output: z.object({ label: z.string(), style: z.string(), risk: z.string(), report: z.string() }),
  steps: [
    agentStep({ id: "triage", agent: triage, input: (ctx) => ({ title: ctx.input.title }), retry: "safe" }),
    fanOut({
      id: "reviews",
      mode: "failFast",
      steps: [
        agentStep({ id: "style", agent: style, input: (ctx) => `Issue: ${ctx.input.title} (${ctx.results.triage.label})`, retry: "safe" }),
        agentStep({ id: "risk", agent: risk, input: (ctx) => `Issue: ${ctx.input.title} (severity ${ctx.results.triage.severity})`, retry: "safe" }),
      ],
    }),
    approvalStep({ id: "publish", message: (ctx) => `Publish the review of "${ctx.input.title}"? style ${ctx.results.style.verdict}, risk ${ctx.results.risk.verdict}` }),
    artifactStep({ id: "report", path: "review.md", content: (ctx) => `# ${ctx.input.title}\n\n- label: ${ctx.results.triage.label}\n- style: ${ctx.results.style.notes}\n- risk: ${ctx.results.risk.notes}\n` }),
  ],
  result: (ctx) => ({ label: ctx.results.triage.label, style: ctx.results.style.verdict, risk: ctx.results.risk.verdict, report: ctx.results.report.path }),
});

const harness = await createHarness({
  eventLogPath: join(root, ".arbor", "arbor.db"),
  cwd: root,
  models: { main: createOpenAIModel({ modelId: "gpt-4o-mini", api: "chat", ...(server ? { baseURL: server.url, apiKey: "test" } : {}) }) },
});
const first = await review.run({ title: "App crashes on start" }, { harness, cwd: root });
console.log(`run ${first.workflowId}: ${first.status}${first.status === "suspended" ? ` (waiting: ${first.pendingApprovals.join(", ")})` : ""}`);
if (first.status !== "suspended") {
  // It did not reach the approval (no model key, a model error): say why and stop.
  console.log(`workflow ${first.status}${first.status === "failed" ? `: ${first.error.message}` : ""}`);
  await harness.close();
  await server?.close();
  process.exit(1);
}
// Any process could decide: the decision is an event in the workflow's stream.
await decideWorkflowApproval(harness, first.workflowId, "publish", { status: "approved", reason: "looks right" });
const outcome = await review.resume(first.workflowId, { harness, cwd: root });
const runs = await listWorkflowRuns(harness);
await harness.close();
await server?.close();

if (outcome.status === "done") {
  console.log(`done: ${JSON.stringify(outcome.output)}`);
  console.log(readFileSync(outcome.output.report, "utf8"));
} else {
  console.log(`workflow ${outcome.status}${outcome.status === "failed" ? `: ${outcome.error.message}` : ""}`);
}
console.log(runs.map((run) => `${run.workflowId} ${run.workflow} ${run.status}`).join("\n"));
if (selfTest) {
  if (first.status !== "suspended" || outcome.status !== "done" || outcome.output.risk !== "low" || runs[0]?.status !== "done") process.exit(1);
  console.log("example ok");
}
