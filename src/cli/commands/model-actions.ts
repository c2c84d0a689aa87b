/**
 * The bodies of the model commands (`run`, `checkout`, `compact`), loaded lazily by `model-commands.ts` so that model-free commands start fast.
 * Contracts: see `model-commands.ts`.
 */
import { refuseForeignResumeFolder, restoreFilesForCheckout } from "../workspace-actions.ts";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { loadCliResources } from "../cli-resources.ts";
import type { MessageEntry } from "../../core/entries.ts";
import { messageText } from "../../core/messages.ts";
import { moveTo } from "../../compaction/branch-summary.ts";
import { createCliHarness, resolveSessionCwd } from "../agent-setup.ts";
import { CliError } from "../cli-error.ts";
import { parseThinkingLevel, resolveModelSettings, settingsSecrets, type ModelFlags, type ResolvedModelSettings } from "../config.ts";
import { promptFromArgs } from "../prompt-args.ts";
import { pickSession } from "../session-picker.ts";
import type { RunFlags } from "./model-commands.ts";
import { printRun } from "../run-printer.ts";
import { recordEndpoint, recordedEndpoint, resolveEntryId, shortSessionId, withStore, type StoreFlags } from "../store-context.ts";
import { ApprovalPendingError, CompactionError, NothingToResumeError, RunOwnedError } from "../../core/errors.ts";
import { DEFAULT_COMPACTION_SETTINGS } from "../../compaction/settings.ts";
import type { RunOutcome } from "../../machines/agent-types.ts";
import { sessionActorOf } from "../../machines/session-actor.ts";
import type { PromptOptions } from "../../harness/harness-session-types.ts";
import { askApprovals, pendingLine } from "./approval-actions.ts";
import { budgetFlags } from "../budget-flags.ts";

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

/** Starts the local Stately inspector for `--inspect [port]` (on `--inspect-host`, default 127.0.0.1) and prints where to look. */
export async function startInspector(flag: string | boolean | undefined, hostFlag?: string): Promise<{ inspect: unknown; stop(): void } | undefined> {
  if (flag === undefined || flag === false) {
    if (hostFlag !== undefined) throw new CliError("--inspect-host needs --inspect.");
    return undefined;
  }
  const port = flag === true ? 8080 : Number(flag);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new CliError(`Bad --inspect port "${String(flag)}": expected a number from 1 to 65535.`);
  const host = hostFlag ?? "127.0.0.1";
  if (host.trim() === "") throw new CliError("Bad --inspect-host: empty; e.g. 127.0.0.1 (the default) or 0.0.0.0 for every interface.");
  const { createArborInspector } = await import("../../machines/inspect.ts");
  const inspector = createArborInspector({ port, host });
  try {
    await inspector.ready;
  } catch (error) {
    inspector.stop();
    throw new CliError(`--inspect: ${(error as Error).message}`);
  }
  const shown = host === "127.0.0.1" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  const reach = host === "127.0.0.1" || host === "::1" || host === "localhost" ? "this machine only" : `listening on ${host}: other machines can connect`;
  process.stderr.write(`inspector: open http://${shown}:${port} (${reach}; the page loads the hosted Stately UI from https://stately.ai/inspect, so it needs internet; WebSocket ${inspector.url}; content redacted)\n`);
  return inspector;
}

/** Summaries run no tools: the session's folder when it still exists, else the current one. */
function summaryCwd(recorded: string | undefined): string {
  return recorded && existsSync(recorded) ? recorded : process.cwd();
}

const EXIT_CODES = { done: 0, failed: 1, aborted: 130, interrupted: 1, suspended: 3, budget_exceeded: 4 } as const;
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const EXIT_BY_SIGNAL: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** `arbor run`. */
export async function runAction(words: string[], flags: RunFlags, globals: StoreFlags, exit: { code: number }): Promise<void> {
    // `arbor resume <session>` continues the session's unfinished run: no prompt. Else pi's prompt: piped stdin, then @file texts, then the words.
    const prompt = flags.continueRun ? "" : promptFromArgs(words, await readStdin(), process.cwd());
    const thinkingFlag = flags.thinking !== undefined ? parseThinkingLevel(flags.thinking) : undefined;
    const budget = budgetFlags({ ...(flags.budget !== undefined ? { budget: flags.budget } : {}) });
    if (flags.resume && process.stdin.isTTY !== true) throw new CliError("-r/--resume asks on a terminal; without one, name the session with --session ID (arbor sessions lists them) or --continue.");
    // A new session's run that cannot start (no prompt, a bad --model, no key) is refused before the store is opened: it writes nothing, not even a
    // new log file. (A resumed session's settings depend on the endpoint it recorded, so its run is checked once the session is read.)
    if (!flags.session && !flags.continue && !flags.resume && !flags.continueRun) {
      if (!prompt) throw new CliError('No prompt: pass it as arguments (arbor run "…") or on stdin.');
      requireApiKey(resolveModelSettings(flags, process.env, {}), undefined, prompt);
    }
    await withStore(globals, {}, async (store) => {
      const sessionId = flags.session ? await store.resolveSessionId(flags.session) : flags.continue ? await store.resolveSessionId("latest") : flags.resume ? await pickSession(store) : undefined;
      if (!prompt && !sessionId) throw new CliError('No prompt: pass it as arguments (arbor run "…") or on stdin.');
      const existing = sessionId ? await store.repo.open(sessionId) : undefined;
      const recorded = existing ? recordedEndpoint(existing) : {};
      // A resumed session works where it was started (unless --cwd says otherwise).
      const cwd = resolveSessionCwd(flags.cwd, existing?.view.info.cwd, sessionId);
      if (flags.continueRun && existing) await refuseForeignResumeFolder(store, existing, cwd);
      const settings = resolveModelSettings(flags, process.env, recorded);
      store.addSecrets(settingsSecrets(settings));
      requireApiKey(settings, sessionId, prompt);
      const resources = loadCliResources(resolve(cwd), { contextFiles: flags.contextFiles !== false });
      // `/skill:x` whose file did not load is refused, not sent to the model as text.
      const typed = /^\/([A-Za-z][\w:.-]*)(\s|$)/.exec(prompt)?.[1];
      const failed = typed === undefined || resources.slashCommands.includes(typed) ? undefined : resources.failedName(typed);
      if (failed) throw new CliError(`/${typed} did not load (${failed}); nothing was sent. Your prompt was: ${JSON.stringify(prompt)}`);
      const inspector = await startInspector(flags.inspect, flags.inspectHost);
      const requireApproval = approvalFlag(flags.approve);
      const { harness, sandbox, contextFiles } = await createCliHarness({
        store,
        sessionId,
        cwd,
        settings,
        resources,
        inspect: inspector?.inspect,
        tools: flags,
        contextFiles: flags.contextFiles !== false,
        ...(requireApproval ? { requireApproval } : {}),
        ...(budget ? { budget } : {}),
        ...(flags.continueRun ? { durability: "continue" as const } : {}),
        askElicitations: process.stdin.isTTY === true && process.stderr.isTTY === true && flags.json !== true,
      });
      const thinking = thinkingFlag ?? settings.spec.thinking;
      if (thinking !== undefined && harness.getState().thinkingLevel !== thinking) await harness.setThinkingLevel(thinking);
      if (!flags.json) process.stderr.write(`sandbox: ${sandbox}\n`);
      if (!flags.json && contextFiles.length > 0) process.stderr.write(`context: ${contextFiles.join(", ")} (--no-context-files leaves them out)\n`);
      if (!flags.json) for (const problem of resources.diagnostics) process.stderr.write(`${problem}\n`);
      try {
        if (!flags.continueRun) await recordEndpoint(harness.session as never, settings);
        const head = await store.repo.log.headPosition();
        const printer = printRun(harness.events$, { json: flags.json === true, afterPosition: head });
        // Ctrl-C, a closed terminal (SIGHUP) and `kill`/`timeout` (SIGTERM) all abort the run cleanly: running tools are killed and the session stays
        // consistent. A second signal exits at once.
        let stopSignal: NodeJS.Signals | undefined;
        const onSignal = (signal: NodeJS.Signals) => {
          if (stopSignal) process.exit(EXIT_BY_SIGNAL[signal]);
          stopSignal = signal;
          harness.abort(signal === "SIGINT" ? "interrupted by the user (Ctrl-C)" : `received ${signal}`);
        };
        for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
        try {
          // The same prompt again after a failed start (e.g. no key): it is already saved as the
          // leaf, so continue from it instead of sending it twice.
          const leaf = harness.session.view.leafId ? harness.session.view.getEntry(harness.session.view.leafId) : undefined;
          const alreadySaved = leaf?.type === "message" && (leaf as MessageEntry).message.role === "user" && messageText((leaf as MessageEntry).message) === prompt;
          // TRACEPARENT / TRACESTATE (the environment convention of CLI tools) continue the caller's trace.
          const trace = { ...(process.env.TRACEPARENT ? { traceparent: process.env.TRACEPARENT } : {}), ...(process.env.TRACESTATE ? { tracestate: process.env.TRACESTATE } : {}) };
          let outcome = flags.continueRun ? await resumeOrExplain(harness) : prompt && !alreadySaved ? await harness.prompt(prompt, [], trace) : await continueOrWaiting(harness, trace);
          // On a terminal, ask about each waiting call and go on; without one, stop (exit 3).
          const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true && flags.json !== true;
          while (outcome.status === "suspended" && interactive) {
            await askApprovals(await harness.pendingApprovals(), (call, approved, reason) =>
              approved ? harness.approve(call.toolCallId, reason ? { reason } : {}) : harness.deny(call.toolCallId, { reason: reason ?? "declined at the prompt" }),
            );
            outcome = await continueOrWaiting(harness);
          }
          await harness.waitForIdle();
          await printer.caughtUp(harness.session.view.version);
          exit.code = outcome.status === "aborted" && stopSignal ? EXIT_BY_SIGNAL[stopSignal] : EXIT_CODES[outcome.status];
          if (outcome.status === "failed" && outcome.error && !printer.reportedError()) process.stderr.write(`arbor: run failed: ${outcome.error}\n`);
          if (outcome.status === "budget_exceeded") process.stderr.write(`arbor: ${outcome.error ?? "budget exceeded"}\n`);
          if (outcome.status === "suspended") {
            const pending = await harness.pendingApprovals();
            for (const call of pending) process.stdout.write(`${pendingLine(harness.id, call)}\n`);
            // Only the undecided calls wait for approval; once each is decided the run waits for a continue.
            const undecided = pending.filter((call) => call.status === "pending").length;
            process.stderr.write(
              undecided > 0
                ? `arbor: waiting for approval of ${undecided} tool call(s); decide with: arbor approve ${harness.id} <callId> (or arbor deny ${harness.id} <callId> --reason "..."), then go on with: arbor run --session ${harness.id}\n`
                : `arbor: every waiting tool call is decided (${pending.length}); go on with: arbor run --session ${harness.id}\n`,
            );
          }
          if (!flags.json) process.stderr.write(`session ${harness.id} (short id ${shortSessionId(harness.id)})\n`);
        } finally {
          for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
          printer.stop();
        }
      } finally {
        await harness.close();
        inspector?.stop();
      }
    });
  }

/** A run without an API key cannot start and changes nothing (no new session, no appended prompt); the prompt is quoted so nothing typed is lost. */
function requireApiKey(settings: ResolvedModelSettings, sessionId: string | undefined, prompt: string): void {
  if (settings.apiKey) return;
  const where = sessionId ? `session ${sessionId} is unchanged` : "no session was created";
  throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env); ${where}.${prompt ? ` Your prompt was: ${JSON.stringify(prompt)}` : ""}`);
}

/** `--approve` values: tool names, or `all`. */
export function approvalFlag(values: string[] | undefined): string[] | "all" | undefined {
  if (!values || values.length === 0) return undefined;
  if (values.includes("all")) return "all";
  return values;
}

/** `resumeRun()`; nothing to resume, or a live owner, is an exit-1 error naming what to do. */
async function resumeOrExplain(harness: { id: string; resumeRun(): Promise<RunOutcome> }): Promise<RunOutcome> {
  try {
    return await harness.resumeRun();
  } catch (error) {
    if (NothingToResumeError.isInstance(error)) throw new CliError(`${error.message} Go on with: arbor run --session ${harness.id} "..."`, 1);
    if (RunOwnedError.isInstance(error)) throw new CliError(error.message, 1);
    throw error;
  }
}

/** `continue()`, or a `suspended` outcome when calls still wait for a decision (nothing ran). */
async function continueOrWaiting(harness: { continue(options?: PromptOptions): Promise<RunOutcome> }, trace?: PromptOptions): Promise<RunOutcome> {
  try {
    return await harness.continue(trace);
  } catch (error) {
    if (!ApprovalPendingError.isInstance(error)) throw error;
    return { runId: "", status: "suspended", messages: [], pendingApprovals: (error.details.pending as string[] | undefined) ?? [] };
  }
}

/** `arbor checkout`. */
export async function checkoutAction(reference: string, entryReference: string, flags: ModelFlags & { summarize?: boolean; label?: string; files?: boolean }, globals: StoreFlags): Promise<void> {
    await withStore(globals, {}, async (store) => {
      const session = await store.openSessionForWrite(reference);
      const targetId = resolveEntryId(session, entryReference);
      // The files first (unrecorded work is saved under the leaf it was done at), then the leaf.
      const files = flags.files ? await restoreFilesForCheckout(store, session, targetId) : undefined;
      let result;
      if (flags.summarize) {
        const settings = resolveModelSettings(flags, process.env, recordedEndpoint(session));
        store.addSecrets(settingsSecrets(settings));
        if (!settings.apiKey) throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env); --summarize calls the model.`);
        const { harness } = await createCliHarness({ store, sessionId: session.id, cwd: summaryCwd(session.view.info.cwd), settings });
        try {
          result = await harness.moveTo(targetId, { summarize: true, label: flags.label });
        } finally {
          await harness.close();
        }
      } else {
        result = await moveTo(session, targetId, { label: flags.label });
      }
      if (result.cancelled) throw new CliError("Checkout cancelled by a hook; nothing changed.", 1);
      // A label entry is appended at the leaf (pi), which would leave the leaf on it; the user
      // checked out the target (or its summary), so the leaf goes back there.
      const leaf = result.summaryEntry?.id ?? result.newLeafId;
      // A fresh handle (the harness wrote through its own), written through its session actor's writer.
      if (result.labelEntry) await sessionActorOf(await store.repo.open(session.id)).writes.moveLeaf(leaf);
      const summary = result.summaryEntry ? `; branch summary ${result.summaryEntry.id} of the branch you left` : "";
      const label = result.labelEntry ? `; labelled ${result.summaryEntry ? "the summary" : result.labelEntry.targetId} "${flags.label}"` : "";
      process.stdout.write(`moved to ${result.newLeafId ?? "(root)"}${summary}${label}; the leaf is ${leaf ?? "(root)"}\n`);
      if (files) process.stdout.write(files);
      if (result.editorText !== undefined) process.stdout.write(`\n${result.editorText}\n`);
    });
  }

/** `arbor compact`. */
export async function compactAction(reference: string, flags: ModelFlags & { instructions?: string; keepRecent?: string }, globals: StoreFlags): Promise<void> {
    let keepRecentTokens: number | undefined;
    if (flags.keepRecent !== undefined) {
      keepRecentTokens = Number(flags.keepRecent);
      if (!/^\d+$/.test(flags.keepRecent.trim()) || !Number.isInteger(keepRecentTokens) || keepRecentTokens < 1) {
        throw new CliError(`Bad --keep-recent "${flags.keepRecent}": expected a whole number of tokens, at least 1.`);
      }
    }
    await withStore(globals, {}, async (store) => {
      // Refused (SessionBusyError) while another process runs the session: a compaction would
      // move its leaf under it, and that run would then fail on a version conflict.
      const existing = await store.openSessionForWrite(reference);
      const sessionId = existing.id;
      const settings = resolveModelSettings(flags, process.env, recordedEndpoint(existing));
      store.addSecrets(settingsSecrets(settings));
      if (!settings.apiKey) throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env).`);
      const { harness } = await createCliHarness({ store, sessionId, cwd: summaryCwd(existing.view.info.cwd), settings, ...(keepRecentTokens !== undefined ? { compaction: { keepRecentTokens } } : {}) });
      try {
        const entry = await harness.compact(flags.instructions);
        process.stdout.write(`compaction ${entry.id}: ${entry.tokensBefore} tokens before; keeps from ${entry.firstKeptEntryId}\n`);
      } catch (error) {
        if (CompactionError.isInstance(error)) {
          // The value the compaction used: a --keep-recent over half the model's window is capped there.
          const kept = typeof error.details.keepRecentTokens === "number" ? error.details.keepRecentTokens : (keepRecentTokens ?? DEFAULT_COMPACTION_SETTINGS.keepRecentTokens);
          const hint = /nothing to compact/i.test(error.message) ? ` The newest ${kept.toLocaleString("en-US")} tokens are kept as they are; pass --keep-recent N (tokens) to keep less.` : "";
          throw new CliError(`${error.message} Nothing was changed.${hint}`, 1);
        }
        throw error;
      } finally {
        await harness.close();
      }
    });
  }
