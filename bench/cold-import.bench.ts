/**
 * P11, cold import: the wall and CPU time of `import("arbor-agent")` (the built root entry,
 * `dist/index.js`, as an installed package loads) in a fresh Node process, against
 * `import("ai")` from the same node_modules, measured alternately in one run (15 pairs, medians).
 * Each child times only its own import (performance.now and process.cpuUsage deltas), so Node's
 * start-up is on neither side. Also prints how many modules each import loads. Goal: ≤ 2× on
 * both. Needs `npm run build` first.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, printGoal } from "./goal.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const arborEntry = pathToFileURL(join(repo, "dist", "index.js")).href;
/** `ai`'s ESM entry, as `import("ai")` resolves it from this repository. */
const aiEntry = import.meta.resolve("ai");

interface Sample {
  wall: number;
  cpu: number;
  modules: number;
}

/** Imports `url` in a fresh process and returns its own timings and module count. */
function coldImport(url: string): Sample {
  const script = `
    import { registerHooks } from "node:module";
    let modules = 0;
    registerHooks({ load(url, context, next) { modules++; return next(url, context); } });
    const cpu0 = process.cpuUsage(); const t0 = performance.now();
    await import(${JSON.stringify(url)});
    const wall = performance.now() - t0; const cpu = process.cpuUsage(cpu0);
    console.log(JSON.stringify({ wall, cpu: (cpu.user + cpu.system) / 1000, modules }));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: repo, encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop() ?? "{}") as Sample;
}

export default async function coldImportBench(): Promise<void> {
  if (!existsSync(join(repo, "dist", "index.js"))) throw new Error("cold-import bench: run `npm run build` first");
  const arbor: Sample[] = [];
  const ai: Sample[] = [];
  for (let round = 0; round < 15; round++) {
    if (round % 2 === 0) {
      arbor.push(coldImport(arborEntry));
      ai.push(coldImport(aiEntry));
    } else {
      ai.push(coldImport(aiEntry));
      arbor.push(coldImport(arborEntry));
    }
  }
  const pick = (samples: Sample[], key: keyof Sample) => median(samples.map((sample) => sample[key]));
  console.log("| import | median wall ms | median CPU ms | modules |");
  console.log("|---|---|---|---|");
  console.log(`| arbor-agent (dist) | ${pick(arbor, "wall").toFixed(0)} | ${pick(arbor, "cpu").toFixed(0)} | ${arbor[0].modules} |`);
  console.log(`| ai | ${pick(ai, "wall").toFixed(0)} | ${pick(ai, "cpu").toFixed(0)} | ${ai[0].modules} |`);
  for (const key of ["wall", "cpu"] as const) {
    const a = pick(arbor, key);
    const b = pick(ai, key);
    printGoal({ bench: `P11 cold import ${key}`, arbor: a, baseline: b, unit: `${key} ms`, ratio: a / b, goal: "<= 2" });
  }
}
