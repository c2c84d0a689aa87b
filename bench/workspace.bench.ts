/**
 * workspace: the two goals of workspace checkpoints (`docs/workspace.md`).
 *
 * 1. Checkpoint bytes per text edit against the changed bytes (goal ≤ 2×): a 12 KiB source file
 *    gets 40 edits of one line each (about 60 changed bytes); each edit is checkpointed as the
 *    `edit` tool's would be, and the compressed bytes the blob store added are divided by the
 *    bytes the edit changed (old and new text of the line). Median over the edits.
 * 2. The bash scan on a 20,000-file tree with nothing changed (goal ≤ 150 ms): 200 folders of 100
 *    files, a `.gitignore` excluding one folder; a warm-up scan reads and hashes every file (twice,
 *    so the racily-clean window has passed), then the median of 9 scans of the unchanged tree
 *    (the recorder's full scan and comparison, no checkpoint to write), each alternated with a
 *    bare walk of the same tree (one readdir per folder, one lstat per entry: the floor of any
 *    scan); then again after 200 edit calls, each its own entry and checkpoint (the recorded tree
 *    is folded from more checkpoints).
 *
 * Real SQLite file log in a temp folder (tmpfs `/dev/shm` when present, or `ARBOR_BENCH_DIR`).
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createWorkspaceRecorder } from "../src/harness/workspace/recorder.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { median, printGoal } from "./goal.ts";

const base = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());

async function setup(root: string) {
  const dir = mkdtempSync(join(base, "arbor-bench-ws-"));
  const log = createSqliteEventLog({ path: join(dir, "arbor.db") });
  const session = await createSessionRepository({ log }).create({ cwd: root });
  const recorder = createWorkspaceRecorder({
    session,
    log,
    options: { root },
    append: async (events) => void (await session.appendEvents(events)),
    appendEntry: async (entry, events) => void (await session.appendEntries([entry], { extraEvents: events })),
  });
  let call = 0;
  /** One call's checkpoint committed as the run commits it. */
  const commit = async (toolName: string, args: Record<string, unknown>) => {
    const toolCallId = `c${++call}`;
    const checkpoint = await recorder.checkpointFor(toolName, args, toolCallId);
    const entryId = `e${call}`;
    await session.appendEntries([{ id: entryId, type: "custom", customType: "call" }], {
      extraEvents: [
        ...(checkpoint ? [{ type: "workspace.checkpointed", data: { ...checkpoint, entryId, reason: "tool", toolCallId } }] : []),
        { type: "tool.ended", data: { toolCallId, toolName, isError: false, outcome: "succeeded", durationMs: 1, entryId } },
      ],
    });
    return checkpoint;
  };
  return { dir, log, recorder, commit };
}

async function editBytes(): Promise<void> {
  const root = mkdtempSync(join(base, "arbor-bench-ws-root-"));
  const lines = Array.from({ length: 300 }, (_, i) => `export const value${i} = computeSomething(${i}, "label ${i}");`);
  writeFileSync(join(root, "source.ts"), `${lines.join("\n")}\n`);
  const { dir, log, recorder, commit } = await setup(root);
  await recorder.sync();
  const ratios: number[] = [];
  let stored = 0;
  let changed = 0;
  for (let edit = 0; edit < 40; edit++) {
    const at = (edit * 7) % lines.length;
    const before = lines[at];
    lines[at] = `export const value${at} = computeOther(${at * 3}, "edited ${edit}");`;
    writeFileSync(join(root, "source.ts"), `${lines.join("\n")}\n`);
    const checkpoint = await commit("edit", { path: "source.ts" });
    const bytes = Buffer.byteLength(before) + Buffer.byteLength(lines[at]);
    ratios.push((checkpoint?.storedBytes ?? 0) / bytes);
    stored += checkpoint?.storedBytes ?? 0;
    changed += bytes;
  }
  const size = readFileSync(join(root, "source.ts")).length;
  console.log(`checkpoint bytes per edit of a ${size}-byte file: median ${median(ratios).toFixed(2)}x the changed bytes (total ${stored} stored for ${changed} changed)`);
  printGoal({ bench: "workspace checkpoint bytes per text edit", arbor: stored / 40, baseline: changed / 40, unit: "bytes", ratio: median(ratios), goal: "<= 2" });
  await log.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
}

/** The floor of any scan: one readdir per folder and one lstat per entry, nothing else. */
function bareWalk(directory: string): number {
  let count = 0;
  for (const dirent of readdirSync(directory, { withFileTypes: true })) {
    const path = `${directory}/${dirent.name}`;
    const stat = lstatSync(path);
    count++;
    if (stat.isDirectory()) count += bareWalk(path);
  }
  return count;
}

async function scanTime(): Promise<void> {
  const root = mkdtempSync(join(base, "arbor-bench-ws-tree-"));
  writeFileSync(join(root, ".gitignore"), "ignored/\n*.log\n");
  const past = new Date(Date.now() - 60_000);
  for (let folder = 0; folder < 200; folder++) {
    const path = join(root, folder === 0 ? "ignored" : `pkg${folder}`, "src");
    mkdirSync(path, { recursive: true });
    for (let file = 0; file < 100; file++) {
      const name = join(path, `f${file}.ts`);
      writeFileSync(name, `export const x${file} = ${folder * 100 + file};\n`);
      utimesSync(name, past, past);
    }
  }
  const { dir, log, recorder, commit } = await setup(root);
  await recorder.sync();
  await recorder.checkpointFor("bash", {}, "warm");
  let round = 0;
  /** Median of 9 unchanged scans, each alternated with a bare walk of the same tree. */
  const measure = async () => {
    const scans: number[] = [];
    const walks: number[] = [];
    for (let i = 0; i < 9; i++) {
      let started = performance.now();
      const checkpoint = await recorder.checkpointFor("bash", {}, `scan${++round}`);
      scans.push(performance.now() - started);
      if (checkpoint) throw new Error("the unchanged tree produced a checkpoint");
      started = performance.now();
      bareWalk(root);
      walks.push(performance.now() - started);
    }
    return { scan: median(scans), walk: median(walks), scans };
  };
  const fresh = await measure();
  console.log(`bash scan of 20,000 files (19,900 tracked), nothing changed: median ${fresh.scan.toFixed(1)} ms (${fresh.scans.map((t) => t.toFixed(0)).join(", ")}); a bare readdir+lstat walk of the same tree, alternated: ${fresh.walk.toFixed(1)} ms`);
  printGoal({ bench: "workspace bash scan, 20k files unchanged", arbor: fresh.scan, baseline: 150, unit: "ms", ratio: fresh.scan / 150, goal: "<= 1" });
  // A longer session: 200 edit calls, each its own entry and checkpoint, then the same scan.
  for (let edit = 0; edit < 200; edit++) {
    const file = join(root, `pkg${1 + (edit % 199)}`, "src", `f${edit % 100}.ts`);
    writeFileSync(file, `export const edited = ${edit};\n`);
    utimesSync(file, past, past);
    await commit("edit", { path: file });
  }
  await recorder.checkpointFor("bash", {}, "warm-again");
  const later = await measure();
  console.log(`the same scan after 200 edit checkpoints: median ${later.scan.toFixed(1)} ms (${later.scans.map((t) => t.toFixed(0)).join(", ")}); bare walk ${later.walk.toFixed(1)} ms`);
  printGoal({ bench: "workspace bash scan, 20k files unchanged, after 200 edits", arbor: later.scan, baseline: 150, unit: "ms", ratio: later.scan / 150, goal: "<= 1" });
  await log.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
}

export default async function main(): Promise<void> {
  await editBytes();
  await scanTime();
}
