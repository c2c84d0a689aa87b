/**
 * Budgets across processes (`docs/budgets.md`): a real child process killed with SIGKILL between
 * two calls leaves its reservation in the ledger, so the limit still holds in the continuation;
 * two real replica processes on PostgreSQL sharing one tenant budget never go over its cap by more
 * than one in-flight call's reservation (counted limits: never).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { budgetLedgerOf, budgetStreamId } from "../../src/store/budget-ledger.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { spawnTsx, type LineChild } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

const nextSchema = useTestSchemas("budget");
const CHILD = "test/harness/fixtures/budget-child.ts";

let server: OpenAIServer | undefined;
let harness: AgentHarness | undefined;
let dir: string | undefined;
const children: LineChild[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.process.kill("SIGKILL");
    await child.exited;
  }
  await harness?.close();
  harness = undefined;
  await server?.close();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Answers every model request with `count` parallel `work` calls (fresh ids), 100 in + 50 out tokens. */
function toolCallsEveryTime(count: number) {
  let request = 0;
  return () => {
    request += 1;
    return toolCallResponse(
      Array.from({ length: count }, (_, index) => ({ id: `r${request}c${index}`, name: "work", arguments: { n: request * 10 + index } })),
      { usage: { input: 100, output: 50 } },
    );
  };
}

describe("budgets: kill -9 between two calls", () => {
  it("the dead process's reservation still counts: the continuation stops at the limit", async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-budget-crash-"));
    const db = join(dir, "arbor.db");
    const marker = join(dir, "executed.txt");
    writeFileSync(marker, "");
    // The first request asks for one call (it hangs in the child); the next for two at once.
    let request = 0;
    server = await startOpenAIServer({
      respond: () => {
        request += 1;
        if (request === 1) return toolCallResponse([{ id: "c1", name: "work", arguments: { n: 1 } }]);
        if (request === 2) return toolCallResponse([{ id: "c2", name: "work", arguments: { n: 2 } }, { id: "c3", name: "work", arguments: { n: 3 } }]);
        return textResponse("over");
      },
    });
    const child = spawnTsx(CHILD, ["crash", db, server.url, marker, JSON.stringify({ run: { maxToolCalls: 2 } })]);
    children.push(child);
    const sessionId = (await child.nextLine()).replace(/^session /, "");
    expect(await child.nextLine()).toBe("executing c1");
    child.process.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");
    children.splice(0);

    // Another process continues the run. Its own budget is looser: the run's limit comes from the
    // ledger, where the dead process's first reservation recorded it.
    const work = defineTool({
      name: "work",
      description: "Does some work",
      parameters: z.object({ n: z.number() }),
      execute: async (_args: { n: number }, context: { toolCallId: string }) => {
        writeFileSync(marker, `${readFileSync(marker, "utf8")}${context.toolCallId}\n`);
        return { content: [{ type: "text" as const, text: "done" }] };
      },
    });
    harness = await createHarness({
      eventLogPath: db,
      sessionId,
      durability: "continue",
      models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) },
      tools: [work],
      streamOptions: { maxRetries: 0 },
      budget: { tenant: { maxTurns: 100 } },
    });
    const outcome = await harness.resume(sessionId);
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ scope: "run", limit: "maxToolCalls", max: 2 });
    // c1 (started before the crash, never settled) and c2 ran; c3 was refused.
    expect(readFileSync(marker, "utf8").trim().split("\n")).toEqual(["c1", "c2"]);
    const fold = await budgetLedgerOf(harness.repository!.log, "default").read();
    const run = fold.run(outcome.runId);
    expect(run.used.toolCalls + run.reserved.toolCalls).toBe(2);
    expect(run.reserved.toolCalls).toBe(1); // the dead process's reservation: never settled, still counted
    expect(server.requests.length).toBe(2);
  }, 120_000);
});

describe("budgets: two replicas on PostgreSQL sharing one tenant budget", () => {
  async function replicas(budget: unknown, calls: number, sessions = 3) {
    server = await startOpenAIServer({ respond: toolCallsEveryTime(calls) });
    const schema = nextSchema();
    // The schema exists before both replicas start (each would create it otherwise, racing).
    const setup = createPostgresEventLog({ connectionString: PG_URL, schema });
    await setup.headPosition();
    const spawnReplica = () => {
      const child = spawnTsx(CHILD, ["replica", PG_URL, schema, server!.url, String(sessions), JSON.stringify(budget)]);
      children.push(child);
      return child.nextLine();
    };
    const lines = await Promise.all([spawnReplica(), spawnReplica()]);
    const outcomes = lines.flatMap((line) => JSON.parse(line) as { status: string; budget?: { scope: string; limit: string } }[]);
    const fold = await budgetLedgerOf(setup, "default").read();
    const ledger = await setup.readStream(budgetStreamId("default"));
    const executed = (await setup.readAll({ types: ["tool.ended"] })).filter((event) => (event.data as { outcome: string }).outcome === "succeeded").length;
    await setup.close();
    return { outcomes, fold, ledger, executed };
  }

  it("maxToolCalls: the tool calls both replicas executed never exceed the tenant's cap", async () => {
    const { outcomes, fold, executed } = await replicas({ tenant: { maxToolCalls: 7 } }, 3);
    expect(outcomes).toHaveLength(6);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ status: "budget_exceeded", budget: { scope: "tenant", limit: "maxToolCalls" } });
    expect(fold.tenant.reserved.toolCalls).toBe(0);
    expect(fold.tenant.used.toolCalls).toBe(executed);
    expect(executed).toBeLessThanOrEqual(7);
    expect(executed).toBeGreaterThan(0);
  }, 180_000);

  it("maxTokens: the tokens both replicas used exceed the cap by at most one in-flight call's reservation", async () => {
    const cap = 3000;
    const { outcomes, fold, ledger } = await replicas({ tenant: { maxTokens: cap } }, 1);
    expect(outcomes).toHaveLength(6);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ status: "budget_exceeded", budget: { scope: "tenant", limit: "maxTokens" } });
    const reservations = ledger.filter((event) => event.type === "budget.reserved" && (event.data as { kind: string }).kind === "model").map((event) => (event.data as { tokens: number }).tokens);
    const largest = Math.max(...reservations);
    expect(fold.tenant.reserved.tokens).toBe(0);
    expect(fold.tenant.used.tokens).toBeGreaterThan(cap / 2);
    expect(fold.tenant.used.tokens).toBeLessThanOrEqual(cap + largest);
    // Sessions of both replicas made calls: the cap was shared.
    const bySession = new Set(ledger.map((event) => (event.data as { sessionId: string }).sessionId));
    expect(bySession.size).toBeGreaterThan(2);
  }, 180_000);
});
