/**
 * `arbor chat [--session ID]`: on a terminal the TUI (`tui/chat-tui.ts`), else the line chat below. A line typed during a run is steering,
 * `/followup` queues a follow-up; commands are in `CHAT_COMMANDS` (an unknown `/word` is refused, never sent); a paste is one message; Ctrl-C/Esc
 * abort a run; with `--approve` waiting calls are asked on stdout, as `arbor run --approve` does.
 */
import { createInterface } from "node:readline";
import { expandSlashCommand } from "../../adapters/prompt-templates/expand.ts";
import { trackPastes } from "../paste-lines.ts";
import { contextTokensOf, statusLine } from "../status-line.ts";
import { runShellLine } from "../shell-line.ts";
import type { PendingApproval } from "../../machines/approval-fold.ts";
import type { RunOutcome } from "../../machines/agent-types.ts";
import { createCliHarness, resolveSessionCwd } from "../agent-setup.ts";
import { fileBlock } from "../prompt-args.ts";
import { pickSession } from "../session-picker.ts";
import type { ChatFlags } from "./chat.ts";
import { startInspector } from "./model-actions.ts";
import { CliError, describeCliError } from "../cli-error.ts";
import { parseThinkingLevel, resolveModelSettings, settingsSecrets } from "../config.ts";
import { renderTree } from "../render-tree.ts";
import { printRun } from "../run-printer.ts";
import { openStore, recordEndpoint, recordedEndpoint, resolveEntryId, shortSessionId, type CliStore } from "../store-context.ts";
import type { ChatOpener } from "../tui/chat-session.ts";
import type { ThinkingLevel } from "../../core/messages.ts";
import { ignoreError } from "../../core/ignored.ts";

/** The chat's built-in commands, for `/help` (and the README). */
export const CHAT_COMMANDS: readonly { name: string; usage: string; does: string }[] = [
  { name: "/help", usage: "/help", does: "list these commands, and the project's skills and prompt templates" },
  { name: "/tree", usage: "/tree", does: "show the session tree; * marks the leaf" },
  { name: "/checkout", usage: "/checkout <entry> [--summarize]", does: "move the leaf to an entry (a user message: its text is printed for re-editing)" },
  { name: "/compact", usage: "/compact [instructions]", does: "summarize the older part of the context (calls the model)" },
  { name: "/label", usage: "/label <entry> [label]", does: "label an entry (no label clears it)" },
  { name: "/name", usage: "/name <name>", does: "name the session" },
  { name: "/thinking", usage: "/thinking [level]", does: "show or set the thinking level: off, minimal, low, medium, high, xhigh (logged)" },
  { name: "/followup", usage: "/followup <text>", does: "queue a follow-up for when the agent would stop" },
  { name: "!", usage: "!command / !!command", does: "run a shell command in the session's folder; ! puts its output in the context, !! does not" },
  { name: "/exit", usage: "/exit or /quit", does: "leave (also Ctrl-C when idle, or end of input)" },
  { name: "/quit", usage: "/quit", does: "leave" },
];

function chatHelp(slashCommands: readonly string[], diagnostics: readonly string[]): string {
  const builtIns = CHAT_COMMANDS.filter((entry) => entry.name !== "/quit").map((entry) => `  ${entry.usage.padEnd(34)} ${entry.does}`);
  const project = slashCommands.length > 0 ? [`project commands (skills and prompt templates): ${slashCommands.map((name) => `/${name}`).join(", ")}`] : [];
  const problems = diagnostics.length > 0 ? ["skill and template problems:", ...diagnostics.map((line) => `  ${line}`)] : [];
  return [
    "commands:",
    ...builtIns,
    ...project,
    ...problems,
    "Any other line is a prompt; a line typed while the agent works is steering. An unknown /command is never sent to the model.",
  ].join("\n");
}

/** True when the chat runs as the TUI: stdin and stdout are sized terminals, `TERM` is not `dumb`, no `--plain`. */
function useTui(flags: ChatFlags): boolean {
  const { stdin, stdout } = process;
  return flags.plain !== true && stdin.isTTY === true && stdout.isTTY === true && process.env.TERM !== "dumb" && (stdout.columns ?? 0) > 0 && (stdout.rows ?? 0) > 0;
}

/** The TUI chat (`src/cli/tui/`): the session picked, the TUI run until the user leaves. */
async function tuiChat(store: CliStore, flags: ChatFlags, initial: string[], thinking: ThinkingLevel | undefined): Promise<void> {
  const { runChatTui } = await import("../tui/chat-tui.ts");
  const { settingsFor } = await import("../tui/chat-session.ts");
  const sessionId = flags.session ? await store.resolveSessionId(flags.session) : flags.continue ? await store.resolveSessionId("latest") : flags.resume ? await pickSession(store) : undefined;
  const opener = { store, flags, ...(thinking ? { thinking } : {}) } as ChatOpener;
  const settings = await settingsFor(opener, sessionId);
  const inspector = await startInspector(flags.inspect, flags.inspectHost);
  if (inspector) opener.inspect = inspector.inspect;
  if (flags.approve?.length) opener.requireApproval = flags.approve.includes("all") ? "all" : flags.approve;
  try {
    await runChatTui(opener, { ...(sessionId ? { sessionId } : {}), settings, initial });
  } finally {
    inspector?.stop();
  }
}

/** `arbor chat` (loaded lazily by `registerChatCommand`). */
export async function chatAction(flags: ChatFlags, globals: { db?: string }, messages: string[] = []): Promise<void> {
      const thinkingFlag = flags.thinking !== undefined ? parseThinkingLevel(flags.thinking) : undefined;
      // pi: @file arguments join the first message; each other argument is a message of its own.
      const files = messages.filter((word) => word.startsWith("@") && word.length > 1).map((word) => fileBlock(word, process.cwd()));
      const words = messages.filter((word) => !(word.startsWith("@") && word.length > 1));
      const initial = files.length > 0 || words.length > 0 ? [[...files, words[0] ?? ""].filter(Boolean).join("\n\n"), ...words.slice(1)] : [];
      const store = openStore(globals);
      if (useTui(flags)) {
        try {
          await tuiChat(store, flags, initial, thinkingFlag);
        } finally {
          await store.close();
        }
        return;
      }
      const sessionId = flags.session ? await store.resolveSessionId(flags.session) : flags.continue ? await store.resolveSessionId("latest") : flags.resume ? await pickSession(store) : undefined;
      const existing = sessionId ? await store.repo.open(sessionId) : undefined;
      // A resumed session works where it was started (unless --cwd says otherwise).
      const cwd = resolveSessionCwd(flags.cwd, existing?.view.info.cwd, sessionId);
      const settings = resolveModelSettings(flags, process.env, existing ? recordedEndpoint(existing) : {});
      store.addSecrets(settingsSecrets(settings));
      if (!settings.apiKey) {
        await store.close();
        throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env).`);
      }
      const inspector = await startInspector(flags.inspect, flags.inspectHost);
      const requireApproval = flags.approve?.length ? (flags.approve.includes("all") ? ("all" as const) : flags.approve) : undefined;
      const { harness, sandbox, slashCommands, contextFiles, resources, model, cwd: toolCwd } = await createCliHarness({ store, sessionId, cwd, settings, inspect: inspector?.inspect, tools: flags, contextFiles: flags.contextFiles !== false, ...(requireApproval ? { requireApproval } : {}) });
      const thinking = thinkingFlag ?? settings.spec.thinking;
      if (thinking !== undefined && harness.getState().thinkingLevel !== thinking) await harness.setThinkingLevel(thinking);
      process.stderr.write(`sandbox: ${sandbox}\n`);
      if (contextFiles.length > 0) process.stderr.write(`context: ${contextFiles.join(", ")} (--no-context-files leaves them out)\n`);
      for (const problem of resources.diagnostics) process.stderr.write(`${problem}\n`);
      await recordEndpoint(harness.session as never, settings);
      const printer = printRun(harness.events$, { json: false, afterPosition: await store.repo.log.headPosition() });
      process.stderr.write(`session ${harness.id} (short id ${shortSessionId(harness.id)}; /help lists the commands, /exit leaves)\n`);
      const terminal = process.stdin.isTTY === true;
      const lines = createInterface({ input: process.stdin, output: process.stdout, terminal });
      // A paste is one message: the terminal brackets it (mode 2004), and the lines inside the brackets wait for the line that ends after it.
      const paste = trackPastes(terminal);
      // The "> " prompt only on a terminal: piped output stays one answer per line.
      let closed = false;
      lines.once("close", () => (closed = true));
      const showPrompt = () => {
        // Node 24 throws on a prompt after close (/exit while a reply was still printing).
        if (terminal && !closed) lines.prompt();
      };
      let running: Promise<RunOutcome> | undefined;
      const say = (text: string) => process.stdout.write(`${text}\n`);
      // Commands typed during a run (they change the session or the context): queued, run in order once the run ends.
      const deferred: string[] = [];
      let draining: Promise<void> = Promise.resolve();
      const defer = (text: string, what: string) => {
        deferred.push(text);
        say(`${what} runs when the agent is idle (after this run; Ctrl-C aborts it).`);
      };
      /** Runs the queued commands, then the next command-line message or the prompt; false when nothing was queued. */
      const drain = (): boolean => {
        if (deferred.length === 0) return false;
        draining = (async () => {
          while (deferred.length > 0 && !running) {
            const next = deferred.shift()!;
            say(`> ${next}`);
            await handle(next).catch((error: unknown) => say(describeCliError(error)));
          }
          if (!running && !sendInitial()) showPrompt();
        })();
        return true;
      };
      // Calls of a run that stopped for approval, asked one per line (`--approve`).
      let asking: PendingApproval[] = [];
      const ask = () => say(`approve ${asking[0].toolName} ${JSON.stringify(asking[0].input)} (${asking[0].toolCallId})? [y = yes, anything else = no, with the reason]`);
      const answer = async (text: string) => {
        const call = asking.shift()!;
        if (/^y(es)?$/i.test(text)) await harness.approve(call.toolCallId);
        else await harness.deny(call.toolCallId, { reason: /^n(o)?$/i.test(text) ? "declined at the prompt" : text });
        if (asking.length > 0) return ask();
        start(() => harness.continue());
      };
      const start = (work: () => Promise<RunOutcome>) => {
        const run = async () => {
          const outcome = await work();
          if (outcome.status === "suspended") {
            await printer.caughtUp(harness.session.view.version);
            asking = (await harness.pendingApprovals()).filter((call) => call.status === "pending");
            if (asking.length > 0) ask();
          }
          return outcome;
        };
        const current: Promise<RunOutcome> = run().finally(async () => {
          // The prompt comes after the run's last event is printed (PostgreSQL delivers asynchronously).
          await printer.caughtUp(harness.session.view.version);
          // An approval answered at once may have started the next run already.
          if (running !== current) return;
          running = undefined;
          // pi's footer, as one line after each run (a terminal only: piped output stays answers).
          if (terminal) process.stderr.write(`${status()}\n`);
          if (!drain() && !sendInitial()) showPrompt();
        });
        running = current;
        current.catch((error: unknown) => say(describeCliError(error)));
      };
      const status = () =>
        statusLine({
          model: `${settings.spec.provider}:${settings.spec.modelId}`,
          thinking: harness.getState().thinkingLevel,
          stats: harness.getStats(),
          contextTokens: contextTokensOf(harness.session.view.buildContext().messages),
          contextWindow: settings.contextWindow ?? model.contextWindow,
          shortId: shortSessionId(harness.id),
          sandbox,
        });
      // The command line's messages go one after the other, each once the last run ended.
      function sendInitial(): boolean {
        const message = asking.length === 0 ? initial.shift() : undefined;
        if (message === undefined) return false;
        say(`> ${message.length > 200 ? `${message.slice(0, 199)}…` : message}`);
        void handle(message).catch((error: unknown) => say(describeCliError(error)));
        return true;
      }
      const handle = async (line: string) => {
        // A pasted message keeps its inner lines; surrounding blank space goes.
        const text = line.trim();
        if (asking.length > 0) return answer(text);
        if (!text) return;
        // pi's `!cmd` (output joins the context) and `!!cmd` (it does not), run by the user.
        if (text.startsWith("!")) {
          if (running) return defer(text, "This !command");
          const quiet = text.startsWith("!!");
          const shell = text.slice(quiet ? 2 : 1).trim();
          if (!shell) return say("Usage: !command (its output joins the context) or !!command (it does not)");
          const result = await runShellLine(shell, toolCwd);
          if (result.output.trim() !== "") say(result.output.replace(/\n$/, ""));
          if (result.exitCode !== 0) say(`(exit ${result.exitCode ?? "killed"})`);
          if (!quiet) await harness.appendCustomMessage("bash", result.contextText, { display: true, details: { command: shell, output: result.output, exitCode: result.exitCode } });
          return;
        }
        const [command, ...rest] = text.split(/\s+/);
        // `/name` (not a path such as /usr/bin/x): a built-in, a skill, a template, or refused.
        const isCommand = /^\/[A-Za-z][\w:.-]*$/.test(command);
        if (isCommand && !CHAT_COMMANDS.some((entry) => entry.name === command) && !slashCommands.includes(command.slice(1))) {
          const failed = resources.failedName(command.slice(1));
          if (failed) return say(`${command} did not load (${failed}): nothing was sent to the model.`);
          return say(`Unknown command ${command}: nothing was sent to the model. Type /help for the commands.`);
        }
        if (command === "/exit" || command === "/quit") return lines.close();
        if (command === "/help") return say(chatHelp(slashCommands, resources.diagnostics));
        if (command === "/followup") {
          if (rest.length === 0) return say("Usage: /followup <text>");
          return harness.followUp(text.slice(command.length).trim());
        }
        if (command === "/tree") return say(renderTree(harness.session.view.getTree(), { leafId: harness.session.view.leafId }));
        if (running) {
          if (CHAT_COMMANDS.some((entry) => entry.name === command)) return defer(text, command);
          // A skill or template typed during a run is steering with its expansion, never the raw command.
          return harness.steer(isCommand ? expandSlashCommand(text, { skills: resources.skills, templates: resources.promptTemplates }).text : text);
        }
        switch (command) {
          case "/checkout": {
            // A label may hold spaces: everything but the flag names the entry.
            const target = resolveEntryId(harness.session as never, rest.filter((word) => word !== "--summarize").join(" "));
            const result = await harness.moveTo(target, { summarize: rest.includes("--summarize") });
            if (result.cancelled) return say("checkout cancelled by a hook; nothing changed");
            // With --summarize the leaf is the summary entry of the branch left.
            const leaf = result.summaryEntry?.id ?? result.newLeafId;
            const summary = result.summaryEntry ? `; branch summary ${result.summaryEntry.id} of the branch you left` : "";
            say(`moved to ${result.newLeafId ?? "(root)"}${summary}; the leaf is ${leaf ?? "(root)"}${result.editorText ? `\n${result.editorText}` : ""}`);
            return;
          }
          case "/compact": {
            const entry = await harness.compact(rest.join(" ") || undefined);
            return say(`compacted: ${entry.tokensBefore} tokens before; keeps from ${entry.firstKeptEntryId}`);
          }
          case "/label":
            await harness.label(resolveEntryId(harness.session as never, rest[0] ?? ""), rest.slice(1).join(" ") || undefined);
            return say("labelled");
          case "/thinking": {
            if (rest.length === 0) return say(`thinking ${harness.getState().thinkingLevel}`);
            await harness.setThinkingLevel(parseThinkingLevel(rest[0]));
            return say(`thinking ${harness.getState().thinkingLevel}`);
          }
          case "/name":
            await harness.setName(rest.join(" "));
            return say("named");
          default:
            return start(() => harness.prompt(text));
        }
      };
      process.on("SIGINT", () => {
        if (running) harness.abort("interrupted by the user (Ctrl-C)");
        else lines.close();
      });
      // On a terminal (raw mode) Ctrl-C and Esc are keys: Esc or Ctrl-C aborts a run; when idle,
      // Ctrl-C clears the line, and a second one on an empty line quits (pi).
      let quitArmed = false;
      lines.on("SIGINT", () => {
        if (running) return harness.abort("interrupted by the user (Ctrl-C)");
        if (lines.line !== "") {
          lines.write(null, { ctrl: true, name: "u" });
          return;
        }
        if (quitArmed) return lines.close();
        quitArmed = true;
        say("\n(press Ctrl-C again to quit)");
        showPrompt();
      });
      const onKey = (_text: string | undefined, key: { name?: string } | undefined) => {
        if (key?.name !== "c") quitArmed = false;
        if (key?.name === "escape" && running) harness.abort("interrupted by the user (Esc)");
      };
      if (terminal) process.stdin.on("keypress", onKey);
      for (const signal of ["SIGTERM", "SIGHUP"] as const) {
        process.on(signal, () => {
          harness.abort(`received ${signal}`);
          lines.close();
        });
      }
      lines.setPrompt("> ");
      if (!sendInitial()) showPrompt();
      lines.on("line", (typed) => {
        const line = paste.take(typed);
        if (line === undefined) return;
        handle(line)
          .catch((error: unknown) => say(describeCliError(error)))
          .finally(() => {
            if (!running) showPrompt();
          });
      });
      await new Promise<void>((resolve) => lines.once("close", () => resolve()));
      paste.stop();
      process.stdin.off("keypress", onKey);
      // After /exit the pipe may still be open; let go of it so the process can end.
      process.stdin.destroy();
      if (running) await running.catch(ignoreError("the chat ended; the run's error is said by its own handler"));
      // Commands typed during the last run still run (a piped script's /name after a message, then EOF).
      await draining;
      await harness.waitForIdle();
      await printer.caughtUp(harness.session.view.version);
      printer.stop();
      await harness.close();
      inspector?.stop();
      await store.close();
    }
