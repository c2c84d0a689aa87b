/**
 * The run timeline (live): `#timeline .run[data-run-id][data-status]`, its tool calls
 * `.tool[data-tool-call-id][data-outcome][data-duration-ms]` and approvals.
 */
import type { RunView } from "./timeline.ts";

export function Timeline(props: { runs: readonly RunView[] }) {
  return (
    <div id="timeline">
      {props.runs.map((run) => (
        <div key={run.runId} className="run" data-run-id={run.runId} data-status={run.status}>
          <div>
            <b>run {run.runId.slice(-8)}</b> <span className="muted">{`${run.kind} · ${run.time}`}</span>
          </div>
          <div className="muted meta">
            {run.durationMs === undefined ? "running" : `${run.status} · ${run.durationMs} ms · ${run.turns} turn(s)${run.error ? ` · ${run.error}` : ""}`}
          </div>
          <ul className="tools">
            {run.items.map((item, index) =>
              "tool" in item ? (
                <li key={item.tool.toolCallId} className="tool" data-tool-call-id={item.tool.toolCallId} data-outcome={item.tool.outcome} data-duration-ms={item.tool.durationMs === undefined ? undefined : String(item.tool.durationMs)}>
                  {item.tool.durationMs === undefined ? `${item.tool.toolName} · ${item.tool.outcome}` : `${item.tool.toolName} · ${item.tool.outcome} · ${item.tool.durationMs} ms`}
                </li>
              ) : (
                <li key={`note-${index}`} className="muted approval">
                  {item.note}
                </li>
              ),
            )}
          </ul>
        </div>
      ))}
    </div>
  );
}
