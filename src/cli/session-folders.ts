/**
 * The harnesses `arbor serve` and `arbor worker` run existing sessions with. Each session runs in the folder it recorded when it was created
 * (`session.created`), as `arbor resume` does, with that folder's tools, context files, skills and MCP servers; their `--cwd` is the folder of the
 * sessions `arbor serve` creates, and of any session that recorded none. A recorded folder that is gone is a {@link SessionFolderMissingError}:
 * the session is not run in another folder. A session they open while it is idle records the endpoint they run it against (`arbor.endpoint`,
 * `recordEndpoint`), as `arbor run` does, so `arbor run --session` goes on with it without model flags.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ArborError } from "../core/errors.ts";
import type { AgentHarness } from "../harness/create-harness.ts";
import type { HarnessSession } from "../harness/harness-session-types.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { ignoreError } from "../core/ignored.ts";
import { createCliHarness, type CliHarness } from "./agent-setup.ts";
import type { ResolvedModelSettings } from "./config.ts";
import { recordEndpoint } from "./store-context.ts";

/**
 * A session's recorded folder no longer exists (code `SESSION_FOLDER_MISSING`): `arbor serve` and `arbor worker` run nothing in it and nowhere
 * else. `details` carry `sessionId` and `folder`.
 */
export class SessionFolderMissingError extends ArborError {
  constructor(sessionId: string, folder: string) {
    super(
      "SESSION_FOLDER_MISSING",
      `Session ${sessionId} was started in ${folder}, which no longer exists; nothing was run. Restore the folder, or go on in another one with: arbor run --session ${sessionId} --cwd DIR (arbor resume ${sessionId} --cwd DIR for an unfinished run).`,
      { details: { sessionId, folder } },
    );
  }

  /** True for this error, also from another copy of the package. */
  static override isInstance(error: unknown): error is SessionFolderMissingError {
    return ArborError.isInstance(error) && error.code === "SESSION_FOLDER_MISSING";
  }
}

/**
 * The folder session `sessionId` works in: the one its `session.created` recorded (resolved against the current directory when relative), else
 * `fallback` (also for a session that is not in the log: opening it then reports that). Reads the first event of its stream only.
 * @throws (rejects) SessionFolderMissingError when the recorded folder is gone.
 */
async function sessionFolder(log: EventLog, sessionId: string, fallback: string): Promise<string> {
  const [first] = await log.readStream(sessionStreamId(sessionId), { limit: 1 });
  const recorded = first && isEventOfType(first, "session.created") ? first.data.cwd : "";
  if (recorded === "") return resolve(fallback);
  const folder = resolve(recorded);
  if (!existsSync(folder)) throw new SessionFolderMissingError(sessionId, folder);
  return folder;
}

/** What {@link openSessionHarness} passes to `createCliHarness`, besides the session and its folder. */
export type SessionHarnessOptions = Omit<Parameters<typeof createCliHarness>[0], "sessionId" | "cwd"> & {
  /** The folder of sessions that recorded none (`--cwd`, else the current directory). */
  fallbackCwd: string;
};

/**
 * Records the endpoint on `session` when nothing runs there (an entry appended mid-run would land inside the run). Best effort: the run does not
 * depend on it, and the next open records it again.
 */
async function recordEndpointWhenIdle(session: HarnessSession, settings: ResolvedModelSettings): Promise<void> {
  if (session.getState().operation !== "idle" || session.session.view.activity.openRun) return;
  await recordEndpoint(session.session, settings).catch(ignoreError("the endpoint is recorded again at the session's next open"));
}

/** A CLI harness whose own session is `sessionId`, in that session's folder ({@link sessionFolder}), with the endpoint recorded. */
async function openInFolder(options: SessionHarnessOptions, sessionId: string): Promise<CliHarness> {
  const { fallbackCwd, ...rest } = options;
  const cwd = await sessionFolder(options.store.log, sessionId, fallbackCwd);
  const made = await createCliHarness({ ...rest, sessionId, cwd });
  await recordEndpointWhenIdle(made.harness, options.settings);
  return made;
}

/**
 * A CLI harness whose own session is `sessionId`, in that session's folder ({@link sessionFolder}), with the endpoint recorded (`arbor worker`:
 * one per task).
 * @throws (rejects) SessionFolderMissingError, and what `createCliHarness` throws.
 */
export async function openSessionHarness(options: SessionHarnessOptions, sessionId: string): Promise<AgentHarness> {
  return (await openInFolder(options, sessionId)).harness;
}

/**
 * `arbor serve`'s harness: {@link openSessionHarness} for `sessionId`, whose `openSession` and `resume` open a session of another folder in a
 * harness of its own (one per such session, closed when that session is disposed or this harness closes), and a session of its own folder as
 * usual. One live session per id either way.
 * @throws (rejects) SessionFolderMissingError, and what `createCliHarness` throws; its `openSession` and `resume` reject with them too.
 */
export async function openServeHarness(options: SessionHarnessOptions, sessionId: string): Promise<AgentHarness> {
  const { harness: main, cwd: mainFolder } = await openInFolder(options, sessionId);
  const elsewhere = new Map<string, Promise<AgentHarness>>();
  const recorded = new WeakSet<HarnessSession>();
  const openSession = main.openSession.bind(main);
  const resume = main.resume.bind(main);
  const close = main.close.bind(main);

  const openElsewhere = (id: string): Promise<AgentHarness> => {
    const open = elsewhere.get(id);
    if (open) return open;
    const opening = openSessionHarness(options, id).then((harness) => {
      // Disposing the session (the service's idle sweep, a delete) closes its harness.
      harness.dispose = async () => {
        if (elsewhere.get(id) === opening) elsewhere.delete(id);
        await harness.close();
      };
      return harness;
    });
    elsewhere.set(id, opening);
    opening.catch(() => {
      if (elsewhere.get(id) === opening) elsewhere.delete(id);
    });
    return opening;
  };
  /** Whether session `id` runs in a harness of its own (its folder is not this harness's). */
  const isElsewhere = async (id: string): Promise<boolean> =>
    id !== main.id && (elsewhere.has(id) || (await sessionFolder(options.store.log, id, options.fallbackCwd)) !== mainFolder);

  main.openSession = async (id, overrides) => {
    if (await isElsewhere(id)) return openElsewhere(id);
    const session = await openSession(id, overrides);
    if (!recorded.has(session)) {
      recorded.add(session);
      await recordEndpointWhenIdle(session, options.settings);
    }
    return session;
  };
  main.resume = async (id, resumeOptions) => ((await isElsewhere(id)) ? (await openElsewhere(id)).resume(id, resumeOptions) : resume(id, resumeOptions));
  main.close = async () => {
    await close();
    for (const opening of [...elsewhere.values()]) await (await opening.catch(ignoreError("a harness that failed to open has nothing to close")))?.close();
  };
  return main;
}
