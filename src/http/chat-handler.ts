/**
 * `createChatHandler`: Arbor over HTTP in the AI SDK UI message stream protocol, as a Fetch-style handler (routes compatible with `useChat`; the
 * list is in `docs/http.md`). The log holds the history, so a chat `POST` prompts only its last user message; runs stream as UI chunks, resume
 * from the log, stop and steer wherever they run; every `{base}` route checks auth, then the tenant. With only a `repository` it is read-only
 * (`POST` answers 501). Errors are JSON `{ error: { code, message } }`; dropping a connection never stops a run.
 */
import { InvalidArgumentError, SessionBusyError, SessionNotFoundError } from "../core/errors.ts";
import type { AgentHarness } from "../harness/create-harness.ts";
import type { HarnessSession } from "../harness/harness-session-types.ts";
import { checkHarnessBudget, type HarnessBudget } from "../harness/budget-options.ts";
import { findLiveStreamRun } from "../machines/run-lease.ts";
import { foldActivityAll } from "../store/session/session-activity.ts";
import type { EventLog } from "../store/event-log.ts";
import type { SessionRepository } from "../store/session-types.ts";
import { resolveTenant, type ChatAuthOptions } from "./auth.ts";
import { createChatPost } from "./chat-post.ts";
import { inspectorResponse } from "./inspector-assets.ts";
import { jsonError, jsonResponse } from "./responses.ts";
import { lastInterruptedRunStart, lastRunStart, messageStart, runChunks$, sessionTenant } from "./run-stream.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import type { MachineStates } from "../machines/machine-states.ts";
import { sessionDetail, sessionEvents, sessionList, sessionMachines } from "./session-routes.ts";
import { createSessionPool, type SessionPool } from "./session-pool.ts";
import { deleteSession, forkSession } from "./session-edit-routes.ts";
import { DEFAULT_MAX_BODY_BYTES, readLimitedJson } from "./body-limit.ts";
import { createRunSlots, type RunSlotsOptions, type RunSlots } from "./run-slots.ts";
import { uiMessageStreamResponse } from "./sse.ts";
import { stopRun } from "./stop-run.ts";
import { answerElicitationRoute, elicitationList } from "./elicitation-routes.ts";
import { requestControl } from "../harness/control-requests.ts";
import { clientError, stderrServerLog, type ServerLog } from "./client-errors.ts";

/** Options of {@link createChatHandler}. One of `harness` or `repository` is required (`repository` with `openHarness`). */
export interface ChatHandlerOptions extends ChatAuthOptions {
  /** Runs prompts: sessions are opened (and created) through it. */
  harness?: AgentHarness;
  /**
   * Instead of `harness` (with `repository`): creates the harness on first need, with that request's session (which exists by then) as the harness's
   * own session, so the service never creates an empty session at start (`arbor serve`). Called once at a time: again if it rejected, or after the
   * handler closed that harness because its own session was idle (`idleSessionMs`, below); each call must make a new harness.
   */
  openHarness?: (sessionId: string) => Promise<AgentHarness>;
  /**
   * Sessions opened by requests are disposed after this long unused (ms) with nothing running or waiting, and reopened from the log on the next
   * request (default 600 000; `0` keeps them open). The own session of a harness made by `openHarness` is closed too, by closing that harness, once
   * it is the last session open; a `harness` you pass keeps its own session open. See `session-pool.ts`.
   */
  idleSessionMs?: number;
  /** Called with the id of each session closed for being idle. */
  onSessionClosed?: (sessionId: string) => void;
  /** Without a harness: a read-only service over this repository; with `openHarness`: the repository that harness uses. */
  repository?: SessionRepository;
  /** Path prefix of the API routes (default `/api`). */
  basePath?: string;
  /** Working directory of sessions created by `POST {base}/chat` (default `process.cwd()`). */
  cwd?: string;
  /** Keep-alive comment interval of event streams, in ms (default 15 000). */
  keepAliveMs?: number;
  /** The recorder the harness was created with (`inspect: machines`): serves `GET {base}/sessions/:id/machines` and the inspector's live view. */
  machineStates?: MachineStates;
  /** Serve the inspector page at `/` and `/inspector`, its assets under `/inspector/assets/` (default true). */
  inspector?: boolean;
  /**
   * Where the service logs what it never tells a client: the owner (pid, host) of a session busy in another process, the message of an internal error
   * (default: one line on stderr, `stderrServerLog`). See `client-errors.ts`.
   */
  serverLog?: ServerLog;
  /** The largest request body accepted, in bytes (default 10 MiB = 10 485 760); larger ones get `413 BODY_TOO_LARGE`. */
  maxBodyBytes?: number;
  /**
   * Per-tenant run concurrency (`run-slots.ts`): every chat `POST` that starts a run (prompt, approval answers, regenerate) takes a slot of the
   * request's tenant before anything is written and holds it until the run ends; beyond `maxConcurrentRuns` and the queue, `429 TOO_MANY_RUNS` with
   * `Retry-After`. Give a `store` from `createPostgresRunSlotStore` to hold it across replicas.
   */
  concurrency?: RunSlotsOptions | RunSlots;
  /**
   * Spend limits of the runs chat `POST`s start (`docs/budgets.md`): `run`, `session`, and `tenant` (a budget, or a function of the request's tenant:
   * per-tenant limits), on top of the harness's `budget`. A run a limit stops streams an `error` chunk (`Budget exceeded: ...`) and `finish`
   * (`error`); its `run.ended` is `budget_exceeded`.
   */
  budget?: HarnessBudget;
}

/** A Fetch-style request handler. */
export type ChatHandler = (request: Request) => Promise<Response>;

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

function repositoryOf(options: ChatHandlerOptions): { repository: SessionRepository; log: EventLog } {
  const repository = options.repository ?? options.harness?.repository;
  const log = repository?.log;
  if (!repository || !log) {
    throw new InvalidArgumentError("createChatHandler(): pass a harness with a repository (eventLog, eventLogPath or repository), or a repository from createSessionRepository.");
  }
  return { repository, log };
}

/**
 * Creates the handler (see the module contract).
 * @throws InvalidArgumentError when neither a harness with a repository nor a repository is given.
 * @example
 * const handler = createChatHandler({ harness });
 */
export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  return createChatService(options).handler;
}

/**
 * The handler and the sessions it opens (`session-pool.ts`), for work of the same process that
 * must use the very sessions requests use (`arbor serve`'s worker: one live session per id).
 */
export function createChatService(options: ChatHandlerOptions): { handler: ChatHandler; sessions: Pick<SessionPool, "open"> } {
  const { repository, log } = repositoryOf(options);
  const base = (options.basePath ?? "/api").replace(/\/+$/, "");
  const writable = options.harness !== undefined || options.openHarness !== undefined;
  const pool = createSessionPool({
    ...(options.harness ? { harness: options.harness } : {}),
    ...(options.openHarness ? { openHarness: options.openHarness } : {}),
    ...(options.idleSessionMs !== undefined ? { idleMs: options.idleSessionMs } : {}),
    ...(options.onSessionClosed ? { onClosed: options.onSessionClosed } : {}),
  });
  const cwd = options.cwd ?? process.cwd();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new InvalidArgumentError(`createChatHandler(): maxBodyBytes must be a positive whole number of bytes; got ${String(options.maxBodyBytes)}.`);
  const edits = { repository, pool, writable, maxBodyBytes };
  const slots = options.concurrency === undefined ? undefined : "acquire" in options.concurrency ? options.concurrency : createRunSlots(options.concurrency);
  const keepAlive = options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs };
  if (options.budget !== undefined) checkHarnessBudget(options.budget, "createChatHandler(): budget");
  const serverLog = options.serverLog ?? stderrServerLog;
  /** A JSON error a client may see (no owner or connection detail: that goes to the server log). */
  const errorResponse = (error: unknown, sessionId?: string): Response => {
    const safe = clientError(error, { ...(sessionId !== undefined ? { sessionId } : {}), log: serverLog });
    return jsonError(safe.status, safe.code, safe.message);
  };

  /** The open session `id`, or the busy response when another process or operation holds it. */
  const openOrBusy = async (id: string): Promise<HarnessSession | Response> => {
    try {
      return await pool.open(id);
    } catch (error) {
      if (SessionBusyError.isInstance(error)) return errorResponse(error, id);
      throw error;
    }
  };

  /** The session if it exists and belongs to `tenant`; a 404 response otherwise. */
  const ownSession = async (id: string, tenant: string): Promise<Response | undefined> => {
    if (!SESSION_ID.test(id)) return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
    const owner = await sessionTenant(log, id);
    return owner === tenant ? undefined : jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
  };

  /** The active run's first version, after making sure a dead owner's run was recovered. */
  const activeRun = async (id: string): Promise<number | undefined> => {
    const streamId = sessionStreamId(id);
    const start = await lastRunStart(log, streamId);
    if (start === undefined) return undefined;
    if (writable) {
      try {
        // Live here: returned as is. Not open: opening runs crash recovery, which ends a dead run.
        await pool.open(id);
      } catch (error) {
        if (!SessionBusyError.isInstance(error)) throw error;
        return start; // driven by another live process: follow it through the log
      }
      return lastRunStart(log, streamId);
    }
    const events = await log.readStream(streamId, { fromVersion: start });
    const ownership = log.ownership;
    const live = await findLiveStreamRun(ownership && { isOwnedElsewhere: () => ownership.isOwnedElsewhere(streamId) }, foldActivityAll(events));
    return live ? start : undefined;
  };

  const postChat = createChatPost({
    log,
    repository,
    pool,
    writable,
    maxBodyBytes,
    cwd,
    keepAlive,
    serverLog,
    slots,
    budget: options.budget,
    errorResponse,
    openOrBusy,
  });

  const resume = async (id: string, tenant: string): Promise<Response> => {
    // A new chat (no session yet) has no run to resume; another tenant's session looks the same.
    if ((await ownSession(id, tenant)) !== undefined) return new Response(null, { status: 204 });
    // After a crash (or a shutdown) the run was ended `interrupted`: a client that was reading it
    // gets its message once more, closed, instead of keeping an unfinished one.
    const start = (await activeRun(id)) ?? (await lastInterruptedRunStart(log, sessionStreamId(id)));
    if (start === undefined) return new Response(null, { status: 204 });
    // A resumed run (after approvals) continues an earlier run's message: replay it from there.
    const first = await messageStart(log, sessionStreamId(id), start);
    return uiMessageStreamResponse(runChunks$(log, sessionStreamId(id), first - 1, { endAfterVersion: start - 1 }), keepAlive);
  };

  const stop = async (id: string, tenant: string): Promise<Response> => {
    if (!writable) return jsonError(501, "NOT_SUPPORTED", "This service is read-only (created with a repository, no harness): it cannot stop runs.");
    const denied = await ownSession(id, tenant);
    if (denied) return denied;
    // A dead owner's run is recovered by activeRun; a live one (here or in another process) gets a control request.
    const start = await activeRun(id);
    if (start === undefined) return jsonResponse(200, { stopped: false });
    const stopped = await stopRun(log, id, start, { reason: "stopped by the client" });
    if (!stopped) serverLog({ level: "warn", code: "STOP_TIMEOUT", sessionId: id, message: "The run did not end after the stop request; its owner may be gone (recovery ends it) or stuck." });
    return jsonResponse(200, { stopped });
  };

  const steer = async (id: string, tenant: string, request: Request): Promise<Response> => {
    if (!writable) return jsonError(501, "NOT_SUPPORTED", "This service is read-only (created with a repository, no harness): it cannot steer runs.");
    const denied = await ownSession(id, tenant);
    if (denied) return denied;
    const read = await readLimitedJson(request, maxBodyBytes, { expected: '{ "text": string }' });
    if ("error" in read) return read.error;
    const text = (read.value as { text?: unknown } | null)?.text;
    if (typeof text !== "string" || text.trim() === "") return jsonError(400, "INVALID_ARGUMENT", `"text" must be a non-empty string; got ${JSON.stringify(text) ?? "nothing"}.`);
    const session = await openOrBusy(id);
    if (session instanceof Response) return session;
    if (session.getState().status !== "running") {
      // A run going on in another process (an open run in the log): a control request its owner applies.
      if ((await lastRunStart(log, sessionStreamId(id))) === undefined) return jsonError(409, "NO_ACTIVE_RUN", `Session "${id}" has no run going; send the message as a prompt (POST ${base}/chat).`);
      await requestControl(log, { action: "steer", sessionId: id, text });
      return jsonResponse(202, { queued: true });
    }
    session.steer(text);
    return jsonResponse(202, { queued: true });
  };

  const route = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const path = url.pathname;
    if (options.inspector !== false && request.method === "GET") {
      const page = inspectorResponse(path, base);
      if (page) return page;
    }
    if (path !== base && !path.startsWith(`${base}/`)) return jsonError(404, "NOT_FOUND", `No route ${request.method} ${path}.`);
    const tenant = await resolveTenant(request, options);
    if (tenant === undefined) {
      return jsonError(401, "UNAUTHORIZED", "Missing or wrong bearer token (Authorization: Bearer <token>).", { "www-authenticate": 'Bearer realm="arbor"' });
    }
    let parts: string[];
    try {
      parts = path.slice(base.length).split("/").filter(Boolean).map(decodeURIComponent);
    } catch {
      return jsonError(400, "INVALID_ARGUMENT", `Malformed percent-encoding in the path ${JSON.stringify(path.slice(0, 200))}.`);
    }
    const method = request.method;
    if (parts[0] === "chat") {
      if (parts.length === 1 && method === "POST") return postChat(request, tenant);
      if (parts.length === 3 && parts[2] === "stream" && method === "GET") return resume(parts[1], tenant);
      if (parts.length === 3 && parts[2] === "stop" && method === "POST") return stop(parts[1], tenant);
      if (parts.length === 3 && parts[2] === "steer" && method === "POST") return steer(parts[1], tenant, request);
    }
    if (parts[0] === "sessions" && parts.length === 2 && method === "DELETE") return (await ownSession(parts[1], tenant)) ?? deleteSession(edits, parts[1]);
    if (parts[0] === "sessions" && parts.length === 3 && parts[2] === "fork" && method === "POST") return (await ownSession(parts[1], tenant)) ?? forkSession(edits, parts[1], request);
    if (parts[0] === "sessions" && parts.length === 4 && parts[2] === "elicitations" && method === "POST") return (await ownSession(parts[1], tenant)) ?? answerElicitationRoute(log, parts[1], parts[3], request, maxBodyBytes);
    if (parts[0] === "sessions" && method === "GET") {
      if (parts.length === 1) return sessionList(repository, tenant);
      const denied = parts.length >= 2 ? await ownSession(parts[1], tenant) : undefined;
      if (denied) return denied;
      if (parts.length === 2) return sessionDetail(repository, log, parts[1]);
      if (parts.length === 3 && parts[2] === "events") return sessionEvents(log, parts[1], tenant, request, keepAlive);
      if (parts.length === 3 && parts[2] === "machines") return sessionMachines(options.machineStates, parts[1], keepAlive);
      if (parts.length === 3 && parts[2] === "elicitations") return elicitationList(log, parts[1]);
    }
    return jsonError(404, "NOT_FOUND", `No route ${method} ${path}.`);
  };

  const handler: ChatHandler = async (request) => {
    try {
      return await route(request);
    } catch (error) {
      if (SessionNotFoundError.isInstance(error)) return jsonError(404, "SESSION_NOT_FOUND", error.message);
      return errorResponse(error);
    }
  };
  return { handler, sessions: { open: (id) => pool.open(id) } };
}
