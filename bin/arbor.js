#!/usr/bin/env node
// The `arbor` command. Arbor ships TypeScript sources; tsx's loader runs them.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv);
