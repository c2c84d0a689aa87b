/**
 * `npm run bench`: runs every bench/*.bench.ts in name order (or those named on
 * the command line). Each module's default export is an async function that
 * prints a table and one JSON line {"bench","arbor","baseline","unit","ratio"}.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((name) => name.endsWith(".bench.ts"))
  .filter((name) => only.length === 0 || only.some((wanted) => name.includes(wanted)))
  .sort();
for (const file of files) {
  console.log(`\n# ${file}`);
  const module = (await import(pathToFileURL(join(here, file)).href)) as { default: () => Promise<void> };
  await module.default();
}
