import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { runEventLogContract } from "./event-log.contract.ts";

runEventLogContract("in-memory", (registry) => createMemoryEventLog({ registry }));
