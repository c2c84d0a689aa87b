/**
 * Kill -9 mid-batch: a real child process runs a harness with workspace checkpoints; its bash call
 * changes files and the process is SIGKILLed before the call's result (and checkpoint) commit. On
 * reopening, crash recovery closes the call and the workspace recorder records what changed, so
 * the log and the folder agree: the tree recorded at the leaf is the folder, byte for byte, and no
 * result in the log lacks its files.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createCodingTools } from "../../src/adapters/tools/index.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/index.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { snapshotTree } from "./tree-snapshot.ts";

const CHILD = fileURLToPath(new URL("./fixtures/workspace-child.ts", import.meta.url));

describe("workspace after kill -9 mid-batch", { timeout: 300_000 }, () => {
  it("the recovered session records the files the killed call changed: log and folder agree", async () => {
    const base = mkdtempSync(join(tmpdir(), "arbor-ws-crash-"));
    const root = join(base, "root");
    mkdirSync(root);
    writeFileSync(join(root, "keep.txt"), "kept\n");
    writeFileSync(join(root, "gone.txt"), "to be removed\n");
    const db = join(base, "arbor.db");
    const setup = createSqliteEventLog({ path: db });
    const session = await createSessionRepository({ log: setup }).create({ cwd: root });
    await setup.close();

    const server = await startOpenAIServer();
    server.script(
      toolCallResponse([{ id: "call_sh", name: "bash", arguments: { command: "printf 'new' > made.txt && rm gone.txt && chmod 600 keep.txt && touch started && sleep 600" } }]),
      textResponse("never reached"),
    );
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, db, session.id, server.url, root], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    // Bounded by count, not by time: the marker appears once the command ran.
    for (let attempt = 0; attempt < 3000 && !existsSync(join(root, "started")); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(join(root, "started")), stderr).toBe(true);
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    await server.close();

    const afterCrash = snapshotTree(root);
    const harness = await createHarness({
      eventLogPath: db,
      sessionId: session.id,
      cwd: root,
      models: { main: scriptedModel([{ text: "ok" }]) },
      tools: createCodingTools(createExecutionEnv({ root })),
      workspace: { root },
    });
    try {
      const events = await harness.repository!.log.readStream(`session-${session.id}`);
      const types = events.map((event) => event.type);
      // The killed call was closed by recovery, without a checkpoint of its own.
      const ended = events.find((event) => event.type === "tool.ended" && (event.data as { toolCallId: string }).toolCallId === "call_sh");
      expect(ended).toBeDefined();
      expect(events.some((event) => event.type === "workspace.checkpointed" && (event.data as { toolCallId?: string }).toolCallId === "call_sh")).toBe(false);
      // Its changes were recorded on reopening, after the recovery.
      const saved = events.filter((event) => event.type === "workspace.checkpointed" && (event.data as { reason: string }).reason === "user");
      expect(saved).toHaveLength(1);
      expect(types.indexOf("workspace.checkpointed", types.indexOf("tool.ended"))).toBeGreaterThan(-1);
      const paths = (saved[0].data as { changes: { path: string }[] }).changes.map((change) => change.path).sort();
      expect(paths).toEqual(["gone.txt", "keep.txt", "made.txt", "started"]);
      // The log and the folder agree.
      expect(await harness.workspace!.diff()).toEqual([]);
      expect(snapshotTree(root)).toEqual(afterCrash);
      // And the files before the crash are still restorable from the log (the baseline).
      await harness.workspace!.restore(null);
      expect(readFileSync(join(root, "gone.txt"), "utf8")).toBe("to be removed\n");
      expect(existsSync(join(root, "made.txt"))).toBe(false);
    } finally {
      await harness.close();
    }
  });
});
