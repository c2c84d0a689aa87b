/**
 * A session that recorded its files, opened over PostgreSQL with an empty folder (another host,
 * another folder), first gets the tree recorded at its leaf written there, and ends with the same
 * files as the folder it ran in.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createCodingTools } from "../../src/adapters/tools/index.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { snapshotTree } from "./tree-snapshot.ts";

const schemas = useTestSchemas("wsother");

describe("workspace in another folder over PostgreSQL", () => {
  it("an empty folder gets the tree recorded at the leaf before anything runs", async () => {
    const schema = schemas();
    const base = mkdtempSync(join(tmpdir(), "arbor-ws-other-"));
    const first = join(base, "host-a");
    const second = join(base, "host-b");
    mkdirSync(join(first, "src"), { recursive: true });
    mkdirSync(second);
    writeFileSync(join(first, "src", "a.ts"), "export const a = 1;\n");
    const logA = createPostgresEventLog({ connectionString: PG_URL, schema });
    const harnessA = await createHarness({
      eventLog: logA,
      cwd: first,
      models: { main: scriptedModel([{ toolCalls: [{ id: "c1", name: "bash", arguments: { command: "printf 'b' > b.txt && chmod 755 b.txt && ln -s src/a.ts link" } }] }, { text: "done" }]) },
      tools: createCodingTools(createExecutionEnv({ root: first })),
      workspace: { root: first },
    });
    expect((await harnessA.prompt("work")).status).toBe("done");
    const sessionId = harnessA.session.id;
    await harnessA.close();
    await logA.close();

    const logB = createPostgresEventLog({ connectionString: PG_URL, schema });
    const harnessB = await createHarness({
      eventLog: logB,
      sessionId,
      cwd: second,
      models: { main: scriptedModel([{ text: "continued" }]) },
      tools: createCodingTools(createExecutionEnv({ root: second })),
      workspace: { root: second },
    });
    try {
      expect(snapshotTree(second)).toEqual(snapshotTree(first));
      expect(await harnessB.workspace!.diff()).toEqual([]);
      const events = await logB.readStream(`session-${sessionId}`);
      expect(events.filter((event) => event.type === "workspace.checkpointed").map((event) => (event.data as { reason: string }).reason)).toEqual(["baseline", "tool"]);
    } finally {
      await harnessB.close();
      await logB.close();
    }
  });
});
