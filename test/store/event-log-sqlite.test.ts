import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { runEventLogContract } from "./event-log.contract.ts";

const directory = mkdtempSync(join(tmpdir(), "arbor-log-contract-"));
let counter = 0;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

runEventLogContract("SQLite file", (registry) => createSqliteEventLog({ path: join(directory, `log-${++counter}.db`), registry }));
runEventLogContract("SQLite :memory:", (registry) => createSqliteEventLog({ path: ":memory:", registry }));
