/** The session list (`GET {base}/sessions`): `#sessions [data-session-id]`, the chosen one `.selected`. */
export interface SessionRow {
  id: string;
  name?: string;
  firstMessage: string;
  messageCount: number;
  /** The time of the last append to the session's stream (the list's order, as `arbor sessions` shows). */
  updatedAt: string;
}

export function SessionList(props: { sessions: SessionRow[]; selected: string | undefined; onOpen: (id: string) => void }) {
  return (
    <section id="sessions">
      <h2>Sessions</h2>
      <ul id="session-list">
        {props.sessions.map((session) => (
          <li key={session.id} data-session-id={session.id} className={session.id === props.selected ? "selected" : ""} onClick={() => props.onOpen(session.id)}>
            <div>{session.name || session.firstMessage}</div>
            <div className="muted">
              {session.id.slice(0, 13)} · {session.messageCount} msgs · {session.updatedAt}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
