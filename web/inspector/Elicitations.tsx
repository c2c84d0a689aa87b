/**
 * The MCP servers' requests for input of the chosen session (`GET {base}/sessions/:id/elicitations`,
 * read again every second while the session is shown) and a form that answers a waiting one
 * (`POST {base}/sessions/:id/elicitations/:elicitationId`): the values as a JSON object, then
 * Accept, or Decline / Cancel. `#elicitations .elicitation[data-elicitation-id][data-status]`;
 * a refused answer shows the service's message in `.error`.
 */
import { useCallback, useEffect, useState } from "react";
import { getJson, postJson } from "./api.ts";

export interface ElicitationRow {
  elicitationId: string;
  server: string;
  toolName?: string;
  message: string;
  requestedSchema: { properties?: Record<string, { type?: string; description?: string }>; required?: string[] };
  status: "pending" | "answered";
  answer?: { action: string; via: string };
}

const path = (id: string, rest = "") => `/sessions/${encodeURIComponent(id)}/elicitations${rest}`;

function Pending(props: { id: string; token: string; row: ElicitationRow; onDone: () => void }) {
  const { row } = props;
  const [text, setText] = useState("{}");
  const [error, setError] = useState("");
  const send = async (body: unknown) => {
    setError("");
    try {
      await postJson(path(props.id, `/${encodeURIComponent(row.elicitationId)}`), body, props.token);
      props.onDone();
    } catch (failure) {
      setError(String((failure as Error).message));
    }
  };
  const accept = () => {
    let content: unknown;
    try {
      content = JSON.parse(text);
    } catch (failure) {
      setError(`not JSON: ${(failure as Error).message}`);
      return;
    }
    void send({ action: "accept", content });
  };
  const fields = Object.entries(row.requestedSchema.properties ?? {});
  const required = new Set(row.requestedSchema.required ?? []);
  return (
    <>
      <ul className="muted fields">
        {fields.map(([name, field]) => (
          <li key={name}>
            {name}
            {required.has(name) ? "" : "?"} ({field.type ?? "any"}){field.description ? `: ${field.description}` : ""}
          </li>
        ))}
      </ul>
      <textarea className="answer" rows={3} cols={48} value={text} onChange={(event) => setText(event.target.value)} />
      <div>
        <button className="accept" onClick={accept}>
          Accept
        </button>{" "}
        <button className="decline" onClick={() => void send({ action: "decline" })}>
          Decline
        </button>{" "}
        <button className="cancel" onClick={() => void send({ action: "cancel" })}>
          Cancel
        </button>
      </div>
      {error ? <div className="error">{error}</div> : null}
    </>
  );
}

export function Elicitations(props: { id: string | undefined; token: string }) {
  const [rows, setRows] = useState<ElicitationRow[]>([]);
  const { id, token } = props;
  const read = useCallback(async () => {
    if (!id) return;
    try {
      setRows((await getJson<{ elicitations: ElicitationRow[] }>(path(id), token)).elicitations);
    } catch {
      // the next read tries again (the service may be restarting)
    }
  }, [id, token]);
  useEffect(() => {
    setRows([]);
    void read();
    const timer = setInterval(() => void read(), 1000);
    return () => clearInterval(timer);
  }, [read]);
  if (!id || rows.length === 0) return null;
  return (
    <div id="elicitations">
      <h2>Requests for input (MCP)</h2>
      <ul>
        {rows.map((row) => (
          <li key={row.elicitationId} className="elicitation" data-elicitation-id={row.elicitationId} data-status={row.status}>
            <div>
              <strong>{row.server}</strong>
              {row.toolName ? ` (${row.toolName})` : ""}: {row.message}
            </div>
            {row.status === "pending" ? <Pending id={id} token={token} row={row} onDone={() => void read()} /> : <div className="muted">answered: {row.answer?.action} via {row.answer?.via}</div>}
          </li>
        ))}
      </ul>
    </div>
  );
}
