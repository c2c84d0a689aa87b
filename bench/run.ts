/**
 * `npm run bench`: runs every bench/*.bench.ts in name order (or those named on
 * the command line, by exact name: `load` runs `load.bench.ts` only, not `http-load`;
 * an unknown name is an error listing the known ones). Each module's default export
 * is an async function that prints a table and one goal line per goal (`goal.ts`).
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const known = readdirSync(here)
  .filter((name) => name.endsWith(".bench.ts"))
  .map((name) => name.slice(0, -".bench.ts".length))
  .sort();
const unknown = only.filter((wanted) => !known.includes(wanted.replace(/\.bench\.ts$/, "")));
if (unknown.length > 0) {
  console.error(`Unknown bench name(s): ${unknown.join(", ")}. Known: ${known.join(", ")}.`);
  process.exit(2);
}
const files = known.filter((name) => only.length === 0 || only.some((wanted) => wanted.replace(/\.bench\.ts$/, "") === name)).map((name) => `${name}.bench.ts`);
for (const file of files) {
  console.log(`\n# ${file}`);
  const module = (await import(pathToFileURL(join(here, file)).href)) as { default: () => Promise<void> };
  await module.default();
}
