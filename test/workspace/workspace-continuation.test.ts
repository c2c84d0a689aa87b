/**
 * Durable execution with the workspace: a run in folder A over PostgreSQL is SIGKILLed while its
 * third model request is in flight (two tool calls committed with their checkpoints); a process
 * with an empty folder B (another host) continues it (`durability: "continue"`, then
 * `harness.resume`). The continuation first puts B at the last committed checkpoint (after its
 * takeover is logged, before the model is asked again), its next call works on those files,
 * and B ends with the same files as folder C, where the same script ran uninterrupted. And on the
 * same host, in the same folder, killed inside a bash call that had half done its work: the
 * continuation saves that half as unrecorded work (restorable), puts the folder at the last
 * committed checkpoint, and goes on from there.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createCodingTools } from "../../src/adapters/tools/index.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { hangResponse, startOpenAIServer, textResponse, toolCallResponse, type ScriptedResponse } from "../../src/testing/openai-server.ts";
import { spawnTsx } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { snapshotTree } from "./tree-snapshot.ts";

const CHILD = "test/workspace/fixtures/workspace-continue-child.ts";
const schemas = useTestSchemas("wscont");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const BEFORE_CRASH: ScriptedResponse[] = [
  toolCallResponse([{ id: "call_w", name: "write", arguments: { path: "src/a.ts", content: "export const a = 2;\n" } }]),
  toolCallResponse([{ id: "call_b", name: "bash", arguments: { command: "printf 'b' > b.txt && chmod 755 b.txt && ln -s src/a.ts link && mkdir -p empty/dir && rm gone.txt" } }]),
];
const AFTER_CRASH: ScriptedResponse[] = [
  toolCallResponse([{ id: "call_c", name: "bash", arguments: { command: "cat src/a.ts b.txt > both.txt && printf 'more\\n' >> src/a.ts && rmdir empty/dir" } }]),
  textResponse("all done"),
];

function seed(root: string): void {
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "gone.txt"), "to be removed\n");
}

const model = (url: string) => ({ model: createOpenAIModel({ modelId: "gpt-test", baseURL: url, apiKey: "test", api: "chat" }), contextWindow: 128_000 });

describe("a run continued in another folder over PostgreSQL", { timeout: 300_000 }, () => {
  it("first gets the last committed checkpoint's files and ends with the files of an uninterrupted run", async () => {
    const schema = schemas();
    const base = mkdtempSync(join(tmpdir(), "arbor-ws-cont-"));
    const [folderA, folderB, folderC] = ["host-a", "host-b", "uninterrupted"].map((name) => join(base, name));
    seed(folderA);
    seed(folderC);
    mkdirSync(folderB);
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
    closers.push(() => log.close());
    const session = await createSessionRepository({ log }).create({ cwd: folderA });

    // The uninterrupted run, for comparison: the same calls in folder C.
    const straight = await startOpenAIServer();
    closers.push(() => straight.close());
    straight.script(...BEFORE_CRASH, ...AFTER_CRASH);
    const harnessC = await createHarness({ eventLog: log, cwd: folderC, models: { main: model(straight.url) }, tools: createCodingTools(createExecutionEnv({ root: folderC })), workspace: { root: folderC } });
    expect((await harnessC.prompt("change the files")).status).toBe("done");
    await harnessC.close();

    // The owner in folder A, killed while its third model request is in flight.
    const server = await startOpenAIServer();
    closers.push(() => server.close());
    server.script(...BEFORE_CRASH, hangResponse(), ...AFTER_CRASH);
    const owner = spawnTsx(CHILD, [schema, session.id, server.url, folderA]);
    closers.push(async () => {
      owner.process.kill("SIGKILL");
      await owner.exited;
    });
    await server.waitForRequests(3);
    owner.process.kill("SIGKILL");
    expect((await owner.exited).signal, owner.stderr()).toBe("SIGKILL");
    const atCrash = snapshotTree(folderA);

    // Another host: an empty folder, a process that never saw the run.
    const harnessB = await createHarness({
      eventLog: createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 }),
      sessionId: session.id,
      cwd: folderB,
      models: { main: model(server.url) },
      tools: createCodingTools(createExecutionEnv({ root: folderB })),
      workspace: { root: folderB },
      durability: "continue",
    });
    closers.push(() => harnessB.close());
    const outcome = await harnessB.resume(session.id);
    expect(outcome.status, outcome.error).toBe("done");

    // The continuation's call read the files of the last committed checkpoint.
    expect(readFileSync(join(folderB, "both.txt"), "utf8")).toBe("export const a = 2;\nb");
    expect(snapshotTree(folderB)).toEqual(snapshotTree(folderC));
    expect(snapshotTree(folderB)).not.toEqual(atCrash);
    expect(await harnessB.workspace!.diff()).toEqual([]);

    // Order: the takeover, then the files, then the continued run's model call and its tool.
    const events = await log.readStream(sessionStreamId(session.id));
    const index = (predicate: (event: (typeof events)[number]) => boolean) => events.findIndex(predicate);
    const resumed = index((event) => event.type === "run.resumed");
    const restored = index((event) => event.type === "workspace.restored");
    const nextCall = index((event) => event.type === "tool.started" && (event.data as { toolCallId: string }).toolCallId === "call_c");
    expect(resumed).toBeGreaterThan(-1);
    expect(restored).toBeGreaterThan(resumed);
    expect(nextCall).toBeGreaterThan(restored);
    expect(events.filter((event) => event.type === "workspace.restored")).toHaveLength(1);
    // Every tool call's checkpoint is in the log, before its result.
    for (const callId of ["call_w", "call_b", "call_c"]) {
      const checkpoint = index((event) => event.type === "workspace.checkpointed" && (event.data as { toolCallId?: string }).toolCallId === callId);
      const ended = index((event) => event.type === "tool.ended" && (event.data as { toolCallId: string }).toolCallId === callId);
      expect(checkpoint, callId).toBeGreaterThan(-1);
      expect(ended).toBeGreaterThan(checkpoint);
    }
  });

  it("in the same folder: what the killed call half did is saved as user work, then the folder is at the last checkpoint", async () => {
    const schema = schemas();
    const folder = join(mkdtempSync(join(tmpdir(), "arbor-ws-cont-same-")), "repo");
    seed(folder);
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
    closers.push(() => log.close());
    const session = await createSessionRepository({ log }).create({ cwd: folder });
    const server = await startOpenAIServer();
    closers.push(() => server.close());
    server.script(
      BEFORE_CRASH[0],
      toolCallResponse([{ id: "call_half", name: "bash", arguments: { command: "printf 'half' > half.txt && touch started && sleep 600" } }]),
      toolCallResponse([{ id: "call_ls", name: "bash", arguments: { command: "ls > listing.txt" } }]),
      textResponse("all done"),
    );
    const owner = spawnTsx(CHILD, [schema, session.id, server.url, folder]);
    closers.push(async () => {
      owner.process.kill("SIGKILL");
      await owner.exited;
    });
    // Bounded by count, not by time: the marker appears once the command ran.
    for (let attempt = 0; attempt < 3000 && !existsSync(join(folder, "started")); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(join(folder, "started")), owner.stderr()).toBe(true);
    owner.process.kill("SIGKILL");
    expect((await owner.exited).signal).toBe("SIGKILL");

    const harness = await createHarness({
      eventLog: createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 }),
      sessionId: session.id,
      cwd: folder,
      models: { main: model(server.url) },
      tools: createCodingTools(createExecutionEnv({ root: folder })),
      workspace: { root: folder },
      durability: "continue",
    });
    closers.push(() => harness.close());
    const outcome = await harness.resume(session.id);
    expect(outcome.status, outcome.error).toBe("done");
    // The continued run saw the folder at the last checkpoint (after call_w), not the half-done call.
    expect(readFileSync(join(folder, "listing.txt"), "utf8").split("\n").filter(Boolean).sort()).toEqual(["gone.txt", "listing.txt", "src"]);
    expect(existsSync(join(folder, "half.txt"))).toBe(false);
    expect(await harness.workspace!.diff()).toEqual([]);

    const events = await log.readStream(sessionStreamId(session.id));
    const resumed = events.findIndex((event) => event.type === "run.resumed");
    const saved = events.findIndex((event) => event.type === "workspace.checkpointed" && (event.data as { reason: string }).reason === "user");
    expect(saved).toBeGreaterThan(resumed);
    const savedData = events[saved].data as { entryId: string; changes: { path: string }[] };
    expect(savedData.changes.map((change) => change.path).sort()).toEqual(["half.txt", "started"]);
    // Nothing is lost: the saved entry gives the half-done work back.
    await harness.workspace!.restore(savedData.entryId);
    expect(readFileSync(join(folder, "half.txt"), "utf8")).toBe("half");
  });
});
