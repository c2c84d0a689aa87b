/**
 * Prints a run for people (streamed assistant text, one `• name args → ok|error (N ms)` line per tool call with the first lines of its output, a
 * spinner on stderr when both streams are TTYs) or as JSON lines of the logged events (`--json`). Text whose deltas the log already deleted is
 * printed from its entry. The spinner never touches stdin (it would reset raw mode under the chat's editor). `stop()` unsubscribes.
 */
import ora, { type Ora } from "ora";
import type { Observable } from "rxjs";
import { isKnownEntry } from "../core/entries.ts";
import type { ToolCall } from "../core/messages.ts";
import type { StoredEvent } from "../store/event-log.ts";
import { isArborEvent } from "../store/events/catalogue.ts";
import { emptyActivity, foldActivity, type SessionActivity } from "../store/session/session-activity.ts";
import { skipsEvents } from "../store/events/event-families.ts";
import { ignoreUnknown } from "../core/exhaustive.ts";

/** Events `arbor run` prints nothing for. */
const printerSkips = skipsEvents(["session", "leaf", "queue", "approval", "hook", "agent", "summary", "workflow", "step", "workspace", "memory", "task", "control", "elicitation", "budget"], ["run.resumed", "turn.ended", "message.started", "tool.updated", "retry.started", "retry.ended"]);

const ARG_PREVIEW = 80;
/** Lines of a tool's output shown under its status line. */
export const TOOL_OUTPUT_LINES = 8;

/** The first lines of a tool's output, indented, and how many were left out. */
export function toolOutputLines(text: string, max = TOOL_OUTPUT_LINES): string[] {
  const lines = text.replace(/\s+$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") return [];
  const shown = lines.slice(0, max).map((item) => `    ${item}`);
  return lines.length > max ? [...shown, `    … ${lines.length - max} more line(s)`] : shown;
}

/** True when a spinner can be drawn on stderr: a TTY of at least one column, not TERM=dumb. */
function canSpin(): boolean {
  const err = process.stderr;
  return err.isTTY === true && (err.columns ?? 0) > 0 && process.env.TERM !== "dumb";
}

function preview(args: Record<string, unknown>): string {
  const text = typeof args.command === "string" ? args.command : typeof args.path === "string" ? args.path : JSON.stringify(args);
  const flat = text.replace(/\s+/g, " ");
  return flat.length > ARG_PREVIEW ? `${flat.slice(0, ARG_PREVIEW - 1)}…` : flat;
}

/** A running printer. */
export interface RunPrinter {
  stop(): void;
  /** Resolves once the event at stream `version` was delivered; logs that deliver asynchronously (PostgreSQL) need it before `stop()`. */
  caughtUp(version: number): Promise<void>;
  /** True once an error line (model error or run failure) was printed. */
  reportedError(): boolean;
}

/** Subscribes to `events$` and prints what happens after `afterPosition`. */
export function printRun(events$: Observable<StoredEvent>, options: { json: boolean; afterPosition: number }): RunPrinter {
  const out = process.stdout;
  const spinnerOn = !options.json && out.isTTY === true;
  let spinner: Ora | undefined;
  const unspin = () => {
    spinner?.stop();
    spinner = undefined;
  };
  const spin = (text: string) => {
    if (!spinnerOn) return;
    // A zero-width terminal: ora would count infinitely many lines to clear.
    if (!canSpin()) return unspin();
    if (!spinner) spinner = ora({ text, stream: process.stderr, discardStdin: false }).start();
    else spinner.text = text;
  };
  const onResize = () => {
    if (!canSpin()) unspin();
  };
  if (spinnerOn) process.stderr.on("resize", onResize);
  // Tool results by entry id (their output is printed under the call's status line).
  const resultText = new Map<string, string>();
  const awaitingResult = new Set<string>();
  const printOutput = (text: string) => {
    for (const item of toolOutputLines(text)) line(item);
  };
  // The activity projection of each stream seen (one per session): the open run's tool calls.
  const activities = new Map<string, SessionActivity>();
  // Every tool call of an assistant message seen per stream (catch-up included): a resumed run
  // (after `arbor approve`) runs calls that an earlier run's assistant message made.
  const madeCalls = new Map<string, Map<string, ToolCall>>();
  const callOf = (streamId: string, id: string): ToolCall | undefined =>
    activities.get(streamId)?.openRun?.calls.find((call) => call.id === id) ?? madeCalls.get(streamId)?.get(id);
  const noteCalls = (event: StoredEvent) => {
    if (!isArborEvent(event) || event.type !== "entry.appended") return;
    const { entry } = event.data;
    const message = isKnownEntry(entry) && entry.type === "message" ? entry.message : undefined;
    if (message?.role !== "assistant") return;
    for (const block of message.content) {
      if (block.type !== "toolCall") continue;
      const calls = madeCalls.get(event.streamId) ?? new Map<string, ToolCall>();
      calls.set(block.id, block);
      madeCalls.set(event.streamId, calls);
    }
  };
  let midLine = false;
  let errorShown = false;
  // Text printed from each message's deltas, and the text of committed assistant entries, by id.
  const printed = new Map<string, string>();
  const entryText = new Map<string, string>();
  const write = (text: string) => {
    unspin();
    out.write(text);
    midLine = !text.endsWith("\n");
  };
  const line = (text: string) => write(`${midLine ? "\n" : ""}${text}\n`);

  let seenVersion = 0;
  let ended = false;
  const waiters: { version: number; resolve: () => void }[] = [];
  const subscription = events$.subscribe({
    next(event) {
      seenVersion = Math.max(seenVersion, event.version);
      for (const waiter of waiters.filter((item) => item.version <= seenVersion)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        queueMicrotask(waiter.resolve);
      }
      if (!options.json) {
        activities.set(event.streamId, foldActivity(activities.get(event.streamId) ?? emptyActivity(), event));
        noteCalls(event);
      }
      if (event.globalPosition <= options.afterPosition) return;
      if (options.json) {
        out.write(`${JSON.stringify(event)}\n`);
        return;
      }
      if (!isArborEvent(event)) return;
      if (printerSkips(event)) return;
      switch (event.type) {
        case "run.started":
          if (midLine) write("\n");
          break;
        case "turn.started":
          spin("waiting for the model…");
          break;
        case "message.delta":
          if (event.data.kind === "text") {
            write(event.data.delta);
            printed.set(event.data.messageId, (printed.get(event.data.messageId) ?? "") + event.data.delta);
          }
          break;
        case "message.ended": {
          if (event.data.role !== "assistant") break;
          const full = event.data.entryId === undefined ? undefined : entryText.get(event.data.entryId);
          const sent = printed.get(event.data.messageId) ?? "";
          if (full !== undefined && full.length > sent.length && full.startsWith(sent)) write(full.slice(sent.length));
          printed.delete(event.data.messageId);
          if (event.data.entryId !== undefined) entryText.delete(event.data.entryId);
          // Each answer ends its line, so consecutive turns (steering, follow-ups) never run together.
          if (midLine) write("\n");
          break;
        }
        case "entry.appended": {
          const { entry } = event.data;
          const message = isKnownEntry(entry) && entry.type === "message" ? entry.message : undefined;
          if (message?.role === "toolResult") {
            const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
            if (awaitingResult.delete(entry.id)) printOutput(text);
            else resultText.set(entry.id, text);
          }
          if (message?.role === "assistant") {
            entryText.set(entry.id, message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(""));
            if (message.stopReason === "error" && message.errorMessage) {
              unspin();
              process.stderr.write(`${midLine ? "\n" : ""}arbor: model error: ${message.errorMessage}\n`);
              errorShown = true;
              midLine = false;
            }
          }
          break;
        }
        case "tool.started": {
          const call = callOf(event.streamId, event.data.toolCallId);
          spin(`${event.data.toolName} ${call ? preview(call.arguments) : ""}`);
          break;
        }
        case "tool.ended": {
          const { data } = event;
          const call = callOf(event.streamId, data.toolCallId);
          const status = data.isError ? `error (${data.outcome})` : "ok";
          line(`• ${data.toolName} ${call ? preview(call.arguments) : ""} → ${status} (${Math.round(data.durationMs)} ms)`);
          if (data.entryId !== undefined) {
            const text = resultText.get(data.entryId);
            if (text === undefined) awaitingResult.add(data.entryId);
            else {
              resultText.delete(data.entryId);
              printOutput(text);
            }
          }
          break;
        }
        case "retry.scheduled":
          line(`… retrying in ${Math.round(event.data.delayMs / 1000)} s (attempt ${event.data.attempt}): ${event.data.error}`);
          break;
        case "run.ended": {
          const { data } = event;
          unspin();
          if (midLine) write("\n");
          if (data.status === "failed" && !errorShown) {
            process.stderr.write(`arbor: run failed: ${data.error}\n`);
            errorShown = true;
          }
          if (data.status === "aborted") process.stderr.write("arbor: run aborted\n");
          break;
        }
        default:
          ignoreUnknown(event);
      }
    },
    // A subscription that ends (log closed, read error) releases whoever waits to catch up.
    error: () => release(),
    complete: () => release(),
  });
  function release(): void {
    ended = true;
    for (const waiter of waiters.splice(0)) waiter.resolve();
  }
  return {
    reportedError: () => errorShown,
    caughtUp: (version) => (ended || version <= seenVersion ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ version, resolve }))),
    stop() {
      subscription.unsubscribe();
      process.stderr.off("resize", onResize);
      unspin();
      if (midLine) out.write("\n");
      midLine = false;
    },
  };
}
