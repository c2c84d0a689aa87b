/**
 * The live machine states (`GET {base}/sessions/:id/machines`, content redacted by the
 * recorder): `#machines .machine[data-machine][data-actor][data-state][data-status]`
 * (`data-run-id` on runs, `data-tool-call-id` on tools), `.path` the states the actor went
 * through. The agent first, then one `.run-machines` group per run (newest first) holding the
 * run's row and its tools' rows; a tool whose run is not shown comes last.
 */
export interface MachineRecord {
  machine: "agent" | "run" | "tool";
  actor: string;
  state: string;
  status: string;
  event: string;
  time: string;
  path: string[];
  runId?: string;
  toolCallId?: string;
  toolName?: string;
}

function Row(props: { record: MachineRecord }) {
  const record = props.record;
  const name = record.machine === "agent" ? "agent" : record.machine === "run" ? `run ${(record.runId ?? "").slice(-8)}` : `${record.toolName ?? "tool"} ${record.toolCallId ?? ""}`;
  return (
    <div
      className="machine"
      data-machine={record.machine}
      data-actor={record.actor}
      data-run-id={record.machine === "run" ? record.runId : undefined}
      data-tool-call-id={record.toolCallId}
      data-state={record.state}
      data-status={record.status}
    >
      <span className="kind">{name}</span>
      <span className="state" title={`after ${record.event} at ${record.time}`}>
        {record.state}
      </span>
      <span className="path">{record.path.join(" → ")}</span>
    </div>
  );
}

/** `records`: the latest record per actor, in first-seen order. `unavailable`: no recorder (404). */
export function Machines(props: { records: readonly MachineRecord[]; unavailable: boolean }) {
  if (props.unavailable) {
    return (
      <div id="machines">
        <p className="muted">Machine states are not recorded by this service.</p>
      </div>
    );
  }
  const agents = props.records.filter((record) => record.machine === "agent");
  const runs = props.records.filter((record) => record.machine === "run").reverse();
  const runIds = new Set(runs.map((run) => run.runId));
  const tools = props.records.filter((record) => record.machine === "tool");
  return (
    <div id="machines">
      {agents.map((record) => (
        <Row key={record.actor} record={record} />
      ))}
      {runs.map((run) => (
        <div key={run.actor} className="run-machines">
          <Row record={run} />
          {tools
            .filter((tool) => tool.runId === run.runId)
            .map((tool) => (
              <Row key={tool.actor} record={tool} />
            ))}
        </div>
      ))}
      {tools
        .filter((tool) => !runIds.has(tool.runId))
        .map((tool) => (
          <Row key={tool.actor} record={tool} />
        ))}
    </div>
  );
}
