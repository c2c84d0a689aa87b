/**
 * The offline inspector: one self-contained HTML page (inline CSS and script, no network but
 * the service's own JSON and event-stream routes), served by `arbor serve` at `/` and
 * `/inspector`.
 *
 * Contract (ours; a first, light version of issue 15 item 2):
 * - the page holds no data: it asks the API with the bearer token from the URL fragment
 *   (`#token=...`, never sent to the server in the URL) or typed into its token field;
 * - the session list (`GET {base}/sessions`); for the chosen session the tree (`GET
 *   {base}/sessions/:id`: every entry, the leaf marked, labels, compactions and branch
 *   summaries named, branches as nested lists) and the event timeline, read from
 *   `GET {base}/sessions/:id/events?from=0` and followed live: one block per run (kind, status,
 *   duration in ms, turns) with its tool calls (name, outcome, duration in ms) and approvals;
 *   the tree is read again after each event that changes it (`entry.appended`, labels and names
 *   included, and `leaf.moved`), `#tree[data-version]` being the stream version it shows;
 * - element hooks for tests and scripts: `#sessions [data-session-id]`, `#tree
 *   [data-entry-id][data-type]`, `.leaf`, `#timeline .run[data-run-id][data-status]`,
 *   `.tool[data-tool-call-id][data-outcome]`;
 * - the live machine states (`GET {base}/sessions/:id/machines`, recorded from the actors' XState
 *   inspection events by `createMachineStates`, content redacted): the agent's slot state, each
 *   run's state and each tool execution's state under its run, with the path of states each went
 *   through, updated as records arrive; a `404` (no recorder) shows a note instead;
 * - element hooks of the machines: `#machines .machine[data-machine][data-actor][data-state][data-status]`
 *   (`data-run-id` on runs, `data-tool-call-id` on tools), `.path` holding the states the actor went through.
 *
 * @example
 * ```ts
 * new Response(inspectorPage({ basePath: "/api" }), { headers: { "content-type": "text/html" } });
 * ```
 */

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;display:grid;grid-template-columns:18rem 1fr 1fr;grid-template-rows:auto 1fr;height:100vh;color:#1d232a}
header{grid-column:1/4;padding:.4rem .8rem;background:#1d3b2a;color:#fff;display:flex;gap:1rem;align-items:center}
header h1{font-size:1rem;margin:0}
section{overflow:auto;padding:.6rem .8rem;border-right:1px solid #ddd}
h2{font-size:.85rem;text-transform:uppercase;color:#56616d;margin:.2rem 0 .6rem}
ul{list-style:none;margin:0;padding-left:1rem}
#sessions ul{padding:0}
#sessions li{padding:.3rem .4rem;border-radius:4px;cursor:pointer}
#sessions li.selected,#sessions li:hover{background:#e7f0ea}
.muted{color:#6b7682;font-size:.8rem}
.entry{padding:.1rem 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.kind{display:inline-block;min-width:6.5rem;font-size:.75rem;color:#3f6b52}
.leaf>.entry{font-weight:600}
.leaf>.entry::after{content:" \\2190 leaf";color:#b5651d}
.label{background:#fff3c4;border-radius:3px;padding:0 .3rem;margin-left:.3rem;font-size:.75rem}
.run{border:1px solid #d6dde3;border-radius:6px;margin:0 0 .6rem;padding:.4rem .6rem}
.run[data-status=running]{border-color:#4f8cc9}
.run[data-status=failed],.run[data-status=aborted]{border-color:#c94f4f}
.tool{font-family:ui-monospace,monospace;font-size:.8rem}
.tool[data-outcome=succeeded]::before{content:"\\2713 ";color:#2f7d4a}
.tool:not([data-outcome=succeeded])::before{content:"\\2717 ";color:#c94f4f}
.tool[data-outcome=running]::before{content:"\\2026 ";color:#4f8cc9}
#machines{margin:0 0 .8rem}
.machine{font-family:ui-monospace,monospace;font-size:.8rem;padding:.1rem 0}
.machine .state{display:inline-block;border-radius:3px;padding:0 .35rem;background:#e7f0ea;color:#1d3b2a;font-weight:600}
.machine[data-status=active] .state{background:#dbe9f7;color:#1f4f80}
.machine[data-status=error] .state,.machine[data-state=failed] .state,.machine[data-state=aborted] .state{background:#f7dbdb;color:#802020}
.machine .path{color:#6b7682;margin-left:.4rem}
.machine[data-machine=tool]{padding-left:1.2rem}
`;

const SCRIPT = `
const base = document.body.dataset.base;
const tokenField = document.getElementById("token");
tokenField.value = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const auth = () => (tokenField.value ? { authorization: "Bearer " + tokenField.value } : {});
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value; else if (key.startsWith("data-")) node.setAttribute(key, value); else node[key] = value;
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
};
const api = async (path) => {
  const response = await fetch(base + path, { headers: auth() });
  if (!response.ok) throw new Error(response.status + " " + (await response.text()));
  return response.json();
};
const status = (text) => { document.getElementById("state").textContent = text; };
let follow;

function entryText(entry) {
  if (entry.type === "message") {
    const message = entry.message;
    const content = typeof message.content === "string" ? message.content : (message.content || []).map((block) => block.text || (block.type === "toolCall" ? block.name + "(" + JSON.stringify(block.arguments) + ")" : "[" + block.type + "]")).join(" ");
    return message.role + ": " + content;
  }
  if (entry.type === "compaction") return "compaction: " + (entry.summary || "").slice(0, 120);
  if (entry.type === "branch_summary") return "branch summary: " + (entry.summary || "").slice(0, 120);
  if (entry.type === "model_change") return "model " + entry.provider + ":" + entry.modelId;
  if (entry.type === "custom") return "custom " + entry.customType;
  return entry.type;
}

function renderTree(nodes, leafId) {
  return el("ul", null, ...nodes.map((node) => el("li", { class: node.entry.id === leafId ? "leaf" : "", "data-entry-id": node.entry.id, "data-type": node.entry.type },
    el("div", { class: "entry", title: node.entry.id }, el("span", { class: "kind" }, node.entry.type === "message" ? node.entry.message.role : node.entry.type), entryText(node.entry), node.label ? el("span", { class: "label" }, node.label) : null),
    node.children.length ? renderTree(node.children, leafId) : null)));
}

function timeline() {
  const runs = new Map();
  const root = document.getElementById("timeline");
  root.replaceChildren();
  const runOf = (id) => runs.get(id);
  const apply = (event) => {
    const data = event.data;
    const runId = event.metadata && event.metadata.runId;
    if (event.type === "run.started") {
      const node = el("div", { class: "run", "data-run-id": data.runId, "data-status": "running" });
      const head = el("div", null, el("b", null, "run " + data.runId.slice(-8)), " ", el("span", { class: "muted" }, data.kind + " \\u00b7 " + event.time));
      const meta = el("div", { class: "muted meta" }, "running");
      const tools = el("ul", { class: "tools" });
      node.append(head, meta, tools);
      root.prepend(node);
      runs.set(data.runId, { node, meta, tools, start: Date.parse(event.time), turns: 0, calls: new Map() });
      return;
    }
    const run = runId && runOf(runId);
    if (!run) return;
    if (event.type === "turn.started") run.turns++;
    if (event.type === "tool.started") {
      const row = el("li", { class: "tool", "data-tool-call-id": data.toolCallId, "data-outcome": "running" }, data.toolName + " \\u00b7 running");
      run.calls.set(data.toolCallId, row);
      run.tools.append(row);
    }
    if (event.type === "tool.ended") {
      const row = run.calls.get(data.toolCallId) || el("li", { class: "tool", "data-tool-call-id": data.toolCallId });
      row.setAttribute("data-outcome", data.outcome);
      row.setAttribute("data-duration-ms", String(data.durationMs));
      row.textContent = data.toolName + " \\u00b7 " + data.outcome + " \\u00b7 " + data.durationMs + " ms";
      if (!row.isConnected) run.tools.append(row);
    }
    if (event.type === "approval.requested") run.tools.append(el("li", { class: "muted approval" }, "approval requested: " + data.toolName));
    if (event.type === "approval.ended") run.tools.append(el("li", { class: "muted approval" }, "approval " + data.status + ": " + data.toolName));
    if (event.type === "run.ended") {
      run.node.setAttribute("data-status", data.status);
      run.meta.textContent = data.status + " \\u00b7 " + (Date.parse(event.time) - run.start) + " ms \\u00b7 " + run.turns + " turn(s)" + (data.error ? " \\u00b7 " + data.error : "");
    }
  };
  return apply;
}

function machines() {
  const root = document.getElementById("machines");
  root.replaceChildren();
  const rows = new Map();
  const runs = new Map();
  return (record) => {
    let row = rows.get(record.actor);
    if (!row) {
      const name = record.machine === "agent" ? "agent" : record.machine === "run" ? "run " + (record.runId || "").slice(-8) : (record.toolName || "tool") + " " + (record.toolCallId || "");
      row = { node: el("div", { class: "machine", "data-machine": record.machine, "data-actor": record.actor }), state: el("span", { class: "state" }), path: el("span", { class: "path" }) };
      if (record.runId && record.machine === "run") row.node.setAttribute("data-run-id", record.runId);
      if (record.toolCallId) row.node.setAttribute("data-tool-call-id", record.toolCallId);
      row.node.append(el("span", { class: "kind" }, name), row.state, row.path);
      rows.set(record.actor, row);
      if (record.machine === "run") {
        const group = el("div", { class: "run-machines" }, row.node);
        runs.set(record.runId, group);
        const agent = root.querySelector('[data-machine="agent"]');
        if (agent) agent.after(group); else root.append(group);
      } else if (record.machine === "tool" && runs.has(record.runId)) runs.get(record.runId).append(row.node);
      else if (record.machine === "agent") root.prepend(row.node);
      else root.append(row.node);
    }
    row.node.setAttribute("data-state", record.state);
    row.node.setAttribute("data-status", record.status);
    row.state.textContent = record.state;
    row.state.title = "after " + record.event + " at " + record.time;
    row.path.textContent = record.path.join(" \u2192 ");
  };
}

async function followMachines(id, signal) {
  const apply = machines();
  const response = await fetch(base + "/sessions/" + encodeURIComponent(id) + "/machines", { headers: auth(), signal });
  if (response.status === 404) {
    document.getElementById("machines").replaceChildren(el("p", { class: "muted" }, "Machine states are not recorded by this service."));
    return;
  }
  await readEvents(response, apply);
}

async function followEvents(id, apply, signal) {
  const response = await fetch(base + "/sessions/" + encodeURIComponent(id) + "/events?from=0", { headers: auth(), signal });
  await readEvents(response, apply);
}

async function readEvents(response, apply) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\\n\\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split("\\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\\n");
      if (data) apply(JSON.parse(data));
    }
  }
}

async function openSession(id) {
  follow?.abort();
  const current = (follow = new AbortController());
  for (const item of document.querySelectorAll("#sessions li")) item.classList.toggle("selected", item.dataset.sessionId === id);
  // The tree is read again after the events that change it (one read in flight, one queued).
  let reading = false;
  let again = false;
  const showTree = async () => {
    if (reading) { again = true; return; }
    reading = true;
    try {
      const detail = await api("/sessions/" + encodeURIComponent(id));
      if (follow !== current) return;
      const tree = document.getElementById("tree");
      tree.dataset.version = String(detail.version);
      tree.replaceChildren(el("h2", null, "Session tree"), el("p", { class: "muted" }, id + " \\u00b7 " + detail.stats.messages.total + " messages \\u00b7 " + detail.stats.toolCalls + " tool calls"), renderTree(detail.tree, detail.leafId));
    } finally {
      reading = false;
      if (again) { again = false; showTree().catch((error) => status(String(error))); }
    }
  };
  await showTree();
  const shown = timeline();
  const apply = (event) => {
    shown(event);
    if (event.type === "entry.appended" || event.type === "leaf.moved") showTree().catch((error) => status(String(error)));
  };
  document.getElementById("timeline-title").hidden = false;
  document.getElementById("machines-title").hidden = false;
  followMachines(id, current.signal).catch((error) => { if (error.name !== "AbortError") status(String(error)); });
  followEvents(id, apply, current.signal).catch((error) => { if (error.name !== "AbortError") status(String(error)); });
}

async function load() {
  try {
    const { sessions } = await api("/sessions");
    document.getElementById("session-list").replaceChildren(...sessions.map((session) => el("li", { "data-session-id": session.id, onclick: () => openSession(session.id) },
      el("div", null, session.name || session.firstMessage), el("div", { class: "muted" }, session.id.slice(0, 13) + " \\u00b7 " + session.messageCount + " msgs \\u00b7 " + session.modified))));
    status(sessions.length + " session(s)");
  } catch (error) {
    status(String(error.message || error));
  }
}
document.getElementById("reload").onclick = load;
load();
`;

/**
 * The inspector page's HTML (see the module contract).
 *
 * @example
 * ```ts
 * const html = inspectorPage({ basePath: "/api" });
 * ```
 */
export function inspectorPage(options: { basePath: string }): string {
  const base = options.basePath.replace(/[^A-Za-z0-9/_.-]/g, "");
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Arbor inspector</title><meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head>
<body data-base="${base}">
<header><h1>Arbor inspector</h1><label>token <input id="token" type="password" size="24"></label><button id="reload">Load sessions</button><span id="state" class="muted"></span></header>
<section id="sessions"><h2>Sessions</h2><ul id="session-list"></ul></section>
<section id="tree"><h2>Session tree</h2><p class="muted">Choose a session.</p></section>
<section><h2 id="machines-title" hidden>Machines (live, content redacted)</h2><div id="machines"></div><h2 id="timeline-title" hidden>Run timeline (live)</h2><div id="timeline"></div></section>
<script type="module">${SCRIPT}</script>
</body>
</html>`;
}
