/**
 * `session.workspace` (`docs/workspace.md`): the session's view of its recorded files, and the tool wrapper that checkpoints what each call changed
 * (even one that threw) and hands it to the run. `restore`/`diff`/`export`/`tree` default to the leaf; `restore` refuses while busy.
 */
import { EntryNotFoundError, SessionBusyError } from "../../core/errors.ts";
import type { AgentTool, ToolResult } from "../../core/tools.ts";
import { WORKSPACE_CHECKPOINT, type WorkspaceChange, type WorkspaceManifest } from "../../core/workspace-manifest.ts";
import type { EventLog, NewEvent } from "../../store/event-log.ts";
import type { NewEntry, SessionHandle } from "../../store/session-types.ts";
import { createWorkspaceRecorder, type WorkspaceOptions, type WorkspaceRecorder, type WorkspaceRestoreResult } from "./recorder.ts";

/**
 * A session's recorded workspace (the harness option `workspace`).
 * @example
 * for (const change of await session.workspace!.diff(entryId)) console.log(change.node ? "write" : "delete", change.path);
 */
export interface SessionWorkspace {
  /** The absolute folder recorded. */
  readonly root: string;
  /** The tree recorded at `entryId` (default: the leaf). */
  tree(entryId?: string | null): Promise<WorkspaceManifest>;
  /** What a restore to `entryId` would change on disk (default: the leaf), deletions first. */
  diff(entryId?: string | null): Promise<WorkspaceChange[]>;
  /** Puts the files back to the tree recorded at `entryId`, recording unrecorded work first. */
  restore(entryId: string | null): Promise<WorkspaceRestoreResult>;
  /** Writes the tree recorded at `entryId` into `directory` (created when missing). Returns paths written. */
  export(directory: string, entryId?: string | null): Promise<number>;
  /** Records what differs on disk from the tree at the leaf; the checkpoint id, or undefined when nothing did. */
  checkpoint(): Promise<string | undefined>;
}

/** What the harness session gives the workspace. */
export interface SessionWorkspaceConfig {
  session: SessionHandle;
  log: EventLog;
  options: WorkspaceOptions;
  append(events: NewEvent[]): Promise<void>;
  appendEntry(entry: NewEntry, events: NewEvent[]): Promise<void>;
  isBusy(): boolean;
}

/** The workspace of one harness session: the public API, the tool wrapper and the start-up sync. */
export function createSessionWorkspace(config: SessionWorkspaceConfig): { api: SessionWorkspace; recorder: WorkspaceRecorder; wrapTools(tools: AgentTool<any, any, any>[]): AgentTool<any, any, any>[] } {
  const { session } = config;
  const recorder = createWorkspaceRecorder(config);
  const entry = (entryId: string | null | undefined, what: string): string | null => {
    if (entryId === undefined) return session.view.leafId;
    if (entryId !== null && !session.view.getEntry(entryId)) throw new EntryNotFoundError(`workspace.${what}(): no entry "${entryId}" in session ${session.id}.`, { details: { entryId } });
    return entryId;
  };
  const wrap = (tool: AgentTool<any, any, any>): AgentTool<any, any, any> => ({
    ...tool,
    async execute(args, context) {
      let result: ToolResult;
      try {
        result = await tool.execute(args, context);
      } catch (error) {
        const checkpoint = await recorder.checkpointFor(tool.name, args as Record<string, unknown>, context.toolCallId);
        if (!checkpoint) throw error;
        const text = error instanceof Error ? error.message : String(error);
        return { content: [{ type: "text", text }], isError: true, [WORKSPACE_CHECKPOINT]: checkpoint } as ToolResult;
      }
      const checkpoint = await recorder.checkpointFor(tool.name, args as Record<string, unknown>, context.toolCallId);
      return checkpoint ? ({ ...result, [WORKSPACE_CHECKPOINT]: checkpoint } as ToolResult) : result;
    },
  });
  const api: SessionWorkspace = {
    root: recorder.root,
    tree: async (entryId) => recorder.treeAt(entry(entryId, "tree")),
    diff: async (entryId) => recorder.diff(entry(entryId, "diff")),
    async restore(entryId) {
      const target = entry(entryId, "restore");
      if (config.isBusy()) throw new SessionBusyError(`workspace.restore(): session ${session.id} is busy; wait for idle or abort the run first.`, { details: { sessionId: session.id } });
      return recorder.restore(target);
    },
    export: async (directory, entryId) => recorder.exportTo(entry(entryId, "export"), directory),
    checkpoint: () => recorder.sync(),
  };
  return { api, recorder, wrapTools: (tools) => tools.map(wrap) };
}
