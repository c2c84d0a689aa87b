#!/usr/bin/env node
// The `arbor` command: runs the compiled CLI in dist/ (built by `npm run build`, which `prepare` runs on install).
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("arbor: dist/cli/main.js is missing; run `npm run build` in the package folder first\n");
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv);
