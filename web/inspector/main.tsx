/**
 * The offline run inspector (issue 15 item 2), a small React app built by vite into
 * `dist/inspector/` and served by `arbor serve` at `/` and `/inspector` (`docs/http.md`).
 * The page holds no data: everything comes from the service's own routes (`api.ts`), the
 * tree read again after each event that changes it, the timeline and the machine states
 * followed live. Browser code: built by vite, type-checked by `npm run typecheck` with its own
 * `tsconfig.json` (DOM lib, React's types); linted by eslint. It imports nothing of `src/`
 * (`docs/architecture.md`, enforced by `test/architecture/layers.test.ts`).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { getJson, initialToken, isAbort, openStream, readEvents, refreshMs } from "./api.ts";
import { Elicitations } from "./Elicitations.tsx";
import { Machines, type MachineRecord } from "./Machines.tsx";
import { SessionList, type SessionRow } from "./SessionList.tsx";
import { SessionTree, type SessionDetail } from "./SessionTree.tsx";
import { Timeline } from "./Timeline.tsx";
import { TimelineModel, type LogEvent } from "./timeline.ts";
import "./style.css";

const path = (id: string, rest = "") => `/sessions/${encodeURIComponent(id)}${rest}`;

function App() {
  const [token, setToken] = useState(initialToken);
  const [status, setStatus] = useState("");
  const [sessions, setSessions] = useState<SessionRow[]>([]);
  const [selected, setSelected] = useState<string>();
  const [detail, setDetail] = useState<SessionDetail>();
  const [timeline, setTimeline] = useState<TimelineModel>();
  const [machines, setMachines] = useState<{ records: MachineRecord[]; unavailable: boolean }>({ records: [], unavailable: false });
  const [, setTick] = useState(0);
  const tokenRef = useRef(token);
  tokenRef.current = token;
  const fail = useCallback((error: unknown) => setStatus(String((error as Error)?.message ?? error)), []);

  // The list is read again every `#refresh=MS` (default 5 s) while the page is shown, and after
  // the chosen session's entries change; one read in flight, one queued.
  const listing = useRef<{ reading: boolean; again: boolean }>({ reading: false, again: false });
  const load = useCallback(async (): Promise<void> => {
    const state = listing.current;
    if (state.reading) {
      state.again = true;
      return;
    }
    state.reading = true;
    try {
      const list = await getJson<{ sessions: SessionRow[] }>("/sessions", tokenRef.current);
      setSessions(list.sessions);
      setStatus(`${list.sessions.length} session(s)`);
    } catch (error) {
      fail(error);
    } finally {
      state.reading = false;
      if (state.again) {
        state.again = false;
        void load();
      }
    }
  }, [fail]);
  useEffect(() => void load(), [load]);
  useEffect(() => {
    const every = refreshMs();
    if (every === 0) return;
    const timer = setInterval(() => {
      if (!document.hidden) void load();
    }, every);
    return () => clearInterval(timer);
  }, [load]);

  useEffect(() => {
    if (!selected) return;
    const id = selected;
    const token = tokenRef.current;
    const follow = new AbortController();
    const live = () => !follow.signal.aborted;
    setDetail(undefined);
    setMachines({ records: [], unavailable: false });
    // The tree is read again after the events that change it (one read in flight, one queued).
    let reading = false;
    let again = false;
    const showTree = async (): Promise<void> => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        const read = await getJson<SessionDetail>(path(id), token);
        if (live()) setDetail(read);
      } finally {
        reading = false;
        if (again && live()) {
          again = false;
          showTree().catch(fail);
        }
      }
    };
    const model = new TimelineModel();
    const onEvent = (event: LogEvent) => {
      if (!live()) return;
      if (model.apply(event)) setTick((tick) => tick + 1);
      if (event.type === "entry.appended" || event.type === "leaf.moved") {
        showTree().catch(fail);
        void load();
      }
    };
    const latest = new Map<string, MachineRecord>();
    const onRecord = (record: MachineRecord) => {
      if (!live()) return;
      latest.set(record.actor, record);
      setMachines({ records: [...latest.values()], unavailable: false });
    };
    const failLive = (error: unknown) => {
      if (!isAbort(error) && live()) fail(error);
    };
    (async () => {
      await showTree();
      if (!live()) return;
      setTimeline(model);
      openStream(path(id, "/machines"), token, follow.signal)
        .then((response) => {
          if (response.status === 404) {
            if (live()) setMachines({ records: [], unavailable: true });
            return;
          }
          return readEvents(response, onRecord);
        })
        .catch(failLive);
      openStream(path(id, "/events?from=0"), token, follow.signal)
        .then((response) => readEvents(response, onEvent))
        .catch(failLive);
    })().catch(failLive);
    return () => follow.abort();
  }, [selected, fail, load]);

  return (
    <>
      <header>
        <h1>Arbor inspector</h1>
        <label>
          token <input id="token" type="password" size={24} value={token} onChange={(event) => setToken(event.target.value)} />
        </label>
        <button id="reload" onClick={() => void load()}>
          Load sessions
        </button>
        <span id="state" className="muted">
          {status}
        </span>
      </header>
      <SessionList sessions={sessions} selected={selected} onOpen={setSelected} />
      <SessionTree id={selected} detail={detail} />
      <section>
        <Elicitations id={selected} token={token} />
        <h2 id="machines-title" hidden={!timeline}>
          Machines (live, content redacted)
        </h2>
        <Machines records={machines.records} unavailable={machines.unavailable} />
        <h2 id="timeline-title" hidden={!timeline}>
          Run timeline (live)
        </h2>
        <Timeline runs={timeline?.runs ?? []} />
      </section>
    </>
  );
}

createRoot(document.getElementById("root")!).render(<App />);
