/**
 * Child of bench/pg-lag.bench.ts: subscribes to the PostgreSQL log from position 0
 * and prints "<globalPosition> <Date.now()>" for every event it receives.
 * Usage: node --import tsx bench/pg-tail-child.ts <url> <schema>
 */
import { z } from "zod";
import { createDefaultEventRegistry } from "../src/store/events/index.ts";
import { createPostgresEventLog } from "../src/store/postgres/pg-event-log.ts";

const [url, schema] = process.argv.slice(2);
const registry = createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string() }));
const log = createPostgresEventLog({ connectionString: url, schema, registry, poolSize: 1 });
await log.headPosition();
log.subscribe({ fromPosition: 0 }).subscribe((event) => console.log(`${event.globalPosition} ${Date.now()}`));
console.log("ready");
