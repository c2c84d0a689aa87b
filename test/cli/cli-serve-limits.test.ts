/**
 * `arbor serve` and `arbor run` limits from the command line (`docs/http.md`, `docs/budgets.md`):
 * `--max-concurrent-runs` / `--max-queued-runs` held across two real `arbor serve` processes on one
 * PostgreSQL schema (429 with Retry-After beyond the slot and the queue, a queued request served
 * once the slot comes free on the other replica); `arbor run --budget` ends a run over it with
 * exit code 4 and the refusal on stderr; bad values are refused naming the flag.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { startGatedModelServer, type GatedModelServer } from "../http/gated-model-server.ts";
import { postPrompt, sseChunks, startFleet, type Fleet } from "../http/replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";
import { budgetStreamId } from "../../src/store/budget-ledger.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";

const schema = useTestSchemas("serve_limits");

describe("arbor serve --max-concurrent-runs across two replicas on PostgreSQL", () => {
  let gated: GatedModelServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await gated?.close();
  });

  it("one run of the tenant at a time over both processes; one more waits in the queue; beyond it 429 with Retry-After", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: "first answer" }, { text: "queued answer" });
    fleet = await startFleet({ kind: "pg", schema: schema() }, gated.url, 2, {}, ["--max-concurrent-runs", "1", "--max-queued-runs", "1"]);
    const [a, b] = fleet.replicas;

    const first = postPrompt(a.url, "limits-1", "first");
    await gated.waitForRequests(1); // the tenant's one slot is held by replica A's run

    // Replica B gets two requests at once: whichever arrives first waits in B's queue for the
    // tenant's slot, and the other finds the queue full. The queued one cannot settle while A's run
    // holds the slot, so the first response to settle is the refusal.
    const tagged = (name: string, response: Promise<Response>) => response.then((settled) => ({ name, response: settled }));
    const pending = [tagged("limits-2", postPrompt(b.url, "limits-2", "second")), tagged("limits-3", postPrompt(b.url, "limits-3", "third"))];
    const firstSettled = await Promise.race(pending);
    const refused = firstSettled.response;
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("TOO_MANY_RUNS");
    const queued = pending[firstSettled.name === "limits-2" ? 1 : 0].then((settled) => settled.response);

    // A's run ends: its slot comes free, and B's queued request takes it.
    gated.release(0);
    const done = await first;
    expect(done.status).toBe(200);
    expect((await sseChunks(done)).at(-1)).toMatchObject({ type: "finish" });
    await gated.waitForRequests(2);
    gated.release(1);
    const served = await queued;
    expect(served.status).toBe(200);
    expect(JSON.stringify(await sseChunks(served))).toContain("queued answer");
  }, 180_000);

  it("refuses bad limits naming the flag, before anything opens", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    const bad = await runArbor(["--db", db, "serve", "--port", "0", "--max-concurrent-runs", "0"], { env: { ARBOR_TOKEN: "t" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-concurrent-runs: "0" must be a whole number ≥ 1.');
    const queue = await runArbor(["--db", db, "serve", "--port", "0", "--max-queued-runs", "3"], { env: { ARBOR_TOKEN: "t" } });
    expect(queue.code).toBe(2);
    expect(queue.stderr).toContain("--max-queued-runs needs --max-concurrent-runs");
    const budget = await runArbor(["--db", db, "serve", "--port", "0", "--tenant-budget", "cost=lots"], { env: { ARBOR_TOKEN: "t" } });
    expect(budget.code).toBe(2);
    expect(budget.stderr).toContain('--tenant-budget: cost="lots" must be a finite number ≥ 0.');
    const huge = await runArbor(["--db", db, "serve", "--port", "0", "--budget", "tokens=9007199254740993"], { env: { ARBOR_TOKEN: "t" } });
    expect(huge.code).toBe(2);
    expect(huge.stderr).toContain('--budget: tokens="9007199254740993" is above the largest supported value, 9007199254740991 (Number.MAX_SAFE_INTEGER).');
    const runs = await runArbor(["--db", db, "serve", "--port", "0", "--max-concurrent-runs", "9007199254740993"], { env: { ARBOR_TOKEN: "t" } });
    expect(runs.code).toBe(2);
    expect(runs.stderr).toContain('--max-concurrent-runs: "9007199254740993" is above the largest supported value, 9007199254740991 (Number.MAX_SAFE_INTEGER).');
  }, 60_000);
});

describe("arbor run --budget", () => {
  let model: OpenAIServer | undefined;
  afterEach(async () => {
    await model?.close();
  });

  it("a run over its budget stops: exit code 4, the refusal on stderr; a bad value exits 2 naming it", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "a.txt"), "alpha");
    writeFileSync(join(dir, "b.txt"), "beta");
    model = await startOpenAIServer();
    model.script(
      toolCallResponse([
        { id: "c1", name: "read", arguments: { path: "a.txt" } },
        { id: "c2", name: "read", arguments: { path: "b.txt" } },
      ]),
      textResponse("never"),
    );
    const env = { OPENAI_API_KEY: "sk-test" };
    const args = ["--db", join(dir, "arbor.db"), "run", "--model", "openai:gpt-test", "--base-url", model.url, "--cwd", dir];
    const result = await runArbor([...args, "--budget", "tool-calls=1,duration=10m", "read both files"], { env, cwd: dir });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/arbor: Budget exceeded: the run's maxToolCalls is 1/);
    expect(model.requests.length).toBe(1);

    const bad = await runArbor([...args, "--budget", "turns=2,tokns=5", "hello"], { env, cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--budget: unknown key "tokns"');
    expect(model.requests.length).toBe(1);
  }, 120_000);

  it("settles each model call at the usage the provider reported (not an estimate), so a token budget counts what was used", async () => {
    const dir = tempDir();
    model = await startOpenAIServer({ respond: () => textResponse("an answer", { usage: { input: 100_000, output: 5 } }) });
    const db = join(dir, "arbor.db");
    const result = await runArbor(["--db", db, "run", "--model", "openai:gpt-test", "--base-url", model.url, "--cwd", dir, "--budget", "tokens=150000", "hello"], { env: { OPENAI_API_KEY: "sk-test" }, cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const log = createSqliteEventLog({ path: db });
    try {
      const settled = (await log.readStream(budgetStreamId("default"))).filter((event) => event.type === "budget.settled");
      expect(settled.map((event) => event.data)).toEqual([expect.objectContaining({ tokens: 100_005, estimated: false })]);
    } finally {
      await log.close();
    }
  }, 120_000);

  it("a cost budget needs the model's prices: without --price it exits 2 naming it and writes nothing; with --price the run is priced and runs", async () => {
    const dir = tempDir();
    model = await startOpenAIServer();
    model.script(textResponse("priced answer"));
    const env = { OPENAI_API_KEY: "sk-test" };
    const db = join(dir, "arbor.db");
    const args = ["--db", db, "run", "--model", "openai:gpt-test", "--base-url", model.url, "--cwd", dir];
    const unpriced = await runArbor([...args, "--budget", "cost=0.50", "hello"], { env, cwd: dir });
    expect(unpriced.code).toBe(2);
    expect(unpriced.stderr).toContain("--budget limits cost, but the prices of openai:gpt-test are not known: give them with --price input=");
    expect(model.requests.length).toBe(0);
    expect(JSON.parse((await runArbor(["--db", db, "sessions", "--json"], { cwd: dir })).stdout)).toEqual([]);

    const badPrice = await runArbor([...args, "--price", "input=1", "--budget", "cost=0.50", "hello"], { env, cwd: dir });
    expect(badPrice.code).toBe(2);
    expect(badPrice.stderr).toContain('Bad --price "input=1": input= and output= are both required');

    const priced = await runArbor([...args, "--price", "input=0.15,output=0.6", "--budget", "cost=0.50", "hello"], { env, cwd: dir });
    expect(priced.stderr).not.toContain("--price");
    expect(priced.code).toBe(0);
    expect(priced.stdout).toContain("priced answer");
    expect(model.requests.length).toBe(1);
  }, 120_000);
});
