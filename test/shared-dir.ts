/**
 * Where the team's shared fixtures live: `../shared` beside the repository (as in
 * CI), or `ARBOR_SHARED_DIR`. Tests read recorded provider streams, real skills,
 * prompt templates, pi sessions and pi's oracle scripts from there.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function findSharedDir(): string {
  const candidates = [process.env.ARBOR_SHARED_DIR, resolve(repoRoot, "../shared"), "/work/shared"].filter(
    (candidate): candidate is string => typeof candidate === "string" && candidate.length > 0,
  );
  for (const candidate of candidates) if (existsSync(join(candidate, "real-inputs"))) return resolve(candidate);
  throw new Error(
    `The shared fixtures folder was not found (looked in ${candidates.join(", ")}). Clone the repository next to the team's shared/ folder, or set ARBOR_SHARED_DIR.`,
  );
}

/** Absolute path of the shared fixtures folder. */
export const SHARED_DIR = findSharedDir();

/** A path inside the shared fixtures folder. */
export function sharedPath(...parts: string[]): string {
  return join(SHARED_DIR, ...parts);
}
