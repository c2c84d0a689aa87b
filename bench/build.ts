/**
 * The compiled build some benches measure (`arbor sessions` as users run it, the idle-memory
 * child): `ensureBuild()` runs `npm run build` when `dist/` is missing or older than a file
 * under `src/`, so a bench never measures stale code.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");

function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ unless it is newer than every source file. */
export function ensureBuild(): void {
  const built = statSync(join(repo, "dist", "cli", "main.js"), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (built > newestUnder(join(repo, "src"))) return;
  console.log("(building dist/ first: npm run build)");
  execFileSync("npm", ["run", "-s", "build"], { cwd: repo, stdio: "inherit" });
}
