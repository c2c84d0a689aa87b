/**
 * Read-only commands: `arbor sessions` (with each session's spend), `tree`, `context`, `events` (`--follow` tails live appends, other processes'
 * included). `--json` prints machine-readable JSON (JSON lines for events); otherwise text for people.
 */
import type { Command } from "commander";
import type { SessionStats, SessionSummary } from "../../store/session-types.ts";
import { print } from "../print-line.ts";
import { printable } from "../printable.ts";
import { warnIfDamaged } from "../damaged-warning.ts";
import type { CliStore, StoreFlags } from "../store-context.ts";
import { sessionStreamId } from "../../store/events/session-events.ts";

/** Loaded on first use by an action, so that `arbor --help` does not load the log, the models and their schemas. */
const loadActions = async () => ({
  ...(await import("../store-context.ts")),
  ...(await import("../render-tree.ts")),
  ...(await import("../../core/messages.ts")),
});

/** A session summary with what it spent: token totals and cost (US dollars) from `getStats()`. */
type SummaryWithSpend = SessionSummary & { tokens: SessionStats["tokens"]; cost: number | null };

async function withSpend<T extends SessionSummary>(store: CliStore, sessions: T[]): Promise<(T & SummaryWithSpend)[]> {
  const result: (T & SummaryWithSpend)[] = [];
  for (const { stats, ...session } of sessions) {
    // The list's rows carry the statistics (kept by the log's writer); a row without them is opened. A damaged one does not open: nothing known.
    const spend = session.damaged ? { tokens: { input: null, output: null, cacheRead: null, cacheWrite: null, total: null }, cost: null } : (stats ?? (await store.repo.open(session.id)).view.getStats());
    result.push({ ...(session as T), tokens: spend.tokens, cost: spend.cost });
  }
  return result;
}

/** `12,345 tokens (10,000 cached) $0.0123`; unknown figures are left out, never shown as 0. */
function spendText(session: SummaryWithSpend): string {
  const { total, cacheRead } = session.tokens;
  const parts = [total === null ? undefined : `${total.toLocaleString("en-US")} tokens${cacheRead ? ` (${cacheRead.toLocaleString("en-US")} cached)` : ""}`, session.cost === null ? undefined : `$${session.cost.toFixed(4)}`];
  return parts.filter((part) => part !== undefined).join(" ");
}

/** Registers the read-only commands on `program`. */
export function registerInspectCommands(program: Command, globals: () => StoreFlags): void {
  program
    .command("sessions")
    .description("List sessions (short id, id, time of the last change), the most recently changed first")
    .option("--json", "print JSON")
    .action(async (flags: { json?: boolean }) => {
      const { withStore, shortSessionId, storeExists } = await loadActions();
      // No log yet is the one case of "no sessions"; a folder, a foreign file or a bad path is an error (exit 2).
      if (!storeExists(globals())) {
        if (flags.json) return print("[]");
        const where = globals().db !== undefined ? "no Arbor log at the --db path" : process.env.ARBOR_DB ? "no Arbor log at ARBOR_DB" : "no Arbor log here; the default is .arbor/arbor.db in the current directory";
        return print(`No sessions yet (${where}). Start one with: arbor run "your prompt"`);
      }
      await withStore(globals(), { readOnly: true }, async (store) => {
        const sessions = await withSpend(store, await store.listNewestFirst());
        // A damaged session is listed, marked, and warned about (a warning: the exit code stays 0); the other sessions list as ever.
        for (const session of sessions) {
          warnIfDamaged(session);
        }
        if (flags.json) return print(JSON.stringify(sessions, null, 2));
        if (sessions.length === 0) return print(`No sessions in ${store.dbPath}.`);
        for (const session of sessions) {
          if (session.damaged) {
            print(printable(`${shortSessionId(session.id)}  ${session.id}  changed ${session.updatedAt}  DAMAGED (${session.damaged.code}): its stored data does not read; see arbor doctor`));
            continue;
          }
          const name = session.name ? ` "${session.name}"` : "";
          const first = session.firstMessage.replace(/\s+/g, " ").slice(0, 60);
          const spend = spendText(session);
          print(printable(`${shortSessionId(session.id)}  ${session.id}${name}  changed ${session.updatedAt}  ${session.messageCount} messages  ${spend ? `${spend}  ` : ""}${first}`));
        }
      });
    });

  program
    .command("tree")
    .description("Show a session's tree; * marks the leaf")
    .argument("<session>", "session id, unique prefix, or latest")
    .option("--json", "print JSON")
    .action(async (reference: string, flags: { json?: boolean }) => {
      const { withStore, renderTree } = await loadActions();
      await withStore(globals(), { readOnly: true }, async (store) => {
        const session = await store.openSession(reference);
        const view = session.view;
        if (flags.json) {
          return print(JSON.stringify({ sessionId: session.id, leafId: view.leafId, name: view.name, tree: view.getTree() }, null, 2));
        }
        print(`session ${session.id}${view.name ? ` "${view.name}"` : ""}`);
        print(renderTree(view.getTree(), { leafId: view.leafId }) || "(empty)");
      });
    });

  program
    .command("context")
    .description("Show the messages the model would see")
    .argument("<session>", "session id, unique prefix, or latest")
    .option("--leaf <entry>", "build the context for this entry (id, prefix or label) instead of the leaf")
    .option("--json", "print JSON")
    .action(async (reference: string, flags: { leaf?: string; json?: boolean }) => {
      const { withStore, resolveEntryId, messageText } = await loadActions();
      await withStore(globals(), { readOnly: true }, async (store) => {
        const session = await store.openSession(reference);
        const leafId = flags.leaf === undefined ? undefined : resolveEntryId(session, flags.leaf);
        const context = session.view.buildContext(leafId === undefined ? undefined : { leafId });
        if (flags.json) {
          const { leafId: contextLeaf, messages, thinkingLevel, model, diagnostics } = context;
          return print(JSON.stringify({ leafId: contextLeaf, messages, thinkingLevel, model, diagnostics }, null, 2));
        }
        for (const message of context.messages) {
          const calls = message.role === "assistant" ? message.content.filter((block) => block.type === "toolCall") : [];
          // An aborted or failed reply stays in the session's context but no model request carries it (the model adapters drop it).
          const unsent = message.role === "assistant" && (message.stopReason === "aborted" || message.stopReason === "error") ? ` (${message.stopReason}: not sent to the model)` : "";
          print(`[${message.role}${unsent}] ${messageText(message)}`);
          for (const call of calls) print(`  → ${call.name}(${JSON.stringify(call.arguments)})`);
        }
        for (const diagnostic of context.diagnostics) print(`! ${diagnostic.message}`);
      });
    });

  program
    .command("events")
    .description("Print a session's logged events")
    .argument("<session>", "session id, unique prefix, or latest")
    .option("--from <position>", "start after this global position", "0")
    .option("--follow", "keep printing new events")
    .option("--json", "print JSON lines")
    .action(async (reference: string, flags: { from: string; follow?: boolean; json?: boolean }) => {
      const { withStore } = await loadActions();
      await withStore(globals(), { readOnly: true }, async (store) => {
        const fromPosition = Number(flags.from);
        if (!Number.isInteger(fromPosition) || fromPosition < 0) {
          throw new Error(`Bad --from "${flags.from}": expected a global position (a whole number ≥ 0).`);
        }
        const session = await store.openSession(reference);
        const streamId = sessionStreamId(session.id);
        const printEvent = (event: { globalPosition: number; version: number; type: string; time: string; data: unknown }) =>
          print(flags.json ? JSON.stringify(event) : `${event.globalPosition}\t${event.version}\t${event.time}\t${event.type}`);
        if (!flags.follow) {
          const events = await store.repo.log.readStream(streamId);
          for (const event of events) if (event.globalPosition > fromPosition) printEvent(event);
          return;
        }
        await new Promise<void>((resolve, reject) => {
          const subscription = store.repo.log.subscribe({ streamId, fromPosition }).subscribe({ next: printEvent, error: reject });
          process.once("SIGINT", () => {
            subscription.unsubscribe();
            resolve();
          });
        });
      });
    });
}
