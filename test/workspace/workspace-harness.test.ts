/**
 * Workspace checkpoints through a real harness over a real SQLite file: write, edit and bash
 * calls commit their files' checkpoint with (before) their results, and a restore puts the
 * recorded tree back byte for byte, recording the user's unrecorded edits first.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createCodingTools } from "../../src/adapters/tools/index.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { snapshotTree } from "./tree-snapshot.ts";

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const call = (id: string, name: string, args: Record<string, unknown>) => ({ toolCalls: [{ id, name, arguments: args }] });

function fixture() {
  const base = mkdtempSync(join(tmpdir(), "arbor-workspace-"));
  const root = join(base, "repo");
  mkdirSync(join(root, "src"), { recursive: true });
  mkdirSync(join(root, "empty"));
  writeFileSync(join(root, "src", "a.txt"), "alpha\n");
  writeFileSync(join(root, "b.txt"), "beta\n");
  writeFileSync(join(root, ".gitignore"), "build/\n");
  mkdirSync(join(root, "build"));
  writeFileSync(join(root, "build", "out.js"), "ignored\n");
  symlinkSync("src/a.txt", join(root, "link"));
  return { root, db: join(base, "arbor.db") };
}

describe("workspace checkpoints (harness, SQLite file)", () => {
  it("write, edit and bash are checkpointed before their results; restore gives back every recorded tree byte for byte", async () => {
    const { root, db } = fixture();
    const initial = snapshotTree(root);
    const model = scriptedModel([
      call("c1", "write", { path: "src/new/n.txt", content: "new file\n" }),
      call("c2", "edit", { path: "b.txt", edits: [{ oldText: "beta", newText: "BETA" }] }),
      call("c3", "bash", { command: "rm src/a.txt && mkdir -p d/e && chmod 700 d && printf 'x' > d/e/x.sh && chmod 755 d/e/x.sh && ln -sf b.txt link && echo hi > build/more.js" }),
      { text: "done" },
    ]);
    const log = createSqliteEventLog({ path: db });
    const env = createExecutionEnv({ root });
    harness = await createHarness({ eventLog: log, cwd: root, models: { main: model }, tools: createCodingTools(env), workspace: { root } });
    const outcome = await harness.prompt("change things");
    expect(outcome.status).toBe("done");
    const session = harness.session;
    const events = await log.readStream(`session-${session.id}`);
    const types = events.map((event) => event.type);
    // The baseline first, then each call's checkpoint right before its tool.ended.
    const checkpoints = events.filter((event) => event.type === "workspace.checkpointed");
    expect(checkpoints.map((event) => (event.data as { reason: string }).reason)).toEqual(["baseline", "tool", "tool", "tool"]);
    for (const checkpoint of checkpoints.slice(1)) {
      const at = events.indexOf(checkpoint);
      expect(types[at + 1]).toBe("tool.ended");
      expect((events[at + 1].data as { toolCallId: string }).toolCallId).toBe((checkpoint.data as { toolCallId: string }).toolCallId);
    }
    const bashChanges = (checkpoints[3].data as { changes: { path: string; node: unknown }[] }).changes.map((change) => change.path);
    expect(bashChanges).toEqual(expect.arrayContaining(["src/a.txt", "d", "d/e", "d/e/x.sh", "link"]));
    expect(bashChanges.some((path) => path.startsWith("build"))).toBe(false);

    const final = snapshotTree(root);
    const entries = session.view.getBranch();
    const resultIds = entries.filter((entry) => entry.type === "message" && (entry as { message: { role: string } }).message.role === "toolResult").map((entry) => entry.id);
    const user = entries.find((entry) => entry.type === "message" && (entry as { message: { role: string } }).message.role === "user")!;

    // Back to before the run: the initial tree (ignored files untouched).
    const workspace = harness.workspace!;
    expect((await workspace.diff(user.id)).length).toBeGreaterThan(0);
    const back = await workspace.restore(user.id);
    expect(back.savedCheckpointId).toBeUndefined();
    expect(snapshotTree(root)).toEqual({ ...initial, "build/more.js": final["build/more.js"] });
    expect(await workspace.diff(user.id)).toEqual([]);

    // After the edit only.
    await workspace.restore(resultIds[1]);
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("BETA\n");
    expect(readFileSync(join(root, "src/new/n.txt"), "utf8")).toBe("new file\n");
    expect(readlinkSync(join(root, "link"))).toBe("src/a.txt");

    // A user edit is recorded before a restore, and that restore can be undone.
    writeFileSync(join(root, "b.txt"), "user edit\n");
    chmodSync(join(root, "b.txt"), 0o600);
    const edited = snapshotTree(root);
    const saved = await workspace.restore(resultIds[2]);
    expect(saved.savedCheckpointId).toBeDefined();
    expect(snapshotTree(root)).toEqual(final);
    // The edit is the tree of a new entry under the leaf of the time (which became the leaf): restoring it undoes the restore.
    expect(saved.savedAt).toBe(session.view.leafId);
    expect(session.view.getEntry(saved.savedAt!)).toMatchObject({ type: "custom", customType: "arbor.workspace" });
    await workspace.restore(saved.savedAt!);
    expect(snapshotTree(root)).toEqual(edited);
    expect(statSync(join(root, "b.txt")).mode & 0o777).toBe(0o600);
    await workspace.restore(resultIds[1]);
    // No earlier entry's tree changed.
    const tree = await workspace.tree(resultIds[1]);
    expect(tree.get("b.txt")).toMatchObject({ kind: "file", mode: 0o644 });
    expect(statSync(join(root, "empty")).isDirectory()).toBe(true);

    // Export writes the recorded tree into another folder.
    const out = mkdtempSync(join(tmpdir(), "arbor-export-"));
    await workspace.export(out, resultIds[2]);
    const exported = snapshotTree(out);
    const expected = Object.fromEntries(Object.entries(final).filter(([path]) => !path.startsWith("build")));
    expect(exported).toEqual(expected);
    rmSync(out, { recursive: true, force: true });
  });
});

describe("a recorded folder that became a symlink (harness, SQLite file)", () => {
  it("restoring an entry puts the folder and its recorded files back, never taking a file behind the link for one already there", async () => {
    const { root, db } = fixture();
    const model = scriptedModel([
      call("c1", "bash", { command: "mkdir -p d && printf 'recorded' > d/x.txt" }),
      call("c2", "bash", { command: "mkdir -p other && printf 'elsewhere' > other/x.txt && rm -rf d && ln -s other d" }),
      { text: "done" },
    ]);
    harness = await createHarness({ eventLog: createSqliteEventLog({ path: db }), cwd: root, models: { main: model }, tools: createCodingTools(createExecutionEnv({ root })), workspace: { root } });
    expect((await harness.prompt("change things")).status).toBe("done");
    const results = harness.session.view.getBranch().filter((entry) => entry.type === "message" && (entry as { message: { role: string } }).message.role === "toolResult");
    const restored = await harness.workspace!.restore(results[0].id);
    expect(restored.leftAlone).toEqual([]);
    expect(statSync(join(root, "d")).isDirectory()).toBe(true);
    expect(readFileSync(join(root, "d", "x.txt"), "utf8")).toBe("recorded");
  });
});
