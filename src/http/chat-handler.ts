/**
 * `createChatHandler`: Arbor over HTTP in the AI SDK UI message stream protocol, as a
 * Fetch-style `(Request) => Promise<Response>` handler (Node's `http` through
 * `node-adapter.ts`, or any framework that takes Fetch handlers).
 *
 * Contract (routes compatible with `DefaultChatTransport` / `useChat` defaults, `ai` 7;
 * the AI SDK's UI message stream protocol; the rest ours):
 * - `POST {base}/chat`, body `{ id, messages, trigger, messageId }`: the LAST message must be a
 *   user message (text and image file parts); the log holds the history, so earlier messages
 *   are ignored. Session `id` is created on first use (with the request's tenant), the prompt
 *   is run, and the run is streamed as UI message chunks with the exact headers
 *   (`sse.ts`); `409` while the session is busy; `400` naming what is wrong in the body;
 * - `GET {base}/chat/:id/stream`: `204` when the session has no active run (also for a session
 *   that does not exist yet, or is another tenant's: a new chat's `useChat({ resume: true })`); otherwise a full
 *   replay of the current run's message from the log, then live chunks until it ends; a last run
 *   that ended `interrupted` (its process died and crash recovery closed it, or the host shut
 *   down) with no run after it counts as the current one: its message is replayed, closed, to
 *   the `abort` that ends it;
 * - `POST {base}/chat/:id/stop`: aborts the active run and answers `{ stopped }` once the run
 *   has ended (the partial message is kept in the log);
 * - `POST {base}/chat/:id/steer`, body `{ text }`: queues a steering message for the run going
 *   in this process (`202 { queued: true }`); the run takes it at its next step and its stream
 *   shows it as a `steering-message` part; `409 NO_ACTIVE_RUN` when nothing runs (send a
 *   prompt instead), `400` for a missing or empty `text`;
 * - `GET {base}/sessions` (the tenant's sessions, newest first), `GET {base}/sessions/:id`
 *   (info, leaf, tree, context, stats and the UI messages), `GET {base}/sessions/:id/events?from=V`
 *   (server-sent events of the raw log after stream version V, then live; `Last-Event-ID` wins),
 *   `GET {base}/sessions/:id/machines` (server-sent events of the live agent, run and tool
 *   machine states from the `machineStates` recorder, content redacted; `404` without one);
 * - `DELETE {base}/sessions/:id` and `POST {base}/sessions/:id/fork` (`session-edit-routes.ts`);
 * - a request body over `maxBodyBytes` (default 10 MiB) is refused with `413 BODY_TOO_LARGE`
 *   before any of it is parsed; a path with malformed percent-encoding is a `400`;
 * - `GET /` and `GET /inspector`: the offline inspector page, its assets under `/inspector/assets/`
 *   (built by vite from `web/inspector/` into `dist/inspector/`, `inspector-assets.ts`; no data in it;
 *   `503` naming the build command when not built);
 * - every `{base}` route checks auth first (`401`, nothing read or written), then the
 *   session's tenant (`404` for an unknown or another tenant's session, nothing written);
 * - with only a `repository` the handler is read-only (sessions, events, resume of runs driven
 *   by another process through a shared log): `POST` routes answer `501`;
 * - `trigger: "regenerate-message"` regenerates the assistant message `messageId` (a run id;
 *   default the last run): the leaf moves to before the user message that started that run and
 *   that message is prompted again (a sibling branch; the old reply stays in the tree), streamed
 *   as a new message (`404` for an
 *   unknown message, `409` while busy);
 * - tool approvals (`docs/approval.md`): a call waiting for approval is a `tool-approval-request`
 *   part (approval id = tool call id) and the run ends `suspended`; a `POST` whose last message
 *   is the assistant message with `approval-responded` parts records each decision
 *   (`approve` / `deny`), continues the run, and streams the continuation of that same message
 *   (`404` for a call that does not wait, `409` for a conflicting decision);
 * - a chat `POST` (prompt or approval answers) with a W3C `traceparent` (and `tracestate`)
 *   header continues that trace: every span of the run it starts shares its trace id; an invalid
 *   one is reported (the library's `INVALID_TRACE_CONTEXT` warning, the span attribute
 *   `arbor.trace_context.invalid`, and the response header `arbor-trace-context-invalid`
 *   naming why) and the run starts a new trace;
 * - sessions opened by requests are closed after `idleSessionMs` unused and idle, and reopened
 *   from the log on the next request (`session-pool.ts`); with `openHarness` the harness is made
 *   on the first request that needs one (no empty session is created at start);
 * - errors are JSON `{ error: { code, message } }`; dropping a connection never stops a run.
 *
 * @example
 * ```ts
 * const handler = createChatHandler({ harness, token: process.env.ARBOR_TOKEN });
 * const response = await handler(new Request("http://localhost/api/sessions", { headers: { authorization: `Bearer ${token}` } }));
 * ```
 */
import { ApprovalConflictError, ApprovalNotFoundError, InvalidArgumentError, SessionBusyError, SessionNotFoundError } from "../core/errors.ts";
import type { AgentHarness } from "../harness/create-harness.ts";
import type { HarnessSession, PromptOptions } from "../harness/harness-session-types.ts";
import { findLiveStreamRun } from "../machines/run-lease.ts";
import { foldActivityAll } from "../store/session-activity.ts";
import type { EventLog } from "../store/event-log.ts";
import type { SessionRepository } from "../store/session-types.ts";
import { parseTraceContext } from "../telemetry/trace-context.ts";
import { resolveTenant, type ChatAuthOptions } from "./auth.ts";
import { parseChatRequest } from "./chat-request.ts";
import { inspectorResponse } from "./inspector-assets.ts";
import { jsonError, jsonResponse } from "./responses.ts";
import { regenerateTarget } from "./regenerate.ts";
import { lastInterruptedRunStart, lastRunStart, messageStart, runChunks$, sessionStream, sessionTenant } from "./run-stream.ts";
import type { MachineStates } from "../machines/machine-states.ts";
import { sessionDetail, sessionEvents, sessionList, sessionMachines } from "./session-routes.ts";
import { createSessionPool } from "./session-pool.ts";
import { deleteSession, forkSession } from "./session-edit-routes.ts";
import { DEFAULT_MAX_BODY_BYTES } from "./body-limit.ts";
import { createRunSlots, type RunSlots, type RunSlotsOptions } from "./run-slots.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { uiMessageStreamResponse } from "./sse.ts";
import { Observable } from "rxjs";
import type { UIMessageChunk } from "ai";

/** Options of {@link createChatHandler}. One of `harness` or `repository` is required (`repository` with `openHarness`). */
export interface ChatHandlerOptions extends ChatAuthOptions {
  /** Runs prompts: sessions are opened (and created) through it. */
  harness?: AgentHarness;
  /**
   * Instead of `harness` (with `repository`): creates the harness on first need, with that
   * request's session (which exists by then) as the harness's own session, so the service never
   * creates an empty session at start (`arbor serve`). Called once at a time: again if it
   * rejected, or after the handler closed that harness because its own session was idle
   * (`idleSessionMs`, below); each call must make a new harness.
   */
  openHarness?: (sessionId: string) => Promise<AgentHarness>;
  /**
   * Sessions opened by requests are disposed after this long unused (ms) with nothing running
   * or waiting, and reopened from the log on the next request (default 600 000; `0` keeps them
   * open). The own session of a harness made by `openHarness` is closed too, by closing that
   * harness, once it is the last session open; a `harness` you pass keeps its own session
   * open. See `session-pool.ts`.
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
  /**
   * The recorder the harness was created with (`createHarness({ inspect: machines })`): serves
   * `GET {base}/sessions/:id/machines` and the inspector's live machine states.
   */
  machineStates?: MachineStates;
  /** Serve the inspector page at `/` and `/inspector`, its assets under `/inspector/assets/` (default true). */
  inspector?: boolean;
  /** The largest request body accepted, in bytes (default 10 MiB = 10 485 760); larger ones get `413 BODY_TOO_LARGE`. */
  maxBodyBytes?: number;
  /**
   * Per-tenant run concurrency (`run-slots.ts`): every chat `POST` that starts a run (prompt,
   * approval answers, regenerate) takes a slot of the request's tenant before anything is written
   * and holds it until the run ends; beyond `maxConcurrentRuns` and the queue, `429 TOO_MANY_RUNS`
   * with `Retry-After`. Give a `store` from `createPostgresRunSlotStore` to hold it across replicas.
   */
  concurrency?: RunSlotsOptions | RunSlots;
}

/** A Fetch-style request handler. */
export type ChatHandler = (request: Request) => Promise<Response>;

/** The W3C trace context of a request, for the run it starts, and the response header reporting an invalid one. */
interface RequestTrace {
  options: PromptOptions;
  headers: Record<string, string>;
}

function traceOf(request: Request): RequestTrace {
  const traceparent = request.headers.get("traceparent");
  const tracestate = request.headers.get("tracestate");
  const options: PromptOptions = { ...(traceparent !== null ? { traceparent } : {}), ...(traceparent !== null && tracestate !== null ? { tracestate } : {}) };
  const { invalid } = parseTraceContext(options);
  return { options, headers: invalid === undefined ? {} : { "arbor-trace-context-invalid": invalid.replace(/[^\x20-\x7e]/g, "?") } };
}

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
 *
 * @throws InvalidArgumentError when neither a harness with a repository nor a repository is given.
 * @example
 * ```ts
 * const handler = createChatHandler({ harness });
 * ```
 */
export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
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
  /** The run slot of the chat POST being answered, taken over by the run it starts. */
  const heldSlot = new AsyncLocalStorage<{ release?: () => void }>();
  const keepAlive = options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs };

  /** The session if it exists and belongs to `tenant`; a 404 response otherwise. */
  const ownSession = async (id: string, tenant: string): Promise<Response | undefined> => {
    if (!SESSION_ID.test(id)) return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
    const owner = await sessionTenant(log, id);
    return owner === tenant ? undefined : jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
  };

  /** The active run's first version, after making sure a dead owner's run was recovered. */
  const activeRun = async (id: string): Promise<number | undefined> => {
    const streamId = sessionStream(id);
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

  const postChat = async (request: Request, tenant: string): Promise<Response> => {
    if (!writable) return jsonError(501, "NOT_SUPPORTED", "This service is read-only (created with a repository, no harness): it cannot run prompts.");
    const parsed = await parseChatRequest(request, maxBodyBytes);
    if ("error" in parsed) return parsed.error;
    const { id } = parsed;
    if (!SESSION_ID.test(id)) return jsonError(400, "INVALID_ARGUMENT", `"id" must be 1 to 128 letters, digits, ".", "_", ":" or "-" (starting with a letter or digit); got ${JSON.stringify(id).slice(0, 80)}.`);
    const owner = await sessionTenant(log, id);
    if (owner !== undefined && owner !== tenant) return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
    if ((parsed.kind === "approvals" || parsed.kind === "regenerate") && owner === undefined) return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
    const release = slots ? await slots.acquire(tenant) : () => undefined;
    if (!release) {
      return jsonError(429, "TOO_MANY_RUNS", `Tenant "${tenant}" has as many runs going as it may (maxConcurrentRuns) and its queue is full; retry later.`, { "retry-after": String(slots!.retryAfterSeconds) });
    }
    const holder: { release?: () => void } = { release };
    try {
      return await heldSlot.run(holder, () => startChat(request, parsed, owner, tenant));
    } finally {
      // Released here unless the run took the slot over (released when its outcome settles).
      holder.release?.();
    }
  };

  const startChat = async (request: Request, parsed: Exclude<Awaited<ReturnType<typeof parseChatRequest>>, { error: Response }>, owner: string | undefined, tenant: string): Promise<Response> => {
    const { id } = parsed;
    if (parsed.kind === "approvals") {
      if (owner === undefined) return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
      return answerApprovals(id, parsed.decisions, traceOf(request));
    }
    if (parsed.kind === "regenerate") {
      if (owner === undefined) return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
      return regenerate(id, parsed.messageId, traceOf(request));
    }
    const { prompt } = parsed;
    const trace = traceOf(request);
    if (owner === undefined) {
      try {
        await repository.create({ id, cwd, tenant });
      } catch (error) {
        // A concurrent first POST created it: use it if it is this tenant's.
        if ((await sessionTenant(log, id)) !== tenant) throw error;
      }
    }
    let session: HarnessSession;
    try {
      session = await pool.open(id);
    } catch (error) {
      if (SessionBusyError.isInstance(error)) return jsonError(409, "SESSION_BUSY", error.message);
      throw error;
    }
    return promptAndStream(id, () => session.prompt(prompt.text, prompt.images.length ? prompt.images : undefined, trace.options), trace);
  };

  /**
   * Starts `run` (a prompt or continue of the session) and streams the chunks of `chunks`, failing
   * the stream when the run fails before it starts; `409 SESSION_BUSY` when the slot is busy.
   */
  const streamRun = (run: () => Promise<unknown>, chunks: Observable<UIMessageChunk>, trace: RequestTrace): Response => {
    let outcome: Promise<unknown>;
    const holder = heldSlot.getStore();
    const slot = holder?.release;
    if (holder) holder.release = undefined;
    try {
      outcome = run();
      if (slot) void outcome.then(slot, slot);
    } catch (error) {
      slot?.();
      if (SessionBusyError.isInstance(error)) return jsonError(409, "SESSION_BUSY", error.message);
      throw error;
    }
    return uiMessageStreamResponse(followRun(chunks, outcome), { ...keepAlive, headers: trace.headers });
  };

  /** Prompts (`prompt` calls the session's `prompt`) and streams the run that starts after the stream's current version. */
  const promptAndStream = async (id: string, prompt: () => Promise<unknown>, trace: RequestTrace): Promise<Response> => {
    const before = await log.streamVersion(sessionStream(id));
    return streamRun(prompt, runChunks$(log, sessionStream(id), before), trace);
  };

  /** Records the decisions, continues the run and streams the continuation of its message. */
  const answerApprovals = async (id: string, decisions: { toolCallId: string; approved: boolean; reason?: string }[], trace: RequestTrace): Promise<Response> => {
    const session = await pool.open(id);
    try {
      for (const decision of decisions) {
        const options = decision.reason === undefined ? undefined : { reason: decision.reason };
        if (decision.approved) await session.approve(decision.toolCallId, options);
        else await session.deny(decision.toolCallId, options);
      }
    } catch (error) {
      if (ApprovalNotFoundError.isInstance(error)) return jsonError(404, error.code, error.message);
      if (ApprovalConflictError.isInstance(error) || SessionBusyError.isInstance(error)) return jsonError(409, error.code, error.message);
      throw error;
    }
    const streamId = sessionStream(id);
    const before = await log.streamVersion(streamId);
    const [lastStart] = (await log.readStream(streamId, { fromVersion: before, direction: "backwards" })).filter((event) => event.type === "run.started").map((event) => event.version);
    const first = lastStart === undefined ? before + 1 : await messageStart(log, streamId, lastStart);
    // A call still without a decision rejects continue() (ApprovalPendingError): the stream ends with that error.
    return streamRun(() => session.continue(trace.options), runChunks$(log, streamId, first - 1, { emitAfterVersion: before, endAfterVersion: before }), trace);
  };

  /**
   * `regenerate-message`: the leaf moves to before the user message that started run `messageId`
   * and that message is prompted again (a sibling branch; the old reply stays in the tree).
   */
  const regenerate = async (id: string, messageId: string | undefined, trace: RequestTrace): Promise<Response> => {
    const target = await regenerateTarget(log, sessionStream(id), messageId);
    if ("error" in target) return jsonError(target.status, target.code, target.error);
    let session: HarnessSession;
    try {
      session = await pool.open(id);
      await session.moveTo(target.entryId);
    } catch (error) {
      if (SessionBusyError.isInstance(error)) return jsonError(409, "SESSION_BUSY", error.message);
      throw error;
    }
    return promptAndStream(id, () => session.prompt({ ...target.message, timestamp: Date.now() }, undefined, trace.options), trace);
  };

  /** The chunks, or an error when the prompt fails before its run starts (a throwing hook has no run.ended to end the stream). */
  const followRun = (source: Observable<UIMessageChunk>, outcome: Promise<unknown>) =>
    new Observable<UIMessageChunk>((subscriber) => {
      let started = false;
      const inner = source.subscribe({
        next: (chunk) => {
          started = true;
          subscriber.next(chunk);
        },
        error: (error) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      outcome.catch((error: unknown) => {
        if (!started) subscriber.error(error);
      });
      return inner;
    });

  const resume = async (id: string, tenant: string): Promise<Response> => {
    // A new chat (no session yet) has no run to resume; another tenant's session looks the same.
    if ((await ownSession(id, tenant)) !== undefined) return new Response(null, { status: 204 });
    // After a crash (or a shutdown) the run was ended `interrupted`: a client that was reading it
    // gets its message once more, closed, instead of keeping an unfinished one.
    const start = (await activeRun(id)) ?? (await lastInterruptedRunStart(log, sessionStream(id)));
    if (start === undefined) return new Response(null, { status: 204 });
    // A resumed run (after approvals) continues an earlier run's message: replay it from there.
    const first = await messageStart(log, sessionStream(id), start);
    return uiMessageStreamResponse(runChunks$(log, sessionStream(id), first - 1, { endAfterVersion: start - 1 }), keepAlive);
  };

  const stop = async (id: string, tenant: string): Promise<Response> => {
    if (!writable) return jsonError(501, "NOT_SUPPORTED", "This service is read-only (created with a repository, no harness): it cannot stop runs.");
    const denied = await ownSession(id, tenant);
    if (denied) return denied;
    if ((await lastRunStart(log, sessionStream(id))) === undefined) return jsonResponse(200, { stopped: false });
    let session: HarnessSession;
    try {
      session = await pool.open(id);
    } catch (error) {
      if (SessionBusyError.isInstance(error)) return jsonError(409, "SESSION_BUSY", `${error.message} Stop it in the process that runs it.`);
      throw error;
    }
    session.abort("stopped by the client");
    await session.waitForIdle();
    return jsonResponse(200, { stopped: true });
  };

  const steer = async (id: string, tenant: string, request: Request): Promise<Response> => {
    if (!writable) return jsonError(501, "NOT_SUPPORTED", "This service is read-only (created with a repository, no harness): it cannot steer runs.");
    const denied = await ownSession(id, tenant);
    if (denied) return denied;
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return jsonError(400, "INVALID_ARGUMENT", "The body must be JSON: { \"text\": string }.");
    }
    const text = (body as { text?: unknown } | null)?.text;
    if (typeof text !== "string" || text.trim() === "") return jsonError(400, "INVALID_ARGUMENT", `"text" must be a non-empty string; got ${JSON.stringify(text) ?? "nothing"}.`);
    let session: HarnessSession;
    try {
      session = await pool.open(id);
    } catch (error) {
      if (SessionBusyError.isInstance(error)) return jsonError(409, "SESSION_BUSY", `${error.message} Steer it in the process that runs it.`);
      throw error;
    }
    if (session.getState().status !== "running") return jsonError(409, "NO_ACTIVE_RUN", `Session "${id}" has no run going; send the message as a prompt (POST ${base}/chat).`);
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
    if (parts[0] === "sessions" && method === "GET") {
      if (parts.length === 1) return sessionList(repository, tenant);
      const denied = parts.length >= 2 ? await ownSession(parts[1], tenant) : undefined;
      if (denied) return denied;
      if (parts.length === 2) return sessionDetail(repository, log, parts[1]);
      if (parts.length === 3 && parts[2] === "events") return sessionEvents(log, parts[1], request, keepAlive);
      if (parts.length === 3 && parts[2] === "machines") return sessionMachines(options.machineStates, parts[1], keepAlive);
    }
    return jsonError(404, "NOT_FOUND", `No route ${method} ${path}.`);
  };

  return async (request) => {
    try {
      return await route(request);
    } catch (error) {
      if (SessionNotFoundError.isInstance(error)) return jsonError(404, "SESSION_NOT_FOUND", error.message);
      const code = typeof (error as { code?: unknown }).code === "string" ? (error as { code: string }).code : "INTERNAL";
      return jsonError(500, code, error instanceof Error ? error.message : String(error));
    }
  };
}
