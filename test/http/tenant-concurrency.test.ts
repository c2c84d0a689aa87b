/**
 * Per-tenant run concurrency: `maxConcurrentRuns` with a bounded queue in one process, and the
 * same limit held across two real replica processes sharing PostgreSQL (slots as advisory locks):
 * beyond it `429` with `Retry-After`, another tenant unaffected, a freed slot usable again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createRunSlots } from "../../src/http/run-slots.ts";
import { spawnTsx, type LineChild } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { userMessage } from "./service.ts";

const nextSchema = useTestSchemas("slots");

describe("createRunSlots in one process", () => {
  it("admits maxConcurrentRuns per tenant, queues up to maxQueuedRuns in order, refuses beyond", async () => {
    const slots = createRunSlots({ maxConcurrentRuns: 2, maxQueuedRuns: 1, retryAfterSeconds: 5, pollMs: 10 });
    const first = await slots.acquire("a");
    const second = await slots.acquire("a");
    expect(first && second).toBeTruthy();
    const queued = slots.acquire("a");
    expect(await slots.acquire("a")).toBeUndefined(); // the queue is full
    expect(await slots.acquire("b")).toBeTruthy(); // another tenant has its own slots
    first!();
    first!(); // idempotent
    const third = await queued;
    expect(third).toBeTruthy();
    expect(slots.retryAfterSeconds).toBe(5);
    expect(() => createRunSlots({ maxConcurrentRuns: 0 })).toThrow(/maxConcurrentRuns must be a whole number ≥ 1/);
  });
});

describe("a queued request whose client goes away", () => {
  it("leaves the queue (its place goes to the next request) and never gets a slot", async () => {
    const slots = createRunSlots({ maxConcurrentRuns: 1, maxQueuedRuns: 1, pollMs: 10 });
    const running = await slots.acquire("a");
    expect(running).toBeTruthy();
    const gone = new AbortController();
    const abandoned = slots.acquire("a", gone.signal);
    gone.abort();
    expect(await abandoned).toBeUndefined();
    // Its place in the queue is free again: the next request waits instead of being refused.
    const next = slots.acquire("a");
    running!();
    expect(await next).toBeTruthy();
  });
});

describe("per-tenant concurrency across two replicas on PostgreSQL", () => {
  let model: GatedModelServer | undefined;
  const children: LineChild[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.process.kill("SIGKILL");
      await child.exited;
    }
    await model?.close();
  });

  it("holds maxConcurrentRuns of a tenant over both processes: 429 with Retry-After beyond it", async () => {
    model = await startGatedModelServer();
    model.script({ text: "held answer one" }, { text: "answer for b" }, { text: "answer after the slot came free" });
    const schema = nextSchema();
    const replica = () => {
      const child = spawnTsx("test/http/concurrency-replica.ts", [PG_URL, schema, model!.url, "1"]);
      children.push(child);
      return child.nextLine();
    };
    const [urlA, urlB] = await Promise.all([replica(), replica()]);
    const post = (url: string, token: string, id: string) =>
      fetch(`${url}/api/chat`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ id, messages: [userMessage(`hello ${id}`)], trigger: "submit-message" }) });

    const held = await post(urlA, "token-a", "a-one");
    expect(held.status).toBe(200);
    const heldBody = held.text();
    await model.waitForRequests(1); // tenant a's run is in its model call on replica A

    const refused = await post(urlB, "token-a", "a-two");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("3");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("TOO_MANY_RUNS");

    // Tenant b is not limited by a's run.
    const other = await post(urlB, "token-b", "b-one");
    expect(other.status).toBe(200);
    await model.waitForRequests(2);
    model.release(1);
    expect(await other.text()).toContain("answer for b");

    model.release(0);
    expect(await heldBody).toContain("held answer one");
    // The slot is free again once a's run ended, on the other replica too.
    let again: Response | undefined;
    for (let attempt = 0; attempt < 100; attempt++) {
      again = await post(urlB, "token-a", "a-two");
      if (again.status !== 429) break;
      await again.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(again!.status).toBe(200);
    await model.waitForRequests(3);
    model.release(2);
    expect(await again!.text()).toContain("answer after the slot came free");
  }, 120_000);
});
