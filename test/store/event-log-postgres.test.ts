import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { runEventLogContract } from "./event-log.contract.ts";
import { PG_URL, useTestSchemas } from "./pg-test-db.ts";

const schema = useTestSchemas("contract");

runEventLogContract("PostgreSQL", (registry) => createPostgresEventLog({ connectionString: PG_URL, schema: schema(), registry, poolSize: 2 }));
