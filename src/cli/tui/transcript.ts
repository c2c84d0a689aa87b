/**
 * The chat TUI's transcript: the conversation as pi-tui components, built from the current branch and kept up to date from logged events. Assistant
 * text streams from deltas and is then set from the committed entry (authoritative); tool calls are one line each, expandable with Ctrl+O; a
 * redrawn branch takes outcomes and durations from the log.
 */
import { Container, Markdown, replaceControlCharacters, stripTerminalSequences, truncateToWidth, wrapTextWithAnsi, type Component } from "@earendil-works/pi-tui";
import { isKnownEntry, type SessionEntry } from "../../core/entries.ts";
import type { AgentMessage, ToolCall } from "../../core/messages.ts";
import type { ArborEvent, ArborEventData } from "../../store/events/catalogue.ts";
import type { ShellDetails } from "../shell-line.ts";
import { markdownTheme, style, userBackground } from "./theme.ts";
import { skipsEvents } from "../../store/events/event-families.ts";
import { ignoreUnknown } from "../../core/exhaustive.ts";

/** Events the transcript shows nothing for. */
const transcriptSkips = skipsEvents(["session", "leaf", "turn", "queue", "approval", "hook", "agent", "summary", "workflow", "step", "workspace", "memory", "task", "control", "elicitation", "budget"], ["run.started", "run.resumed", "message.started", "tool.updated", "retry.started", "retry.ended"]);

type ToolEnded = ArborEventData<"tool.ended">;
type RunEnded = ArborEventData<"run.ended">;

function isShellDetails(value: unknown): value is ShellDetails {
  const details = value as Partial<ShellDetails> | undefined;
  return typeof details?.command === "string" && typeof details.output === "string" && (typeof details.exitCode === "number" || details.exitCode === null);
}

const ARG_PREVIEW = 80;
/** Lines of one tool's output shown when expanded (the rest is counted). */
export const EXPANDED_OUTPUT_LINES = 200;

function argsPreview(args: Record<string, unknown>): string {
  const text = typeof args.command === "string" ? args.command : typeof args.path === "string" ? args.path : JSON.stringify(args);
  const flat = text.replace(/\s+/g, " ");
  return flat.length > ARG_PREVIEW ? `${flat.slice(0, ARG_PREVIEW - 1)}…` : flat;
}

/** Text safe to draw: no terminal sequences or control characters, tabs as spaces. */
function clean(text: string): string {
  return stripTerminalSequences(text.replace(/\t/g, "    ").replace(/\r\n/g, "\n"))
    .split("\n")
    .map((line) => replaceControlCharacters(line))
    .join("\n");
}

function textOf(message: AgentMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.flatMap((block: { type?: string; text?: string }) => (block.type === "text" && typeof block.text === "string" ? [block.text] : [])).join("");
}

/** Lines of text, wrapped to the width and not padded (so copied text has no trailing spaces). */
export class Lines implements Component {
  private cache?: { width: number; lines: string[] };

  constructor(private text = "") {}

  setText(text: string): void {
    this.text = text;
    this.cache = undefined;
  }

  invalidate(): void {
    this.cache = undefined;
  }

  render(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const lines = this.text === "" ? [] : this.text.split("\n").flatMap((line) => (line === "" ? [""] : wrapTextWithAnsi(line, Math.max(1, width)).map((part) => truncateToWidth(part, width))));
    this.cache = { width, lines };
    return lines;
  }
}

/** Markdown without the trailing padding pi-tui adds (copied text and screen reads stay clean). */
class AssistantText extends Markdown {
  private trimmed?: { from: readonly string[]; lines: string[] };

  override render(width: number): readonly string[] {
    const lines = super.render(width);
    if (this.trimmed?.from !== lines) this.trimmed = { from: lines, lines: lines.map((line) => line.replace(/ +((?:\x1b\[[0-9;]*m)*)$/, "$1")) };
    return this.trimmed.lines;
  }
}

/** One tool call: a status line, and its output when expanded. */
export class ToolView implements Component {
  private state: "waiting" | "approval" | "running" | "done" = "waiting";
  private ending = "";
  private isError = false;
  private output: string[] = [];
  private cache?: { width: number; expanded: boolean; lines: string[] };

  constructor(
    private readonly name: string,
    private readonly args: Record<string, unknown>,
    private readonly expanded: () => boolean,
  ) {}

  /** The call waits for the user's approval. */
  awaitingApproval(): void {
    if (this.state === "done") return;
    this.state = "approval";
    this.invalidate();
  }

  started(): void {
    this.state = "running";
    this.invalidate();
  }

  /** `durationMs` is left out for a call drawn from the branch (its timing is not in the entry). */
  ended(data: { isError: boolean; outcome: string; durationMs?: number }): void {
    this.state = "done";
    this.isError = data.isError;
    const took = data.durationMs === undefined ? "" : ` (${Math.round(data.durationMs)} ms)`;
    this.ending = data.isError ? `error (${data.outcome})${took}` : `ok${took}`;
    this.invalidate();
  }

  setOutput(text: string): void {
    const lines = clean(text).replace(/\s+$/, "").split("\n");
    this.output = lines.length === 1 && lines[0] === "" ? [] : lines;
    this.invalidate();
  }

  invalidate(): void {
    this.cache = undefined;
  }

  render(width: number): string[] {
    const expanded = this.expanded();
    if (this.cache && this.cache.width === width && this.cache.expanded === expanded) return this.cache.lines;
    const head = `• ${this.name} ${argsPreview(this.args)}`;
    const status =
      this.state === "done"
        ? this.isError
          ? style.red(this.ending)
          : style.green(this.ending)
        : this.state === "running"
          ? style.yellow("running…")
          : this.state === "approval"
            ? style.yellow("waiting for approval")
            : style.gray("waiting");
    const more = !expanded && this.output.length > 0 ? style.gray(` · ${this.output.length} line(s), ctrl+o shows`) : "";
    const firstError = !expanded && this.isError && this.output.length > 0 ? `: ${this.output[0]}` : "";
    const lines = [truncateToWidth(`${style.bold(head)} → ${status}${firstError}${more}`, width)];
    if (expanded) {
      const inner = Math.max(1, width - 4);
      for (const line of this.output.slice(0, EXPANDED_OUTPUT_LINES)) {
        for (const part of wrapTextWithAnsi(line, inner)) lines.push(truncateToWidth(`    ${this.isError ? style.red(part) : style.gray(part)}`, width));
      }
      if (this.output.length > EXPANDED_OUTPUT_LINES) lines.push(truncateToWidth(`    … ${this.output.length - EXPANDED_OUTPUT_LINES} more line(s)`, width));
    }
    this.cache = { width, expanded, lines };
    return lines;
  }
}

/** The conversation (see the module contract). */
export class Transcript extends Container {
  private expandedTools = false;
  private readonly tools = new Map<string, ToolView>();
  /** Streaming assistant text by message id, and the entry ids already drawn. */
  private readonly streaming = new Map<string, { view: Markdown; text: string; thinking?: Lines; thinkingText: string }>();
  private readonly drawn = new Set<string>();
  private openMessageId: string | undefined;
  /** While a branch is drawn again: each call's logged end, and run endings by the entry before them. */
  private replay: { tools: Map<string, ToolEnded>; runs: Map<string, RunEnded[]> } = { tools: new Map(), runs: new Map() };

  /** True while tool output is shown. */
  get expanded(): boolean {
    return this.expandedTools;
  }

  /** Ctrl+O: shows or hides every tool call's output. */
  toggleExpanded(): void {
    this.expandedTools = !this.expandedTools;
    for (const view of this.tools.values()) view.invalidate();
    this.invalidate();
  }

  /** Marks a call as waiting for approval (its run stopped to ask). */
  awaitingApproval(toolCallId: string): void {
    this.tools.get(toolCallId)?.awaitingApproval();
    this.invalidate();
  }

  /** Marks an approved call as running (its `tool.started` was logged before the question). */
  approved(toolCallId: string): void {
    this.tools.get(toolCallId)?.started();
    this.invalidate();
  }

  /** A plain line (or lines) in the transcript. */
  notice(text: string, tone: "plain" | "dim" | "error" | "warn" = "dim"): void {
    const paint = tone === "error" ? style.red : tone === "warn" ? style.yellow : tone === "dim" ? style.gray : (value: string) => value;
    this.addChild(new Lines(clean(text).split("\n").map(paint).join("\n")));
  }

  /** A user message. */
  user(text: string): void {
    this.addChild(new Lines(clean(text).split("\n").map((line) => userBackground(` ${line} `)).join("\n")));
  }

  private assistantText(text: string): Markdown {
    const view = new AssistantText(clean(text), 0, 0, markdownTheme);
    this.addChild(view);
    return view;
  }

  private toolCalls(calls: ToolCall[]): void {
    for (const call of calls) {
      if (this.tools.has(call.id)) continue;
      const view = new ToolView(call.name, call.arguments, () => this.expandedTools);
      this.tools.set(call.id, view);
      this.addChild(view);
    }
  }

  /** Draws one committed entry (a branch being shown, or a live append). */
  private entry(entry: SessionEntry, live: boolean): void {
    if (this.drawn.has(entry.id)) return;
    this.drawn.add(entry.id);
    if (!isKnownEntry(entry)) return;
    if (entry.type === "compaction") return this.notice(`(compacted: ${String((entry as { tokensBefore?: number }).tokensBefore)} tokens before)`);
    if (entry.type === "branch_summary") return this.notice(`(branch summary) ${String((entry as { summary?: string }).summary ?? "")}`);
    if (entry.type === "custom_message" && !live) {
      const custom = entry as { display?: boolean; content?: unknown; details?: unknown };
      if (isShellDetails(custom.details)) this.shellResult(custom.details);
      else if (custom.display) this.notice(textOf(custom as unknown as AgentMessage));
      return;
    }
    if (entry.type !== "message") return;
    const { message } = entry;
    if (message.role === "user") return this.user(textOf(message));
    if (message.role === "assistant") {
      const text = textOf(message);
      const open = live && this.openMessageId ? this.streaming.get(this.openMessageId) : undefined;
      if (open) {
        open.view.setText(clean(text));
        open.thinking?.setText("");
      } else if (text.trim() !== "") this.assistantText(text);
      this.toolCalls(message.content.filter((block): block is ToolCall => block.type === "toolCall"));
      if (message.stopReason === "error" && message.errorMessage) this.notice(`model error: ${message.errorMessage}`, "error");
      return;
    }
    if (message.role === "toolResult") {
      const view = this.tools.get(message.toolCallId);
      view?.setOutput(textOf(message));
      if (!live) view?.ended(this.replay.tools.get(message.toolCallId) ?? { isError: message.isError === true, outcome: "failed" });
    }
  }

  /** A `!cmd` result, drawn as when it ran: `$ cmd`, its output, its exit code when not 0. */
  shellResult(result: ShellDetails): void {
    this.notice(`$ ${result.command}`, "dim");
    if (result.output.trim() !== "") this.notice(result.output.replace(/\n$/, ""), "plain");
    if (result.exitCode !== 0) this.notice(`(exit ${result.exitCode ?? "killed"})`, "warn");
  }

  private runEnded(data: RunEnded): void {
    if (data.status === "failed") this.notice(`run failed: ${data.error}`, "error");
    if (data.status === "aborted") this.notice("run aborted", "warn");
  }

  /**
   * Clears the transcript and draws `entries` (a branch, root first); `events` are the session's logged events in log order, for what the entries do
   * not hold (tool outcomes and durations, how runs ended).
   */
  showBranch(entries: readonly SessionEntry[], events: readonly ArborEvent[] = []): void {
    this.clear();
    this.tools.clear();
    this.streaming.clear();
    this.drawn.clear();
    this.openMessageId = undefined;
    const tools = new Map<string, ToolEnded>();
    const runs = new Map<string, RunEnded[]>();
    let lastEntry: string | undefined;
    for (const event of events) {
      if (event.type === "entry.appended") lastEntry = event.data.entry.id;
      else if (event.type === "tool.ended") tools.set(event.data.toolCallId, event.data);
      else if (event.type === "run.ended" && lastEntry !== undefined) runs.set(lastEntry, [...(runs.get(lastEntry) ?? []), event.data]);
    }
    this.replay = { tools, runs };
    for (const entry of entries) {
      this.entry(entry, false);
      for (const ended of runs.get(entry.id) ?? []) this.runEnded(ended);
    }
    this.replay = { tools: new Map(), runs: new Map() };
  }

  /** Applies one live event. */
  apply(event: ArborEvent): void {
    if (transcriptSkips(event)) return;
    switch (event.type) {
      case "message.delta": {
        const { data } = event;
        if (data.kind !== "text" && data.kind !== "thinking") return;
        let open = this.streaming.get(data.messageId);
        if (!open) {
          open = { view: this.assistantText(""), text: "", thinkingText: "" };
          this.streaming.set(data.messageId, open);
          this.openMessageId = data.messageId;
        }
        if (data.kind === "text") {
          open.text += data.delta;
          open.view.setText(clean(open.text));
        } else {
          if (!open.thinking) {
            open.thinking = new Lines();
            this.children.splice(this.children.indexOf(open.view), 0, open.thinking);
          }
          open.thinkingText += data.delta;
          open.thinking.setText(style.italic(style.gray(clean(open.thinkingText))));
        }
        this.invalidate();
        return;
      }
      case "entry.appended":
        this.entry(event.data.entry, true);
        return;
      case "message.ended":
        if (event.data.messageId === this.openMessageId) this.openMessageId = undefined;
        this.streaming.delete(event.data.messageId);
        return;
      case "tool.started":
        this.tools.get(event.data.toolCallId)?.started();
        this.invalidate();
        return;
      case "tool.ended":
        this.tools.get(event.data.toolCallId)?.ended(event.data);
        this.invalidate();
        return;
      case "retry.scheduled":
        this.notice(`… retrying in ${Math.round(event.data.delayMs / 1000)} s (attempt ${event.data.attempt}): ${event.data.error}`, "warn");
        return;
      case "run.ended":
        this.runEnded(event.data);
        return;
      default:
        return ignoreUnknown(event);
    }
  }
}
