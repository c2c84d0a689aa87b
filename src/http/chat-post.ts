/**
 * `POST {base}/chat`, the route that starts runs: a prompt (its session created on the first one, as the request's tenant's), approval answers
 * (the run continued), or `regenerate-message`. It takes a run slot of the tenant first (`429 TOO_MANY_RUNS` beyond it), which the run takes
 * over until its outcome settles, and answers once the run started (`run-start.ts`): the run's UI chunks, or `409 SESSION_BUSY` before any
 * `200`. The caller checked auth; the tenant is checked here. Read-only services answer `501`.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { UIMessageChunk } from "ai";
import type { Observable } from "rxjs";
import { ApprovalConflictError, ApprovalNotFoundError, ArborError, SessionBusyError } from "../core/errors.ts";
import { throwError } from "../core/rx.ts";
import type { HarnessBudget } from "../harness/budget-options.ts";
import type { HarnessSession, PromptOptions } from "../harness/harness-session-types.ts";
import type { EventLog } from "../store/event-log.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import type { SessionRepository } from "../store/session-types.ts";
import { parseTraceContext } from "../telemetry/trace-context.ts";
import { parseChatRequest } from "./chat-request.ts";
import { clientSafeError, type ServerLog } from "./client-errors.ts";
import { regenerateTarget } from "./regenerate.ts";
import { jsonError } from "./responses.ts";
import type { RunSlots } from "./run-slots.ts";
import { awaitRunStart } from "./run-start.ts";
import { messageStart, runChunks$, sessionTenant } from "./run-stream.ts";
import type { SessionPool } from "./session-pool.ts";
import { uiMessageStreamResponse } from "./sse.ts";

/** What the chat `POST` needs of the handler (`chat-handler.ts`). */
export interface ChatPostContext {
  log: EventLog;
  repository: SessionRepository;
  pool: SessionPool;
  /** False for a read-only service (`501`). */
  writable: boolean;
  maxBodyBytes: number;
  /** Working directory of the sessions a prompt creates. */
  cwd: string;
  keepAlive: { keepAliveMs?: number };
  serverLog: ServerLog;
  /** The tenants' run slots, if the service limits them. */
  slots: RunSlots | undefined;
  /** The service's budgets, on top of the harness's (checked by the handler). */
  budget: HarnessBudget | undefined;
  /** A JSON error a client may see. */
  errorResponse(error: unknown, sessionId?: string): Response;
  /** The open session `id`, or the busy response when another process or operation holds it. */
  openOrBusy(id: string): Promise<HarnessSession | Response>;
}

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

/** The chat `POST` of a service (see the module contract), for a request whose tenant is `tenant`. */
export function createChatPost(context: ChatPostContext): (request: Request, tenant: string) => Promise<Response> {
  const { log, repository, pool, writable, maxBodyBytes, cwd, keepAlive, serverLog, slots, errorResponse, openOrBusy } = context;
  /** The run slot of the chat POST being answered, taken over by the run it starts. */
  const heldSlot = new AsyncLocalStorage<{ release?: () => void }>();
  /** The request's trace options plus the service's budget, resolved for the request's tenant. */
  const withBudget = (trace: RequestTrace, tenant: string): RequestTrace => {
    const budget = context.budget;
    if (!budget) return trace;
    const tenantBudget = typeof budget.tenant === "function" ? budget.tenant(tenant) : budget.tenant;
    return { ...trace, options: { ...trace.options, budget: { ...(budget.run ? { run: budget.run } : {}), ...(budget.session ? { session: budget.session } : {}), ...(tenantBudget ? { tenant: tenantBudget } : {}) } } };
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
    const release = slots ? await slots.acquire(tenant, request.signal) : () => undefined;
    // The client went away while its request waited in the queue: nothing runs (no response reaches anyone).
    if (!release && request.signal.aborted) return jsonError(499, "CLIENT_CLOSED", "The client closed the request while it waited for a run slot; nothing was run.");
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
      return answerApprovals(id, parsed.decisions, withBudget(traceOf(request), tenant));
    }
    if (parsed.kind === "regenerate") {
      if (owner === undefined) return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
      return regenerate(id, parsed.messageId, withBudget(traceOf(request), tenant));
    }
    const { prompt } = parsed;
    const trace = withBudget(traceOf(request), tenant);
    if (owner === undefined) {
      // Another process may have deleted it while it was open here: drop the stale copy first.
      try {
        await pool.release(id);
      } catch (error) {
        if (!SessionBusyError.isInstance(error)) throw error;
        return jsonError(404, "SESSION_NOT_FOUND", `Session "${id}" was deleted while this replica used it; retry in a moment or start a new chat with another id.`);
      }
      try {
        await repository.create({ id, cwd, tenant });
      } catch (error) {
        // A concurrent first POST created it: use it if it is this tenant's.
        if ((await sessionTenant(log, id)) !== tenant) throw error;
      }
    }
    const session = await openOrBusy(id);
    if (session instanceof Response) return session;
    await catchUp(id, session);
    return promptAndStream(id, () => session.prompt(prompt.text, prompt.images.length ? prompt.images : undefined, trace.options), trace);
  };

  /**
   * Starts `run` (a prompt or continue of the session) and streams the chunks of `chunks` once the run started (`run-start.ts`): `409 SESSION_BUSY`
   * as JSON, before any `200`, when the session is busy here or in another process; a run that fails before it starts is an `error` chunk
   * (client-safe, `client-errors.ts`).
   */
  const streamRun = async (id: string, run: () => Promise<unknown>, chunks: Observable<UIMessageChunk>, trace: RequestTrace, after?: number): Promise<Response> => {
    let outcome: Promise<unknown>;
    const holder = heldSlot.getStore();
    const slot = holder?.release;
    if (holder) holder.release = undefined;
    try {
      outcome = run();
      if (slot) void outcome.then(slot, slot);
    } catch (error) {
      slot?.();
      outcome = Promise.reject(error);
    }
    const start = await awaitRunStart(chunks, outcome, after === undefined ? undefined : (value) => neverLogged(id, after, value));
    if (start.kind === "started") return uiMessageStreamResponse(start.stream, { ...keepAlive, headers: trace.headers });
    if (SessionBusyError.isInstance(start.error)) return errorResponse(start.error, id);
    return uiMessageStreamResponse(throwError(() => clientSafeError(start.error, { sessionId: id, log: serverLog })), { ...keepAlive, headers: trace.headers });
  };

  /**
   * Prompts (`prompt` calls the session's `prompt`) and streams this process's run that starts after the stream's current version: a run another
   * replica starts meanwhile is not this prompt's (its `SessionBusyError` still becomes the `409`).
   */
  const promptAndStream = async (id: string, prompt: () => Promise<unknown>, trace: RequestTrace): Promise<Response> => {
    const before = await log.streamVersion(sessionStreamId(id));
    return streamRun(id, prompt, runChunks$(log, sessionStreamId(id), before, { ownRunOnly: true }), trace, before);
  };

  /**
   * Catches a pooled session up with the log when another process of the host wrote to it since (a label, a run, a decision): a stale handle's
   * first write is refused by design, which would cost the request. A session busy here is left as it is (the request then answers `409`).
   */
  const catchUp = async (id: string, session: HarnessSession): Promise<void> => {
    if (session.getState().operation !== "idle") return;
    if ((await log.streamVersion(sessionStreamId(id))) <= session.session.view.version) return;
    try {
      await session.reload();
    } catch (error) {
      if (!SessionBusyError.isInstance(error)) throw error;
    }
  };

  /**
   * The error of a run that ended without its `run.started` in the log after version `after` (its first write was refused, e.g. another process
   * wrote to the session first): no chunk of it will come, so the response says so instead of waiting. Undefined for a run that is in the log.
   */
  const neverLogged = async (id: string, after: number, outcome: unknown): Promise<Error | undefined> => {
    const { runId, status, error, code } = (outcome ?? {}) as { runId?: unknown; status?: unknown; error?: unknown; code?: unknown };
    if (typeof runId !== "string" || status !== "failed") return undefined;
    const events = await log.readStream(sessionStreamId(id), { fromVersion: after + 1 });
    if (events.some((event) => isEventOfType(event, "run.started") && event.data.runId === runId)) return undefined;
    const message = typeof error === "string" ? error : "The run failed before it started.";
    return new ArborError(typeof code === "string" ? code : "RUN_FAILED", `${message} The prompt was not recorded; send it again.`);
  };

  /** Records the decisions, continues the run and streams the continuation of its message. */
  const answerApprovals = async (id: string, decisions: { toolCallId: string; approved: boolean; reason?: string }[], trace: RequestTrace): Promise<Response> => {
    const session = await pool.open(id);
    try {
      await catchUp(id, session);
      for (const decision of decisions) {
        const options = decision.reason === undefined ? undefined : { reason: decision.reason };
        if (decision.approved) await session.approve(decision.toolCallId, options);
        else await session.deny(decision.toolCallId, options);
      }
    } catch (error) {
      if (ApprovalNotFoundError.isInstance(error)) return jsonError(404, error.code, error.message);
      if (SessionBusyError.isInstance(error)) return errorResponse(error, id);
      if (ApprovalConflictError.isInstance(error)) return jsonError(409, error.code, error.message);
      throw error;
    }
    const streamId = sessionStreamId(id);
    const before = await log.streamVersion(streamId);
    const [lastStart] = (await log.readStream(streamId, { fromVersion: before, direction: "backwards" })).filter((event) => event.type === "run.started").map((event) => event.version);
    const first = lastStart === undefined ? before + 1 : await messageStart(log, streamId, lastStart);
    // A call still without a decision rejects continue() (ApprovalPendingError): the stream ends with that error.
    return streamRun(id, () => session.continue(trace.options), runChunks$(log, streamId, first - 1, { emitAfterVersion: before, endAfterVersion: before }), trace);
  };

  /**
   * `regenerate-message`: the leaf moves to before the user message that started run `messageId`
   * and that message is prompted again (a sibling branch; the old reply stays in the tree).
   */
  const regenerate = async (id: string, messageId: string | undefined, trace: RequestTrace): Promise<Response> => {
    const target = await regenerateTarget(log, sessionStreamId(id), messageId);
    if ("error" in target) return jsonError(target.status, target.code, target.error);
    let session: HarnessSession;
    try {
      session = await pool.open(id);
      await catchUp(id, session);
      await session.moveTo(target.entryId);
    } catch (error) {
      if (SessionBusyError.isInstance(error)) return errorResponse(error, id);
      throw error;
    }
    return promptAndStream(id, () => session.prompt({ ...target.message, timestamp: Date.now() }, undefined, trace.options), trace);
  };

  return postChat;
}
