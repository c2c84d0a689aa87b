/**
 * CLI start-up cost (issue 11): CPU time (user + system, ms) of `arbor --help` from the compiled
 * build (`bin/arbor.js`, as an installed `arbor` runs) against `node -e 0`, measured alternately
 * in one run. Goal: `ratio` = arbor / node ≤ 2.5. Child CPU time comes from the shell's `times`
 * builtin (the children's rusage), so Node's own start-up is counted on both sides.
 * Needs `npm run build` first.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(repo, "bin", "arbor.js");

/** CPU ms of one run of `command`, from `times` (second line: children's user and system time). */
function childCpuMs(command: string): number {
  const out = execFileSync("sh", ["-c", `${command} >/dev/null 2>&1; times`], { encoding: "utf8" });
  const children = out.trim().split("\n")[1] ?? "";
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return (seconds[0] + seconds[1]) * 1000;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export default async function cliStartup(): Promise<void> {
  if (!existsSync(join(repo, "dist", "cli", "main.js"))) throw new Error("cli-startup bench: run `npm run build` first");
  const node = JSON.stringify(process.execPath);
  const arbor: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < 15; round++) {
    // Alternate the order so that neither side always runs on a warmer cache.
    if (round % 2 === 0) {
      arbor.push(childCpuMs(`${node} ${JSON.stringify(bin)} --help`));
      baseline.push(childCpuMs(`${node} -e 0`));
    } else {
      baseline.push(childCpuMs(`${node} -e 0`));
      arbor.push(childCpuMs(`${node} ${JSON.stringify(bin)} --help`));
    }
  }
  const a = median(arbor);
  const b = median(baseline);
  console.log("| command | median CPU ms (15 runs) |");
  console.log("|---|---|");
  console.log(`| arbor --help (dist) | ${a.toFixed(0)} |`);
  console.log(`| node -e 0 | ${b.toFixed(0)} |`);
  console.log(JSON.stringify({ bench: "cli-startup", arbor: a, baseline: b, unit: "cpu ms", ratio: Number((a / b).toFixed(3)), goal: "<= 2.5" }));
}
