/**
 * The CLI's workspace work (`arbor workspace diff|export`, `checkout --files`, `fork --files`):
 * a recorder over a session opened from the CLI's store, writing through the session's writer.
 *
 * Contract (ours; `docs/workspace.md`):
 * - the workspace root is the session's recorded folder (`--cwd` overrides it);
 * - `diff` prints one line per path a restore would change: `A` (created), `M` (changed), `D`
 *   (deleted), in the order a restore applies them; nothing when the tree matches;
 * - a restore that found unrecorded work says so and names the checkpoint and entry to restore
 *   to get it back.
 *
 * @example
 * ```ts
 * const recorder = cliWorkspace(store, session, flags.cwd);
 * process.stdout.write(await describeRestore(recorder, entryId));
 * ```
 */
import { lstatSync } from "node:fs";
import { resolve } from "node:path";
import { createWorkspaceRecorder, type WorkspaceRecorder, type WorkspaceRestoreResult } from "../harness/workspace/recorder.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { resolveSessionCwd } from "./agent-setup.ts";
import { CliError } from "./cli-error.ts";
import type { CliStore } from "./store-context.ts";

/**
 * The recorder of `session` over the CLI's store, rooted at `--cwd` or the session's folder.
 *
 * @example
 * ```ts
 * const recorder = cliWorkspace(store, session, undefined);
 * ```
 */
export function cliWorkspace(store: CliStore, session: SessionHandle, cwd: string | undefined): WorkspaceRecorder {
  const root = resolve(resolveSessionCwd(cwd, session.view.info.cwd, session.id));
  return createWorkspaceRecorder({
    session,
    log: store.repo.log,
    options: { root },
    append: async (events) => {
      await sessionActorOf(session).writes.appendEvents(events);
    },
    appendEntry: async (entry, events) => {
      await sessionActorOf(session).writes.appendEntries([entry], { extraEvents: events });
    },
  });
}

/**
 * True when the session has recorded its workspace (so a resumed run keeps recording it).
 *
 * @example
 * ```ts
 * if (await hasWorkspaceCheckpoints(store.log, id)) options.workspace = { root: cwd };
 * ```
 */
export async function hasWorkspaceCheckpoints(log: EventLog, sessionId: string): Promise<boolean> {
  const events = await log.readStream(sessionStreamId(sessionId));
  return events.some((event) => isEventOfType(event, "workspace.checkpointed"));
}

/**
 * The `A`/`M`/`D` lines of what a restore to `entryId` would change.
 *
 * @example
 * ```ts
 * process.stdout.write(await diffLines(recorder, entryId));
 * ```
 */
export async function diffLines(recorder: WorkspaceRecorder, entryId: string | null): Promise<string> {
  const changes = await recorder.diff(entryId);
  const exists = (path: string) => {
    try {
      lstatSync(resolve(recorder.root, path));
      return true;
    } catch {
      return false;
    }
  };
  return changes.map((change) => `${change.node === null ? "D" : exists(change.path) ? "M" : "A"} ${change.path}\n`).join("");
}

/**
 * One line saying what a restore did, and how to undo it when it saved unrecorded work.
 *
 * @example
 * ```ts
 * process.stdout.write(restoreLine(await recorder.restore(entryId), entryId, session.id));
 * ```
 */
export function restoreLine(result: WorkspaceRestoreResult, entryId: string | null, sessionId: string): string {
  const saved =
    result.savedCheckpointId === undefined
      ? ""
      : `; the folder had changes the log had not recorded: they were saved first as checkpoint ${result.savedCheckpointId} at entry ${result.savedAt ?? "(root)"} (arbor workspace export ${sessionId} --at ${result.savedAt ?? "root"} DIR, or checkout that entry with --files, gets them back)`;
  return `files: ${result.changed} path(s) restored to the tree recorded at ${entryId ?? "(root)"}${saved}\n`;
}

/** Refuses `--files` for a session that never recorded its files. */
async function requireCheckpoints(store: CliStore, session: SessionHandle): Promise<void> {
  if (!(await hasWorkspaceCheckpoints(store.repo.log, session.id))) {
    throw new CliError(`Session ${session.id} recorded no files (it was not run with --checkpoints); nothing was changed. Run without --files, or record files with arbor run --checkpoints.`);
  }
}

/**
 * `checkout --files`: restores the folder to the files recorded at the checkout's new position
 * (a user message's parent, else the entry itself) and returns the line to print.
 *
 * @example
 * ```ts
 * const line = await restoreFilesForCheckout(store, session, targetId);
 * ```
 */
export async function restoreFilesForCheckout(store: CliStore, session: SessionHandle, targetId: string): Promise<string> {
  await requireCheckpoints(store, session);
  const target = session.view.getEntry(targetId);
  const userMessage = target?.type === "message" && (target as { message?: { role?: string } }).message?.role === "user";
  const filesAt = userMessage ? (target?.parentId ?? null) : targetId;
  const result = await cliWorkspace(store, session, undefined).restore(filesAt);
  return restoreLine(result, filesAt, session.id);
}

/**
 * `fork --files`: records the source's unrecorded work, forks, and puts the folder back to the
 * files recorded at the fork point.
 *
 * @example
 * ```ts
 * const { fork, line } = await forkWithFiles(store, session, entryId);
 * ```
 */
export async function forkWithFiles(store: CliStore, session: SessionHandle, entryId: string | undefined): Promise<{ fork: SessionHandle; line: string }> {
  await requireCheckpoints(store, session);
  const saved = await cliWorkspace(store, session, undefined).sync();
  const fork = await store.repo.fork(session.id, entryId === undefined ? {} : { entryId });
  const result = await cliWorkspace(store, fork, undefined).restore(fork.view.leafId, { record: false });
  const note = saved ? `; the folder's unrecorded changes were saved first in ${session.id} as checkpoint ${saved} at entry ${session.view.leafId}` : "";
  return { fork, line: `files: ${result.changed} path(s) restored to the tree recorded at ${fork.view.leafId ?? "(root)"}${note}\n` };
}
