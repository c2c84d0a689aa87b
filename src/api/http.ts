/**
 * `arbor-agent/http`: Arbor over HTTP in the AI SDK UI message stream protocol (`useChat`, `DefaultChatTransport`), resumable from the log: the
 * Fetch-style handler, the Node `http` adapter, and the pure log-to-chunks projection that live and replayed streams share.
 * @example
 * import { createChatHandler, startChatServer } from "arbor-agent/http";
 * const server = await startChatServer({ handler: createChatHandler({ harness, token }), port: 3000 });
 */
export { createChatHandler, type ChatHandler, type ChatHandlerOptions } from "../http/chat-handler.ts";
export { DEFAULT_TENANT, type ChatAuthOptions } from "../http/auth.ts";
export { stderrServerLog, type ServerLog, type ServerLogEntry } from "../http/client-errors.ts";
export { createRunSlots, createMemoryRunSlotStore, type RunSlots, type RunSlotsOptions, type RunSlotStore } from "../http/run-slots.ts";
export { createPostgresRunSlotStore, type PostgresRunSlotStore } from "../store/postgres/pg-run-slots.ts";
export { startChatServer, toNodeListener, type ChatServer } from "../http/node-adapter.ts";
export { initialRunProjection, projectRun, projectRunEvent, type RunProjectionState, type RunProjectionStep } from "../http/ui-projection.ts";
export { uiMessagesOf } from "../http/ui-messages.ts";
export { UI_MESSAGE_STREAM_HEADERS } from "../http/sse.ts";
export { createMachineStates, type MachineKind, type MachineStateRecord, type MachineStates, type MachineStatesOptions } from "../machines/machine-states.ts";
