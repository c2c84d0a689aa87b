/**
 * The CLI's workspace work (`workspace diff|export`, `checkout --files`, `fork --files`, `docs/workspace.md`): a recorder rooted at the session's
 * folder (or `--cwd`); `diff` prints `A`/`M`/`D` lines in restore order; a restore names how to get unrecorded work back.
 */
import { existsSync, lstatSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { existsOnDisk } from "../harness/workspace/restore-plan.ts";
import { createWorkspaceRecorder, type WorkspaceRecorder, type WorkspaceRestoreResult } from "../harness/workspace/recorder.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { resolveSessionCwd } from "./agent-setup.ts";
import { CliError } from "./cli-error.ts";
import type { CliStore } from "./store-context.ts";

/** The recorder of `session` over the CLI's store, rooted at `--cwd` or the session's folder. */
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

/** True when the session has recorded its workspace (so a resumed run keeps recording it). */
export async function hasWorkspaceCheckpoints(log: EventLog, sessionId: string): Promise<boolean> {
  const events = await log.readStream(sessionStreamId(sessionId));
  return events.some((event) => isEventOfType(event, "workspace.checkpointed"));
}

/** The `A`/`M`/`D` lines of what a restore to `entryId` would change. */
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

/** One line saying what a restore did, and how to undo it when it saved unrecorded work. */
export function restoreLine(result: WorkspaceRestoreResult, entryId: string | null, sessionId: string): string {
  const saved =
    result.savedCheckpointId === undefined
      ? ""
      : `; the folder had changes the log had not recorded: they were saved first as checkpoint ${result.savedCheckpointId} at entry ${result.savedAt ?? "(root)"} (arbor workspace export ${sessionId} --at ${result.savedAt ?? "root"} DIR, or checkout that entry with --files, gets them back)`;
  return `files: ${result.changed} path(s) restored to the tree recorded at ${entryId ?? "(root)"}${saved}${leftAloneNote(result)}\n`;
}

const LEFT_ALONE_WHY = {
  ignored: "ignored by .gitignore now",
  too_large: "too large to record",
  ignored_at_entry: "ignored at that entry",
  not_empty: "a folder still holding files left alone",
} as const;

/** The paths a restore left as they are on disk, with why (the log has not seen their content, so the restore did not touch them). */
function leftAloneNote(result: WorkspaceRestoreResult): string {
  if (result.leftAlone.length === 0) return "";
  const shown = result.leftAlone.slice(0, 20).map(({ path, reason }) => `${path} (${LEFT_ALONE_WHY[reason]})`);
  const more = result.leftAlone.length > shown.length ? `, and ${result.leftAlone.length - shown.length} more` : "";
  return `; left as they are on disk, not recorded there: ${shown.join(", ")}${more}`;
}

/** Refuses `--files` for a session that never recorded its files. */
async function requireCheckpoints(store: CliStore, session: SessionHandle): Promise<void> {
  if (!(await hasWorkspaceCheckpoints(store.repo.log, session.id))) {
    throw new CliError(`Session ${session.id} recorded no files (it was not run with --checkpoints); nothing was changed. Run without --files, or record files with arbor run --checkpoints.`);
  }
}

/** `checkout --files`: restores the folder to the files recorded at the new position and returns the line to print. */
export async function restoreFilesForCheckout(store: CliStore, session: SessionHandle, targetId: string): Promise<string> {
  await requireCheckpoints(store, session);
  const target = session.view.getEntry(targetId);
  const userMessage = target?.type === "message" && (target as { message?: { role?: string } }).message?.role === "user";
  const filesAt = userMessage ? (target?.parentId ?? null) : targetId;
  const result = await cliWorkspace(store, session, undefined).restore(filesAt);
  return restoreLine(result, filesAt, session.id);
}

/** `fork --files`: records the source's unrecorded work, forks, and puts the folder back to the files recorded at the fork point. */
export async function forkWithFiles(store: CliStore, session: SessionHandle, entryId: string | undefined): Promise<{ fork: SessionHandle; line: string }> {
  await requireCheckpoints(store, session);
  const saved = await cliWorkspace(store, session, undefined).sync();
  const fork = await store.repo.fork(session.id, entryId === undefined ? {} : { entryId });
  const result = await cliWorkspace(store, fork, undefined).restore(fork.view.leafId, { record: false });
  const note = saved ? `; the folder's unrecorded changes were saved first in ${session.id} as checkpoint ${saved} at entry ${session.view.leafId}` : "";
  return { fork, line: `files: ${result.changed} path(s) restored to the tree recorded at ${fork.view.leafId ?? "(root)"}${note}${leftAloneNote(result)}\n` };
}

/**
 * `arbor resume --cwd DIR` of a session that records its files: refused (exit 2, nothing changed) when DIR is not the session's recorded folder and
 * holds files the continuation would overwrite or delete to put the tree recorded at the leaf there. An empty folder, or one that already holds
 * that tree (or only paths a restore leaves alone), is fine; the session's own folder is restored as documented (its unrecorded work saved first).
 */
export async function refuseForeignResumeFolder(store: CliStore, session: SessionHandle, cwd: string): Promise<void> {
  const real = (path: string) => (existsSync(path) ? realpathSync(path) : resolve(path));
  const recorded = session.view.info.cwd;
  if (!recorded || real(cwd) === real(recorded) || !existsSync(cwd)) return;
  if (!(await hasWorkspaceCheckpoints(store.repo.log, session.id))) return;
  const recorder = cliWorkspace(store, session, cwd);
  const clobbered = (await recorder.diff(session.view.leafId)).map((change) => change.path).filter((path) => existsOnDisk(recorder.root, path));
  if (clobbered.length === 0) return;
  const named = clobbered.sort().slice(0, 5).join(", ") + (clobbered.length > 5 ? `, and ${clobbered.length - 5} more` : "");
  throw new CliError(
    `${resolve(cwd)} is not session ${session.id}'s folder (${recorded}) and holds files its recording does not describe (${named}): resuming there would overwrite or delete them, so nothing was changed. Resume in the session's folder (leave out --cwd), or give --cwd an empty folder (the files recorded at the leaf are written there).`,
  );
}
