/**
 * Runs the `arbor` CLI from the TypeScript sources (tests and development):
 * `node --import tsx scripts/arbor-dev.ts <args>`. `bin/arbor.js` runs the compiled build instead.
 */
import { main } from "../src/cli/main.ts";

process.exitCode = await main(process.argv);
