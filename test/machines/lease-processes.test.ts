/**
 * Leases and fencing with real processes, on SQLite and PostgreSQL: an owner process runs a
 * prompt whose replay-unsafe tool hangs, and is paused with SIGSTOP (alive, holding its
 * connection and its lock). Before its lease's TTL has passed, another process's
 * `harness.resume()` is refused with `RUN_OWNED`; once the TTL passed, it takes the run over and
 * the run ends `done`. The paused owner, continued with SIGCONT, finds its lease lost: its run
 * fails with `LEASE_LOST`, its tool is aborted, and it appends nothing more.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EventLog } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/openai-server.ts";
import { spawnTsx, type LineChild } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

const CHILD = "test/machines/fixtures/continuation-child.ts";
const newSchema = useTestSchemas("lease");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Backend = "sqlite" | "pg";

async function pausedOwner(backend: Backend, leaseTtlMs: number) {
  const server = await startOpenAIServer();
  closers.push(() => server.close());
  server.script(toolCallResponse([{ id: "call_u1", name: "launch", arguments: {} }]), textResponse("all done"));
  let log: EventLog;
  let where: string;
  if (backend === "pg") {
    where = newSchema();
    log = createPostgresEventLog({ connectionString: PG_URL, schema: where, poolSize: 2 });
  } else {
    where = join(mkdtempSync(join(tmpdir(), "arbor-lease-")), "arbor.db");
    log = createSqliteEventLog({ path: where });
  }
  closers.push(() => log.close());
  const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
  const effectsPath = join(mkdtempSync(join(tmpdir(), "arbor-effects-")), "effects.db");
  const env = { ...process.env, ARBOR_TEST_LEASE_TTL_MS: String(leaseTtlMs) };
  const args = (role: string) => [backend, where, session.id, server.url, effectsPath, role, "unsafe"];
  const owner = spawnTsx(CHILD, args("owner"), env);
  closers.push(async () => {
    owner.process.kill("SIGCONT");
    owner.process.kill("SIGKILL");
    await owner.exited;
  });
  expect(await owner.nextLine()).toBe("KILL_ME");
  owner.process.kill("SIGSTOP");
  const resume = async (role: "resume" | "resume-once"): Promise<{ status: string; code?: string }> => {
    const child: LineChild = spawnTsx(CHILD, args(role), env);
    const line = await child.nextLine();
    await child.exited;
    return JSON.parse(line) as { status: string; code?: string };
  };
  return { owner, resume, events: () => log.readStream(sessionStreamId(session.id)) };
}

describe.each<Backend>(["sqlite", "pg"])("leases and fencing of a paused owner (%s)", { timeout: 180_000 }, (backend) => {
  it("refuses the takeover while the paused owner's lease holds; takes over once the owner is gone", async () => {
    const { owner, resume, events } = await pausedOwner(backend, 120_000);
    expect(await resume("resume-once")).toMatchObject({ status: "rejected", code: "RUN_OWNED" });
    expect((await events()).filter((event) => event.type === "run.resumed")).toHaveLength(0);
    owner.process.kill("SIGKILL");
    await owner.exited;
    expect(await resume("resume")).toEqual({ status: "done" });
  });

  it("after the TTL another process takes the run over; the woken owner appends nothing and aborts its tool", async () => {
    const { owner, resume, events } = await pausedOwner(backend, 2_000);
    expect(await resume("resume")).toEqual({ status: "done" });
    const before = await events();
    owner.process.kill("SIGCONT");
    const lines = [await owner.nextLine(), await owner.nextLine()].sort();
    expect(lines[0]).toMatch(/^OUTCOME /);
    expect(JSON.parse(lines[0].slice("OUTCOME ".length))).toMatchObject({ status: "failed", code: "LEASE_LOST" });
    expect(lines[1]).toBe("TOOL_ABORTED");
    const after = await events();
    expect(after.map((event) => event.version)).toEqual(before.map((event) => event.version));
    const ended = after.filter((event) => event.type === "run.ended");
    expect(ended.map((event) => (event.data as { status: string }).status)).toEqual(["done"]);
    expect(after.filter((event) => event.type === "run.resumed")).toHaveLength(1);
  });
});
