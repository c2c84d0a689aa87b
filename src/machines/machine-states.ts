/**
 * `createMachineStates`: the live states of each session's agent, run and tool actors, recorded from XState inspection for the inspector endpoint
 * (`docs/http.md`). A record is made when a state or status changes, with a path of the last 32 states; content is redacted by default; the latest
 * record per actor is kept (bounded per session and in sessions); a throwing listener is removed.
 * @example
 * const machines = createMachineStates();
 * const harness = await createHarness({ models, inspect: machines });
 * const handler = createChatHandler({ harness, machineStates: machines });
 */

/** Which Arbor machine a record is about. */
export type MachineKind = "agent" | "run" | "tool";

/**
 * One observed state of one actor (see the module contract). Source: ours.
 * @example
 * const record: MachineStateRecord = { seq: 3, sessionId: "s1", actor: "x:2", machine: "run", state: "tools", status: "active", runId: "r1", path: ["starting", "streaming", "tools"], event: "xstate.done.actor.model", time: "2026-01-01T00:00:00.000Z" };
 */
export interface MachineStateRecord {
  /** Order of the record in this recorder (1, 2, 3, ...). */
  seq: number;
  /** The Arbor session the actor belongs to. */
  sessionId: string;
  /** XState's session id of the actor (unique per actor in the process). */
  actor: string;
  /** The machine. */
  machine: MachineKind;
  /** The state value as a dotted path (`"tools"`, `"running"`, `"executing"`). */
  state: string;
  /** The actor's status: `active`, `done` (a final state), `error` or `stopped`. */
  status: "active" | "done" | "error" | "stopped";
  /** The run of a run or tool actor. */
  runId?: string;
  /** The tool call of a tool actor. */
  toolCallId?: string;
  /** The tool name of a tool actor. */
  toolName?: string;
  /** The states this actor went through, oldest first, ending with `state` (the last 32). */
  path: string[];
  /** The type of the event that caused the change (`xstate.init` for a new actor). */
  event: string;
  /** When it was observed (ISO 8601). */
  time: string;
  /** The causing event as JSON, only with `redact: false`. */
  detail?: unknown;
}

/**
 * Options of {@link createMachineStates}.
 * @example
 * createMachineStates({ redact: false, keepActors: 16 });
 */
export interface MachineStatesOptions {
  /** Leave out event details (default true). */
  redact?: boolean;
  /** Runs and tool executions kept per session besides the agent (default 64). */
  keepActors?: number;
}

/**
 * The recorder (see the module contract).
 * @example
 * const stop = machines.subscribe("s1", (record) => console.log(record.machine, record.state));
 */
export interface MachineStates {
  /** The XState inspection observer for one session's actors (the harness calls it). */
  forSession(sessionId: string): unknown;
  /** The latest record of each kept actor of the session, in `seq` order. */
  current(sessionId: string): MachineStateRecord[];
  /** Calls `listener` with each new record of the session; returns the unsubscribe. */
  subscribe(sessionId: string, listener: (record: MachineStateRecord) => void): () => void;
}

interface InspectedActor {
  sessionId?: string;
  id?: string;
  logic?: { config?: { id?: string } };
  /** XState's parent actor (internal field, present on every child). */
  _parent?: InspectedActor;
}

interface SnapshotInspection {
  type: string;
  actorRef?: InspectedActor;
  snapshot?: { value?: unknown; status?: string; context?: { input?: { runId?: string }; toolCall?: { id?: string; name?: string } } };
  event?: { type?: string };
}

const MAX_SESSIONS = 256;
const MACHINES: Record<string, MachineKind> = { agent: "agent", run: "run", toolExecution: "tool" };

function stateText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    return Object.entries(value)
      .map(([key, inner]) => `${key}.${stateText(inner)}`)
      .join(",");
  }
  return String(value);
}

function plain(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value !== "object") return typeof value === "function" ? undefined : value;
  if (depth > 6 || seen.has(value)) return "[cut]";
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => plain(item, depth + 1, seen));
  if (typeof (value as { getSnapshot?: unknown }).getSnapshot === "function") return { actorRef: (value as { id?: string }).id };
  if (value instanceof AbortSignal) return "[AbortSignal]";
  const result: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (typeof field !== "function") result[key] = plain(field, depth + 1, seen);
  return result;
}

/**
 * Creates a recorder (see the module contract).
 * @example
 * const machines = createMachineStates();
 * await createHarness({ models, inspect: machines });
 * machines.current(sessionId); // [{ machine: "agent", state: "idle", ... }]
 */
export function createMachineStates(options: MachineStatesOptions = {}): MachineStates {
  const redact = options.redact !== false;
  const keep = Math.max(1, options.keepActors ?? 64);
  let seq = 0;
  /** Per session: actor → its latest record (Map order = first seen). */
  const latest = new Map<string, Map<string, MachineStateRecord>>();
  const listeners = new Map<string, Set<(record: MachineStateRecord) => void>>();

  const observe = (sessionId: string, inspection: SnapshotInspection) => {
    if (inspection.type !== "@xstate.snapshot") return;
    const machine = MACHINES[inspection.actorRef?.logic?.config?.id ?? ""];
    const actor = inspection.actorRef?.sessionId;
    const snapshot = inspection.snapshot;
    if (!machine || !actor || !snapshot) return;
    const state = stateText(snapshot.value);
    const status = (["active", "done", "error", "stopped"].includes(snapshot.status ?? "") ? snapshot.status : "active") as MachineStateRecord["status"];
    let actors = latest.get(sessionId);
    const previous = actors?.get(actor);
    if (previous && previous.state === state && previous.status === status) return;
    const context = snapshot.context;
    // A tool actor's run is its parent run actor's.
    const parent = machine === "tool" ? inspection.actorRef?._parent?.sessionId : undefined;
    const runId = machine === "run" ? context?.input?.runId : parent !== undefined ? actors?.get(parent)?.runId : undefined;
    const toolCall = machine === "tool" ? context?.toolCall : undefined;
    const record: MachineStateRecord = {
      seq: ++seq,
      sessionId,
      actor,
      machine,
      state,
      status,
      path: previous?.path.at(-1) === state ? previous.path : [...(previous?.path ?? []), state].slice(-32),
      ...(runId ?? previous?.runId ? { runId: runId ?? previous?.runId } : {}),
      ...(toolCall?.id ? { toolCallId: toolCall.id } : {}),
      ...(toolCall?.name ? { toolName: toolCall.name } : {}),
      event: inspection.event?.type ?? "unknown",
      time: new Date().toISOString(),
      ...(redact ? {} : { detail: plain(inspection.event) }),
    };
    if (!actors) {
      latest.set(sessionId, (actors = new Map()));
      // At most MAX_SESSIONS sessions are kept: the oldest without listeners goes first.
      for (const id of latest.keys()) {
        if (latest.size <= MAX_SESSIONS) break;
        if (!listeners.has(id)) latest.delete(id);
      }
    }
    actors.delete(actor);
    actors.set(actor, record);
    // Keep the agent(s) and the last `keep` other actors.
    let others = [...actors.values()].filter((kept) => kept.machine !== "agent");
    while (others.length > keep) {
      actors.delete(others[0].actor);
      others = others.slice(1);
    }
    for (const listener of listeners.get(sessionId) ?? []) {
      try {
        listener(record);
      } catch {
        listeners.get(sessionId)?.delete(listener);
      }
    }
  };

  return {
    forSession(sessionId) {
      return { next: (inspection: SnapshotInspection) => observe(sessionId, inspection), error: () => undefined, complete: () => undefined };
    },
    current(sessionId) {
      return [...(latest.get(sessionId)?.values() ?? [])].sort((a, b) => a.seq - b.seq);
    },
    subscribe(sessionId, listener) {
      let set = listeners.get(sessionId);
      if (!set) listeners.set(sessionId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(sessionId) === set) listeners.delete(sessionId);
      };
    },
  };
}

/** The inspection observer a session's agent gets: a {@link MachineStates} recorder's observer for that session, or the option itself. */
export function sessionInspection(inspect: unknown, sessionId: string): unknown {
  if (inspect && typeof inspect === "object" && typeof (inspect as Partial<MachineStates>).forSession === "function" && typeof (inspect as Partial<MachineStates>).current === "function") {
    return (inspect as MachineStates).forSession(sessionId);
  }
  return inspect;
}
