/**
 * A child for the kill -9 test of the delete retention (`delta-deletion.test.ts`): on the SQLite
 * file `argv[2]` (retention `"delete"`), one message that ends and is kept, then one that streams
 * deltas, each append committed alone; prints `ready <version>` and waits to be killed.
 */
import { createSqliteEventLog } from "../../../src/store/sqlite/sqlite-event-log.ts";

const log = createSqliteEventLog({ path: process.argv[2], retention: { endedMessageDeltas: "delete" } });
const stream = "session-crash";
const metadata = { runId: "run-crash" };
const delta = (messageId: string, text: string) => ({ type: "message.delta", data: { messageId, contentIndex: 0, kind: "text", delta: text }, metadata });
await log.append(stream, [{ type: "message.started", data: { messageId: "m-done", role: "assistant" }, metadata }]);
for (const text of ["done ", "and ", "kept"]) await log.append(stream, [delta("m-done", text)]);
await log.append(stream, [{ type: "message.ended", data: { messageId: "m-done", role: "assistant", entryId: "e-done" }, metadata }]);
await log.append(stream, [{ type: "message.started", data: { messageId: "m-open", role: "assistant" }, metadata }]);
let last = 0;
for (const text of ["cut ", "off ", "mid ", "message"]) last = (await log.append(stream, [delta("m-open", text)])).nextExpectedVersion;
console.log(`ready ${last}`);
setInterval(() => undefined, 1000);
