/**
 * `createHarness(options)`: validates every option first (`HarnessConfigError` naming the field), builds the model registry, tools and resources,
 * opens the storage (default SQLite at `<cwd>/.arbor/arbor.db`, never overwriting a non-Arbor file) and drives one session, plus ways to open
 * others (one live session per id). MCP servers connect before the session opens; control requests for its sessions are followed. `close()`
 * disposes the sessions, MCP servers and a log it opened; it is idempotent.
 */
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { PromptTemplateDiagnostic } from "../adapters/prompt-templates/types.ts";
import type { SkillDiagnostic } from "../adapters/skills/types.ts";
import { connectMcpServers } from "../adapters/mcp/connect.ts";
import { McpConfigError } from "../adapters/mcp/errors.ts";
import { createElicitationWaiter } from "./elicitations.ts";
import type { McpConnection } from "../adapters/mcp/types.ts";
import { HarnessConfigError, InvalidStateError, ToolDefinitionError } from "../core/errors.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { AgentTool } from "../core/tools.ts";
import { createAgent } from "../machines/agent.ts";
import type { Durability, ResumeRunOptions, RunOutcome } from "../machines/agent-types.ts";
import type { EventLog } from "../store/event-log.ts";
import { isArborEventType, type ArborEventHandler, type ArborEventType } from "../store/events/catalogue.ts";
import { createRedactingEventLog } from "../store/log/redacting-event-log.ts";
import { createSessionRepository } from "../store/session-repository.ts";
import type { SessionHandle, SessionRepository } from "../store/session-types.ts";
import { createSqliteEventLog } from "../store/sqlite/sqlite-event-log.ts";
import { openSnapshotsBeside, type SessionSnapshotStore } from "../store/session/session-snapshots.ts";
import { followControl } from "./control-follower.ts";
import { createHarnessSessions, type HarnessSessions } from "./sessions-events.ts";
import { createHarnessSession, type HarnessSession, type HarnessSessionConfig, type LoadedResources } from "./harness-session.ts";
import type { HandlerOf, HookName } from "./hook-types.ts";
import { createModelRegistry, type ModelRegistry } from "./model-registry.ts";
import { createRedactingModel } from "./redacting-model.ts";
import { createSecretRedactor } from "../core/secrets.ts";
import { validateHarnessOptions, type AgentHarnessOptions } from "./options.ts";
import { defineJsonSchemaTool } from "../adapters/tools/tool-schema.ts";
import type { AgentMessage } from "../core/messages.ts";
import { startBackground, type StartedTask, type StartOptions } from "./background-start.ts";

/** The harness: its primary session's API plus the shared registry, storage and resources. */
export interface AgentHarness<ModelName extends string = string> extends HarnessSession {
  /** The models by name (`ModelName`: the keys of `models` when they are literal types). */
  readonly registry: ModelRegistry<ModelName>;
  /** Undefined when the harness was given a bare session. */
  readonly repository: SessionRepository | undefined;
  /** The tools, normalized (JSON-Schema tools carry an ajv `validate`). */
  readonly tools: AgentTool<any, any, any>[];
  /** The MCP connection made for `mcpServers` (diagnostics, server states), if any. */
  readonly mcp: McpConnection | undefined;
  /** Problems found loading `skillPaths` / `promptTemplatePaths`. */
  readonly resourceDiagnostics: { skills: SkillDiagnostic[]; promptTemplates: PromptTemplateDiagnostic[] };
  /**
   * Opens another session of the repository with the same configuration, after its crash recovery finished. A session already open in this harness
   * (not disposed) is returned as it is (the harness itself for its own session), so there is one writer per session. Rejects with
   * SessionNotFoundError; InvalidStateError after `close()`. `overrides` replace the harness's system prompt, tools and model for this session, as in
   * `createSession` (a typed agent resuming its session uses them); they do not apply to a session already open.
   */
  openSession(id: string, overrides?: Omit<CreateSessionOptions, "cwd" | "metadata">): Promise<HarnessSession>;
  /** Creates another session with the same configuration; `systemPrompt`, `tools` and `model` replace the harness's for it (typed agents). */
  createSession(options?: CreateSessionOptions): Promise<HarnessSession>;
  /**
   * Continues session `sessionId`'s unfinished run from the log alone, also in a process that never saw it (durable execution, `docs/durability.md`):
   * opens the session here (as `openSession`), logs `run.resumed` with the previous owner and `options.reason`, and runs the loop on from where the
   * log says it stopped. Resolves with the run's outcome, as `prompt()` does (a run whose calls wait for approval resolves `suspended`). Rejects with
   * `NothingToResumeError` (code `NOTHING_TO_RESUME`: no unfinished run), `RunOwnedError` (`RUN_OWNED`: a live process holds the run's lease; retry
   * after its TTL), `SessionNotFoundError`, `SessionBusyError` (this process is running something else there).
   * @example
   * const outcome = await harness.resume(sessionId, { reason: "replica b took over" });
   * console.log(outcome.status); // "done"
   */
  resume(sessionId: string, options?: ResumeRunOptions): Promise<RunOutcome>;
  /**
   * Registers a hook handler on every session of this harness: the open ones and those opened later (after their option handlers). A session's own
   * `on()` affects that session only. Returns a function that removes it everywhere.
   */
  on<Name extends HookName>(name: Name, handler: HandlerOf<Name>): () => void;
  /** With a logged event type (`"tool.ended"`): events of the harness's own session, as `HarnessSession.on`. */
  on<Type extends ArborEventType>(type: Type, handler: ArborEventHandler<Type>): () => void;
  /**
   * Every session at once: `sessions.events$` is the logged events of all sessions of the harness's tenant (every tenant's for a harness without
   * `tenant`), whichever process runs them, live; `sessions.events({ fromPosition, tenant })` from a log position. `events$` of the harness itself is
   * its own session's only. See `sessions-events.ts`.
   */
  readonly sessions: HarnessSessions;
  /**
   * A background run (ours): commits `input` as a prompt task of session `sessionId` (`task.queued`, `src/harness/background-start.ts`) and resolves
   * at once, without running it; any worker of the fleet (`createWorker`, `arbor worker`, `arbor serve`) runs it, not before `options.startAt` (a
   * scheduled prompt). Rejects with SessionNotFoundError (the session is not in this harness's repository or tenant), InvalidArgumentError (empty
   * prompt, bad `startAt`, used `taskId`), HarnessConfigError without a repository.
   */
  start(sessionId: string, input: string | AgentMessage | AgentMessage[], options?: StartOptions): Promise<StartedTask>;
  /** Disposes every session opened here, then closes a log the harness opened. Idempotent (a later call waits for the first). */
  close(): Promise<void>;
}

/**
 * Options of `AgentHarness.createSession`: where the session works, its metadata (in `session.created`), and per-session replacements of the
 * harness's system prompt, tools and model (ours).
 * @example
 * await harness.createSession({ metadata: { agent: "triage" }, systemPrompt: "You triage.", tools: [], model: createOpenAIModel({ modelId: "gpt-4o-mini" }) });
 */
export interface CreateSessionOptions {
  cwd?: string;
  metadata?: Record<string, unknown>;
  /** Replaces the harness's `systemPrompt` (same forms). */
  systemPrompt?: AgentHarnessOptions["systemPrompt"];
  /** Replaces the harness's tools (JSON-Schema tools get an ajv `validate`); `activeToolNames` is all of them. */
  tools?: AgentHarnessOptions["tools"];
  /** The session's model: a registry name, or a client used for this session only. */
  model?: string | ModelClient;
}

/** A registry that also holds `client` under `name`, the default (one session's own model). */
function withSessionModel(registry: ModelRegistry, name: string, client: ModelClient): ModelRegistry {
  const entry = { name, client };
  return {
    names: () => [name, ...registry.names().filter((other) => other !== name)],
    defaultName: name,
    get: (wanted) => (wanted === name ? entry : registry.get(wanted)),
    findByModel: (model) => (client.provider === model.provider && client.modelId === model.modelId ? entry : registry.findByModel(model)),
  };
}

function normalizeTools(tools: AgentHarnessOptions["tools"]): AgentTool<any, any, any>[] {
  return (tools ?? []).map((tool, index) => {
    try {
      return defineJsonSchemaTool(tool);
    } catch (error) {
      if (!ToolDefinitionError.isInstance(error)) throw error;
      throw new HarnessConfigError(`Invalid harness option "tools[${index}].parameters": ${error.message}`, {
        cause: error,
        details: { field: `tools[${index}].parameters` },
      });
    }
  });
}

/** The given resources plus those loaded from paths; the loaders (and yaml) are imported only when paths are given. */
async function loadResources(options: AgentHarnessOptions): Promise<{ resources: LoadedResources; diagnostics: AgentHarness["resourceDiagnostics"] }> {
  const given = options.resources ?? {};
  const skills = given.skillPaths?.length ? (await import("../adapters/skills/load-skills.ts")).loadSkills(given.skillPaths) : { skills: [], diagnostics: [] };
  const templates = given.promptTemplatePaths?.length
    ? (await import("../adapters/prompt-templates/load-prompt-templates.ts")).loadPromptTemplates(given.promptTemplatePaths)
    : { templates: [], diagnostics: [] };
  return {
    resources: { skills: [...(given.skills ?? []), ...skills.skills], promptTemplates: [...(given.promptTemplates ?? []), ...templates.templates] },
    diagnostics: { skills: skills.diagnostics, promptTemplates: templates.diagnostics },
  };
}

/**
 * Creates a harness (see the module contract).
 *
 * `model` must be a key of `models`: with a literal registry that is checked at compile time.
 * @throws (rejects) HarnessConfigError naming the field; SessionNotFoundError for an unknown
 *   `sessionId`; LogSchemaError when `eventLogPath` is not an Arbor log.
 * @example
 * const harness = await createHarness({ models: { main: model }, eventLog: createMemoryEventLog() });
 * await harness.prompt("hello");
 */
export async function createHarness<const ModelName extends string = string, const ToolName extends string = string>(
  typedOptions: AgentHarnessOptions<ModelName, ToolName>,
): Promise<AgentHarness<ModelName>> {
  const options: AgentHarnessOptions = typedOptions;
  validateHarnessOptions(options);
  const registry = createModelRegistry(options.models, options.model, options.secrets);
  const ownTools = normalizeTools(options.tools);
  const { resources, diagnostics } = await loadResources(options);

  let ownedLog: EventLog | undefined;
  let ownedSnapshots: SessionSnapshotStore | undefined;
  const closeOwned = async (): Promise<void> => {
    await ownedLog?.close();
    ownedSnapshots?.close();
    ownedSnapshots = undefined;
  };
  let repository: SessionRepository | undefined = options.repository;
  if (!options.session && !repository) {
    let log = options.eventLog;
    if (!log) {
      const path = resolve(options.eventLogPath ?? join(options.cwd ?? process.cwd(), ".arbor", "arbor.db"));
      mkdirSync(dirname(path), { recursive: true });
      const encryption = options.eventLogEncryption;
      log = ownedLog = createSqliteEventLog({ path, retention: { endedMessageDeltas: options.eventLogRetention ?? "delete" }, ...(encryption ? { encryption } : {}) });
      // Snapshots hold entries in clear: an encrypted log keeps none.
      if (!encryption) ownedSnapshots = openSnapshotsBeside(path);
    }
    repository = createSessionRepository({
      log: options.secrets?.length ? createRedactingEventLog(log, options.secrets) : log,
      ...(ownedSnapshots ? { snapshots: ownedSnapshots } : {}),
      ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    });
  }

  let mcp: McpConnection | undefined;
  if (options.mcpServers?.length) {
    try {
      const log = repository?.log;
      mcp = await connectMcpServers(options.mcpServers, {
        auth: { ...(options.tenant !== undefined ? { tenant: options.tenant } : {}), ...options.mcpAuth },
        ...(log ? { onElicitation: createElicitationWaiter({ log, locate: (toolCallId) => locateCall(toolCallId), ...options.elicitation }) } : {}),
      });
    } catch (error) {
      await closeOwned();
      if (!McpConfigError.isInstance(error)) throw error;
      throw new HarnessConfigError(`Invalid harness option "mcpServers": ${error.message}`, { cause: error, details: { field: "mcpServers" } });
    }
  }
  const tools = [...ownTools, ...(mcp?.tools ?? [])];

  const sessions = new Set<HarnessSession>();
  /** The open session (and run) whose open run holds `toolCallId`: where an MCP server's request for input belongs. */
  const locateCall = (toolCallId: string | undefined): { sessionId: string; runId?: string } | undefined => {
    const running = [...sessions].flatMap((session) => {
      const run = session.session.view.activity.openRun;
      return run ? [{ session, run }] : [];
    });
    const found = running.find(({ run }) => toolCallId !== undefined && run.calls.some((call) => call.id === toolCallId)) ?? (running.length === 1 ? running[0] : undefined);
    return found ? { sessionId: found.session.id, runId: found.run.runId } : undefined;
  };
  /** The open sessions by id, for the control follower (requests from other processes). */
  const byId = new Map<string, HarnessSession>();
  const sharedHandlers: { name: HookName; handler: HandlerOf<any>; removers: (() => void)[] }[] = [];
  let closed = false;
  let closing: Promise<void> | undefined;
  /** The live (not disposed) session per id, or its opening: a second open returns it. */
  const live = new Map<string, Promise<HarnessSession>>();
  const cwdOf = (handle: SessionHandle) => options.cwd ?? handle.view.info.cwd ?? process.cwd();
  const open = async (handle: SessionHandle, overrides: Omit<CreateSessionOptions, "cwd" | "metadata"> = {}, durability?: Durability): Promise<HarnessSession> => {
    let sessionOptions = durability ? { ...options, durability } : options;
    let sessionRegistry = registry;
    let sessionTools = tools;
    if (overrides.systemPrompt !== undefined) sessionOptions = { ...sessionOptions, systemPrompt: overrides.systemPrompt };
    if (overrides.tools !== undefined) {
      sessionTools = normalizeTools(overrides.tools);
      const { activeToolNames: _all, ...rest } = sessionOptions;
      sessionOptions = rest;
    }
    if (typeof overrides.model === "string") {
      registry.get(overrides.model);
      sessionOptions = { ...sessionOptions, model: overrides.model };
    } else if (overrides.model !== undefined) {
      const name = `session:${handle.id}`;
      // The harness's secrets are redacted from a session's own model too, as from the registry's.
      sessionRegistry = withSessionModel(registry, name, createRedactingModel(overrides.model, createSecretRedactor(options.secrets ?? [])));
      sessionOptions = { ...sessionOptions, model: name };
    }
    const config: HarnessSessionConfig = {
      options: sessionOptions,
      registry: sessionRegistry,
      tools: sessionTools,
      resources,
      cwd: cwdOf(handle),
      repository,
      createAgent,
      openForked: (forked) => open(forked, overrides),
    };
    const harnessSession = await createHarnessSession(config, handle);
    for (const shared of sharedHandlers) shared.removers.push(harnessSession.on(shared.name, shared.handler));
    sessions.add(harnessSession);
    byId.set(handle.id, harnessSession);
    live.set(handle.id, Promise.resolve(harnessSession));
    const dispose = harnessSession.dispose;
    harnessSession.dispose = async () => {
      sessions.delete(harnessSession);
      if (byId.get(handle.id) === harnessSession) byId.delete(handle.id);
      if (live.get(handle.id) !== undefined && (await live.get(handle.id)) === harnessSession) live.delete(handle.id);
      await dispose();
    };
    return harnessSession;
  };

  // Stop, steer, follow-up, approve and deny written by any process that shares the log.
  const follower = repository ? followControl(repository.log, (id) => byId.get(id)) : undefined;
  await follower?.ready;

  let primary: HarnessSession;
  try {
    const primaryHandle =
      options.session ??
      (options.sessionId !== undefined
        ? await repository!.open(options.sessionId)
        : await repository!.create({ cwd: options.cwd ?? process.cwd() }));
    primary = await open(primaryHandle);
  } catch (error) {
    follower?.stop();
    await mcp?.close();
    await closeOwned();
    throw error;
  }

  const harness: AgentHarness = {
    ...primary,
    registry,
    repository,
    tools,
    resourceDiagnostics: diagnostics,
    mcp,
    sessions: repository ? createHarnessSessions(repository.log, options.tenant) : { events$: primary.events$, events: () => primary.events$ },
    openSession(id, overrides) {
      if (!repository) {
        return Promise.reject(new HarnessConfigError('openSession(): the harness was given a bare session; pass "repository" or "eventLog" to open others.', { details: { field: "session" } }));
      }
      if (closed) return Promise.reject(new InvalidStateError("openSession(): the harness is closed."));
      // A session already open here is returned as it is: a second handle could never write.
      if (id === primary.id) return Promise.resolve(harness);
      const existing = live.get(id);
      if (existing) return existing;
      const opening = repository.open(id).then((handle) => open(handle, overrides));
      live.set(id, opening);
      opening.catch(() => live.delete(id));
      return opening;
    },
    async resume(id, resumeOptions) {
      if (!repository) throw new HarnessConfigError('resume(): the harness was given a bare session; pass "repository" or "eventLog" to resume others.', { details: { field: "session" } });
      if (closed) throw new InvalidStateError("resume(): the harness is closed.");
      let opening = id === primary.id ? Promise.resolve<HarnessSession>(harness) : live.get(id);
      if (!opening) {
        // Opened to continue: recovery leaves the run open for the continuation (whatever the harness's durability).
        opening = repository.open(id).then((handle) => open(handle, {}, "continue"));
        live.set(id, opening);
        opening.catch(() => live.delete(id));
      }
      return (await opening).resumeRun(resumeOptions);
    },
    async createSession(createOptions = {}) {
      if (!repository) throw new HarnessConfigError('createSession(): the harness was given a bare session; pass "repository" or "eventLog" to create others.', { details: { field: "session" } });
      const { cwd, metadata, ...overrides } = createOptions;
      // A bad override is refused before the session is created.
      if (overrides.tools !== undefined) normalizeTools(overrides.tools);
      if (typeof overrides.model === "string") registry.get(overrides.model);
      return open(await repository.create({ cwd: cwd ?? options.cwd ?? process.cwd(), metadata }), overrides);
    },
    start(sessionId, input, startOptions) {
      if (!repository) return Promise.reject(new HarnessConfigError('start(): the harness was given a bare session; pass "repository" or "eventLog" to queue prompts.', { details: { field: "session" } }));
      if (closed) return Promise.reject(new InvalidStateError("start(): the harness is closed."));
      return startBackground(repository.log, options.tenant, sessionId, input, startOptions);
    },
    on: ((name: HookName | ArborEventType, handler: (event: never) => unknown) => {
      if (isArborEventType(name)) return primary.on(name, handler as ArborEventHandler<typeof name>);
      const shared = { name, handler: handler as HandlerOf<any>, removers: [] as (() => void)[] };
      for (const harnessSession of sessions) shared.removers.push(harnessSession.on(name, shared.handler));
      sharedHandlers.push(shared);
      return () => {
        const at = sharedHandlers.indexOf(shared);
        if (at >= 0) sharedHandlers.splice(at, 1);
        for (const remove of shared.removers.splice(0)) remove();
      };
    }) as AgentHarness["on"],
    close() {
      // A second call waits for the first one's close to finish.
      closing ??= (async () => {
        closed = true;
        follower?.stop();
        for (const harnessSession of sessions) await harnessSession.dispose();
        await mcp?.close();
        await closeOwned();
      })();
      return closing;
    },
  };
  return harness as AgentHarness<ModelName>;
}
