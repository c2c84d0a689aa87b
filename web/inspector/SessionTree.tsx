/**
 * The session tree (`GET {base}/sessions/:id`): every entry as `[data-entry-id][data-type]`,
 * branches as nested lists, the leaf `.leaf`, labels `.label` (on their target), a label entry
 * with its text and target (`"checkpoint" on 0192ab3c`), compactions and branch summaries named;
 * `#tree[data-version]` is the stream version shown.
 */
export interface TreeNode {
  entry: any;
  label?: string;
  children: TreeNode[];
}

export interface SessionDetail {
  version: number;
  leafId: string | null;
  tree: TreeNode[];
  stats: { messages: { total: number }; toolCalls: number };
}

function entryText(entry: any): string {
  if (entry.type === "message") {
    const message = entry.message;
    const content =
      typeof message.content === "string"
        ? message.content
        : ((message.content ?? []) as any[])
            .map((block) => block.text || (block.type === "toolCall" ? `${block.name}(${JSON.stringify(block.arguments)})` : `[${block.type}]`))
            .join(" ");
    return `${message.role}: ${content}`;
  }
  if (entry.type === "compaction") return `compaction: ${(entry.summary ?? "").slice(0, 120)}`;
  if (entry.type === "branch_summary") return `branch summary: ${(entry.summary ?? "").slice(0, 120)}`;
  if (entry.type === "model_change") return `model ${entry.provider}:${entry.modelId}`;
  if (entry.type === "custom") return `custom ${entry.customType}`;
  // A label entry names its target; an empty label clears the target's label.
  if (entry.type === "label") return entry.label ? `"${entry.label}" on ${String(entry.targetId).slice(0, 8)}` : `cleared on ${String(entry.targetId).slice(0, 8)}`;
  return entry.type;
}

function Nodes(props: { nodes: TreeNode[]; leafId: string | null }) {
  return (
    <ul>
      {props.nodes.map((node) => (
        <li key={node.entry.id} className={node.entry.id === props.leafId ? "leaf" : ""} data-entry-id={node.entry.id} data-type={node.entry.type}>
          <div className="entry" title={node.entry.id}>
            <span className="kind">{node.entry.type === "message" ? node.entry.message.role : node.entry.type}</span>
            {entryText(node.entry)}
            {node.label ? <span className="label">{node.label}</span> : null}
          </div>
          {node.children.length ? <Nodes nodes={node.children} leafId={props.leafId} /> : null}
        </li>
      ))}
    </ul>
  );
}

export function SessionTree(props: { id: string | undefined; detail: SessionDetail | undefined }) {
  const { id, detail } = props;
  return (
    <section id="tree" data-version={detail ? String(detail.version) : undefined}>
      <h2>Session tree</h2>
      {id && detail ? (
        <>
          <p className="muted">
            {id} · {detail.stats.messages.total} messages · {detail.stats.toolCalls} tool calls
          </p>
          <Nodes nodes={detail.tree} leafId={detail.leafId} />
        </>
      ) : (
        <p className="muted">Choose a session.</p>
      )}
    </section>
  );
}
