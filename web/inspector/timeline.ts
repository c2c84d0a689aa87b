/**
 * The run timeline's model, folded from the raw log events (`GET {base}/sessions/:id/events`):
 * one run per `run.started` (newest first) with its turns, tool calls (outcome, duration in ms)
 * and approvals; `run.ended` gives its status and its duration (end time minus start time, ms).
 * A call gated for approval shows `awaiting approval`, then its decision (`approved`, `denied`,
 * `cancelled`; the call itself runs in the resume run, its own row there); a call still
 * `running` when its run ends takes the run's status.
 * The fold mutates one model and the view re-renders from it.
 */
export interface LogEvent {
  type: string;
  time: string;
  data: any;
  metadata?: { runId?: string };
}

export interface ToolRow {
  toolCallId: string;
  toolName: string;
  outcome: string;
  durationMs?: number;
}

export interface RunView {
  runId: string;
  kind: string;
  time: string;
  start: number;
  status: string;
  turns: number;
  durationMs?: number;
  error?: string;
  /** Tool calls and approval notes, in log order. */
  items: ({ tool: ToolRow } | { note: string })[];
}

export class TimelineModel {
  /** Newest first. */
  readonly runs: RunView[] = [];
  private readonly byId = new Map<string, RunView>();
  /** The latest row of each tool call id, across runs. */
  private readonly rows = new Map<string, ToolRow>();

  apply(event: LogEvent): boolean {
    const data = event.data;
    if (event.type === "approval.ended") {
      const row = this.rows.get(data.toolCallId);
      if (row) row.outcome = data.status;
      const owner = event.metadata?.runId ? this.byId.get(event.metadata.runId) : undefined;
      (owner ?? this.runs.find((run) => run.items.some((item) => "tool" in item && item.tool.toolCallId === data.toolCallId)))?.items.push({ note: `approval ${data.status}: ${data.toolName}` });
      return true;
    }
    if (event.type === "run.started") {
      const run: RunView = { runId: data.runId, kind: data.kind, time: event.time, start: Date.parse(event.time), status: "running", turns: 0, items: [] };
      this.byId.set(run.runId, run);
      this.runs.unshift(run);
      return true;
    }
    const runId = event.metadata?.runId;
    const run = runId ? this.byId.get(runId) : undefined;
    if (!run) return false;
    const tool = (id: string) => run.items.find((item): item is { tool: ToolRow } => "tool" in item && item.tool.toolCallId === id)?.tool;
    switch (event.type) {
      case "turn.started":
        run.turns++;
        return true;
      case "tool.started": {
        const row: ToolRow = { toolCallId: data.toolCallId, toolName: data.toolName, outcome: "running" };
        run.items.push({ tool: row });
        this.rows.set(row.toolCallId, row);
        return true;
      }
      case "tool.ended": {
        const row = tool(data.toolCallId);
        if (row) Object.assign(row, { outcome: data.outcome, durationMs: data.durationMs, toolName: data.toolName });
        else {
          const added: ToolRow = { toolCallId: data.toolCallId, toolName: data.toolName, outcome: data.outcome, durationMs: data.durationMs };
          run.items.push({ tool: added });
          this.rows.set(added.toolCallId, added);
        }
        return true;
      }
      case "approval.requested": {
        const row = tool(data.toolCallId);
        if (row) row.outcome = "awaiting approval";
        run.items.push({ note: `approval requested: ${data.toolName}` });
        return true;
      }
      case "run.ended":
        for (const item of run.items) if ("tool" in item && item.tool.outcome === "running") item.tool.outcome = data.status;
        run.status = data.status;
        run.durationMs = Date.parse(event.time) - run.start;
        run.error = data.error;
        return true;
      default:
        return false;
    }
  }
}
