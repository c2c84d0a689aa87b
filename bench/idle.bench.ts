/**
 * idle (goal P7): the resident memory (RSS) of one process holding 10,000 idle sessions with an
 * agent each (`repo.open` + `createAgent`, never prompted), against the goal of 200 MB. Each
 * figure is measured in its own child process (`idle-child.mjs`, over the compiled build in
 * dist/, built first when stale; tsx's transform adds a name property to every function, which
 * inflates closures), after the agents' start-up recovery and a full GC. The table also shows
 * a process that opens every session and keeps nothing (the baseline: modules, the log, SQLite's
 * cache) and one that keeps the session handles and views only, so the per-view and per-agent
 * costs can be read off. Rounds alternate the order of the three kinds; medians.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureBuild } from "./build.ts";
import { median, printGoal } from "./goal.ts";

const COUNT = 10_000;
const ROUNDS = 3;
const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "..", "dist");

interface Figures {
  what: string;
  rss: number;
  heap: number;
}

function child(path: string, what: string): Figures {
  const out = execFileSync(process.execPath, ["--expose-gc", join(here, "idle-child.mjs"), dist, path, String(COUNT), what], { encoding: "utf8", maxBuffer: 1 << 20 });
  return what === "prepare" ? { what, rss: 0, heap: 0 } : (JSON.parse(out.trim().split("\n").pop()!) as Figures);
}

export default async function idleBench(): Promise<void> {
  ensureBuild();
  const root = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  const dir = mkdtempSync(join(root, "arbor-idle-"));
  try {
    const path = join(dir, "idle.db");
    child(path, "prepare");
    const kinds = ["none", "views", "agents"];
    const results = new Map<string, Figures[]>(kinds.map((kind) => [kind, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? kinds : [...kinds].reverse();
      for (const kind of order) results.get(kind)!.push(child(path, kind));
    }
    const rss = (kind: string) => median(results.get(kind)!.map((figures) => figures.rss));
    const heap = (kind: string) => median(results.get(kind)!.map((figures) => figures.heap));
    console.table(
      kinds.map((kind) => ({ held: kind, "RSS MiB": rss(kind), "heap MiB": heap(kind) })),
    );
    console.log(
      `per session view: ${(((heap("views") - heap("none")) * 1024) / COUNT).toFixed(1)} KiB heap; per agent on top: ${(((heap("agents") - heap("views")) * 1024) / COUNT).toFixed(1)} KiB heap`,
    );
    const megabytes = (rss("agents") * 2 ** 20) / 1e6;
    printGoal({ bench: "P7 RSS of 10,000 idle sessions with agents / 200 MB", arbor: megabytes, baseline: 200, unit: "MB RSS (compiled build, one process; baseline = the goal's 200 MB)", ratio: megabytes / 200, goal: "<= 1.0" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
