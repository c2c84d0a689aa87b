/**
 * The workspace property (fast-check, real SQLite files and PostgreSQL): over random sequences of
 * file operations recorded as `write` or `edit` (targeted) or `bash` (scanned) calls, user edits the log has
 * not seen, checkouts with files and forks, every restore leaves the folder equal, byte for byte
 * (contents, modes, symlinks, deletions, empty folders), to the tree recorded at that entry, and
 * no user edit is ever lost (restoring the entry its checkpoint was anchored at gives it back).
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkspaceRecorder, type WorkspaceRecorder } from "../../src/harness/workspace/recorder.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import type { SessionHandle, SessionRepository } from "../../src/store/session-types.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { snapshotTree, type SnapshotNode } from "./tree-snapshot.ts";

const schemas = useTestSchemas("wsprop");
const logs: EventLog[] = [];
afterAll(async () => {
  for (const log of logs) await log.close();
});

const PATHS = ["a", "b", "d", "d/c", "d/e", "d/e/f", "ign/x", "g"] as const;
const pathArb = fc.constantFrom(...PATHS);
const bytesArb = fc.uint8Array({ minLength: 0, maxLength: 40 });

type Op =
  | { kind: "write"; path: string; data: Uint8Array; via: "write" | "edit" | "bash" | "user" }
  | { kind: "remove"; path: string; via: "bash" | "user" }
  | { kind: "rename"; from: string; to: string; via: "bash" | "user" }
  | { kind: "chmod"; path: string; mode: number; via: "bash" | "user" }
  | { kind: "symlink"; path: string; target: string; via: "bash" | "user" }
  | { kind: "mkdir"; path: string; via: "bash" | "user" }
  | { kind: "checkout"; pick: number; moveLeaf: boolean }
  | { kind: "fork"; pick: number };

const via = fc.constantFrom("bash" as const, "user" as const);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("write" as const), path: pathArb, data: bytesArb, via: fc.constantFrom("write" as const, "edit" as const, "bash" as const, "user" as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove" as const), path: pathArb, via }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("rename" as const), from: pathArb, to: pathArb, via }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("chmod" as const), path: pathArb, mode: fc.constantFrom(0o600, 0o644, 0o755, 0o700), via }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("symlink" as const), path: pathArb, target: fc.constantFrom("a", "../b", "nowhere", "d/c"), via }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("mkdir" as const), path: pathArb, via }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("checkout" as const), pick: fc.nat(), moveLeaf: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("fork" as const), pick: fc.nat() }) },
);

/** Applies a file operation; false when the file system refused it (nothing to record). */
function applyOp(root: string, op: Exclude<Op, { kind: "checkout" | "fork" }>): boolean {
  try {
    const at = (path: string) => join(root, path);
    const parent = (path: string) => mkdirSync(dirname(at(path)), { recursive: true });
    switch (op.kind) {
      case "write":
        // An edit changes an existing file in place (its mode and inode stay).
        if (op.via === "edit") {
          if (!lstatSync(at(op.path)).isFile()) return false;
          writeFileSync(at(op.path), op.data);
          return true;
        }
        parent(op.path);
        rmSync(at(op.path), { recursive: true, force: true });
        writeFileSync(at(op.path), op.data);
        return true;
      case "remove":
        rmSync(at(op.path), { recursive: true, force: true });
        return true;
      case "rename":
        if (op.from === op.to || op.to.startsWith(`${op.from}/`)) return false;
        parent(op.to);
        rmSync(at(op.to), { recursive: true, force: true });
        renameSync(at(op.from), at(op.to));
        return true;
      case "chmod":
        chmodSync(at(op.path), op.mode);
        return true;
      case "symlink":
        parent(op.path);
        rmSync(at(op.path), { recursive: true, force: true });
        symlinkSync(op.target, at(op.path));
        return true;
      case "mkdir":
        mkdirSync(at(op.path), { recursive: true });
        return true;
    }
  } catch {
    return false;
  }
}

/** True when every parent folder of `path` is a real folder (no symlink on the way). */
function realFolders(root: string, path: string): boolean {
  const parts = path.split("/");
  for (let depth = 1; depth < parts.length; depth++) {
    try {
      if (!lstatSync(join(root, ...parts.slice(0, depth))).isDirectory()) return false;
    } catch {
      return false;
    }
  }
  return true;
}

const snapshot = (root: string) => snapshotTree(root, { skip: (path) => path === "ign" || path.startsWith("ign/") });

interface Current {
  session: SessionHandle;
  recorder: WorkspaceRecorder;
}

function recorderOf(log: EventLog, session: SessionHandle, root: string): WorkspaceRecorder {
  return createWorkspaceRecorder({
    session,
    log,
    options: { root },
    append: async (events) => void (await session.appendEvents(events)),
    appendEntry: async (entry, events) => void (await session.appendEntries([entry], { extraEvents: events })),
  });
}

/** Records one tool call as the run would: the checkpoint and the result entry in one append, the checkpoint first. */
async function recordCall(current: Current, toolName: string, path: string | undefined, call: number): Promise<string> {
  const toolCallId = `call_${call}`;
  const checkpoint = await current.recorder.checkpointFor(toolName, path === undefined ? {} : { path }, toolCallId);
  const entryId = `e${call}`;
  const events = [
    ...(checkpoint ? [{ type: "workspace.checkpointed", data: { ...checkpoint, entryId, reason: "tool", toolCallId } }] : []),
    { type: "tool.ended", data: { toolCallId, toolName, isError: false, outcome: "succeeded", durationMs: 1, entryId } },
  ];
  await current.session.appendEntries([{ id: entryId, type: "custom", customType: "call", data: { toolName } }], { extraEvents: events });
  return entryId;
}

async function runSequence(log: EventLog, repo: SessionRepository, ops: Op[]): Promise<void> {
  const root = join(mkdtempSync(join(tmpdir(), "arbor-wsprop-")), "root");
  mkdirSync(join(root, "ign"), { recursive: true });
  writeFileSync(join(root, ".gitignore"), "ign/\n");
  writeFileSync(join(root, "a"), "start");
  const first = await repo.create({ cwd: root });
  let current: Current = { session: first, recorder: recorderOf(log, first, root) };
  await current.recorder.sync();
  // The tree each entry should have recorded (null: before the first entry).
  const expected = new Map<string | null, Record<string, SnapshotNode>>([[null, snapshot(root)]]);
  let call = 0;
  // After a library restore that did not move the leaf: the entry whose tree the folder holds.
  let held: { entryId: string | null } | undefined;
  for (const op of ops) {
    if (op.kind === "checkout" || op.kind === "fork") {
      const entries = current.session.view.getEntries().filter((entry) => expected.has(entry.id));
      const target = entries.length === 0 ? null : entries[op.pick % entries.length].id;
      const before = snapshot(root);
      const leaf = current.session.view.leafId;
      if (op.kind === "fork" && target !== null) {
        if (await current.recorder.sync()) expected.set(current.session.view.leafId, before);
        const fork = await repo.fork(current.session.id, { entryId: target });
        current = { session: fork, recorder: recorderOf(log, fork, root) };
        await current.recorder.restore(target, { record: false });
      } else {
        const result = await current.recorder.restore(target);
        // No user edit is lost: the unrecorded state is the tree of a new entry under the old leaf.
        // Nothing is saved when the folder holds the tree of the restored entry or of the leaf
        // (both are recorded already: a user who redoes the work saved at the leaf loses nothing).
        if (result.savedCheckpointId) expected.set(result.savedAt!, before);
        else expect([expected.get(held ? held.entryId : leaf), expected.get(leaf)]).toContainEqual(before);
        if (op.kind !== "checkout" || op.moveLeaf) await current.session.moveLeaf(target);
      }
      held = op.kind === "checkout" && !op.moveLeaf ? { entryId: target } : undefined;
      expect(snapshot(root)).toEqual(expected.get(target));
      continue;
    }
    const previous = current.session.view.leafId;
    if (!applyOp(root, op)) continue;
    if (op.via === "user") continue;
    const targeted = op.kind === "write" && (op.via === "write" || op.via === "edit");
    const path = targeted ? op.path : undefined;
    const entryId = await recordCall(current, targeted ? op.via : "bash", path, ++call);
    const disk = snapshot(root);
    if (path === undefined || !realFolders(root, path)) expected.set(entryId, disk);
    else {
      // A targeted write records its path and parent folders only (unrecorded user edits stay unrecorded).
      const next = { ...expected.get(held ? held.entryId : previous)! };
      const parts = path.split("/");
      for (let depth = 1; depth <= parts.length; depth++) {
        const prefix = parts.slice(0, depth).join("/");
        if (!disk[prefix]) continue;
        if (disk[prefix].kind !== "dir") for (const key of Object.keys(next)) if (key.startsWith(`${prefix}/`)) delete next[key];
        next[prefix] = disk[prefix];
      }
      expected.set(entryId, next);
    }
    held = undefined;
  }
  // Finally every recorded entry of the current session restores exactly.
  const leaf = current.session.view.leafId;
  const before = snapshot(root);
  const saved = await current.recorder.restore(leaf);
  if (saved.savedCheckpointId) expected.set(saved.savedAt!, before);
  for (const entry of current.session.view.getBranch()) {
    if (!expected.has(entry.id)) continue;
    await current.recorder.restore(entry.id);
    expect(snapshot(root)).toEqual(expected.get(entry.id));
  }
}

const backends: [string, () => EventLog][] = [
  ["SQLite file", () => createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-wsprop-db-")), "arbor.db") })],
  ["PostgreSQL", () => createPostgresEventLog({ connectionString: PG_URL, schema: schemas() })],
];

describe.each(backends)("workspace restores are byte-exact and lose no user edit (%s)", (_name, open) => {
  it("random write, edit, bash, user edit, checkout --files and fork sequences", async () => {
    const log = open();
    logs.push(log);
    const repo = createSessionRepository({ log });
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 18 }), async (ops) => {
        await runSequence(log, repo, ops);
      }),
      {
        numRuns: 40,
        // Found by a CI run: the user redoes the work a restore saved, then restores that entry.
        examples: [
          [[
            { kind: "mkdir", path: "d/e", via: "user" },
            { kind: "checkout", pick: 0, moveLeaf: false },
            { kind: "mkdir", path: "d/e", via: "user" },
            { kind: "checkout", pick: 0, moveLeaf: false },
          ]],
          // Found by a CI run: a recorded folder replaced by a link into itself (a loop); restoring under it must not follow the link.
          [[
            { kind: "write", path: "d/e/f", data: Uint8Array.from([]), via: "write" },
            { kind: "symlink", path: "d", target: "d/c", via: "bash" },
            { kind: "fork", pick: 0 },
          ]],
        ],
      },
    );
  }, 600_000);
});
