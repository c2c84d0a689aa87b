/**
 * Child process of `control-follower.test.ts`: opens the log named on the command line (a
 * PostgreSQL schema or a SQLite file), writes one control request (JSON, argv[4]) with
 * `requestControl`, prints its event id and exits.
 */
import { requestControl } from "../../src/harness/control-requests.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";

const [db, schema, request] = process.argv.slice(2);
const log = db.startsWith("postgres") ? createPostgresEventLog({ connectionString: db, schema }) : createSqliteEventLog({ path: db });
const event = await requestControl(log, JSON.parse(request));
process.stdout.write(`${event.eventId}\n`);
await log.close();
