/**
 * A child process for the PostgreSQL log tests: `node --import tsx pg-child.ts <url> <schema> <command> ...`.
 * - `append <stream> <count>`: appends <count> single-event batches, prints "done <lastPosition>";
 * - `own <stream>`: takes the stream's ownership, prints "owned <token>", then waits (to be killed);
 * - `tail`: subscribes from 0 and prints "<position> <commitTime>" for every event (lag bench).
 */
import { z } from "zod";
import { createDefaultEventRegistry } from "../../../src/store/events/index.ts";
import { createPostgresEventLog } from "../../../src/store/postgres/pg-event-log.ts";

const [url, schema, command, stream, count] = process.argv.slice(2);
const registry = createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string(), n: z.number().optional() }));
const log = createPostgresEventLog({ connectionString: url, schema, registry, poolSize: 2 });

if (command === "append") {
  let last = 0;
  for (let index = 0; index < Number(count); index++) {
    last = (await log.append(stream, [{ type: "note.added", data: { text: `child-${index}`, n: index } }])).lastGlobalPosition;
  }
  console.log(`done ${last}`);
  await log.close();
} else if (command === "own") {
  const lease = await log.ownership.acquire(stream, { pid: process.pid });
  console.log(`owned ${lease.token}`);
  setInterval(() => undefined, 60_000);
} else if (command === "tail") {
  log.subscribe({ fromPosition: 0 }).subscribe((event) => console.log(`${event.globalPosition} ${event.time} ${Date.now()}`));
  console.log("ready");
} else {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
