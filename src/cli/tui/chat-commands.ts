/**
 * What a line typed in the chat TUI does: a prompt, steering, `!cmd`, or a command (the line chat's plus `/tree`, `/model`, `/resume`, `/new`,
 * `/fork`). During a run most commands are refused; an unknown `/word` (not a path) is refused; nothing typed is ever sent to the model raw.
 */
import { SelectList } from "@earendil-works/pi-tui";
import { expandSlashCommand } from "../../adapters/prompt-templates/expand.ts";
import { parseThinkingLevel } from "../config.ts";
import { renderTree } from "../render-tree.ts";
import { runShellLine, type ShellDetails } from "../shell-line.ts";
import { resolveEntryId, shortSessionId } from "../store-context.ts";
import { CHAT_COMMANDS } from "../commands/chat-action.ts";
import { restoreLine } from "../workspace-actions.ts";
import { settingsFor } from "./chat-session.ts";
import type { ChatTui } from "./chat-tui.ts";
import { selectListTheme } from "./theme.ts";
import { TreeNavigator } from "./tree-navigator.ts";

/** The TUI's commands, for `/help`, completion and `docs/cli.md`. */
export const TUI_COMMANDS: readonly { name: string; usage: string; does: string }[] = [
  ...CHAT_COMMANDS.filter((entry) => entry.name !== "/tree" && entry.name !== "/quit" && entry.name !== "/exit"),
  { name: "/tree", usage: "/tree", does: "navigate the session tree: move, label, check out (with a summary or the files)" },
  { name: "/model", usage: "/model [provider:model]", does: "show the model, or switch to another (logged)" },
  { name: "/resume", usage: "/resume", does: "pick a session of this log to continue" },
  { name: "/new", usage: "/new", does: "start a new session" },
  { name: "/fork", usage: "/fork [entry]", does: "continue in a new session holding the branch up to the entry (default: the leaf)" },
  { name: "/exit", usage: "/exit or /quit", does: "leave (also Ctrl-C twice, or Ctrl-D on an empty editor)" },
  { name: "/quit", usage: "/quit", does: "leave" },
];

const WHILE_RUNNING = new Set(["/followup", "/help", "/tree", "/exit", "/quit"]);

function help(slashCommands: readonly string[], diagnostics: readonly string[]): string {
  const builtIns = TUI_COMMANDS.filter((entry) => entry.name !== "/quit").map((entry) => `  ${entry.usage} — ${entry.does}`);
  return [
    "commands:",
    ...builtIns,
    ...(slashCommands.length > 0 ? [`project commands (skills and prompt templates): ${slashCommands.map((name) => `/${name}`).join(", ")}`] : []),
    ...(diagnostics.length > 0 ? ["skill and template problems:", ...diagnostics.map((line) => `  ${line}`)] : []),
    "keys: Enter sends · Shift+Enter or Alt+Enter new line · ↑↓ history · @ file · Esc aborts a run · Ctrl+O tool output · Ctrl-C twice quits",
    "Any other line is a prompt; a line typed while the agent works is steering. An unknown /command is never sent to the model.",
  ].join("\n");
}

/** Handles one submitted line; "steered" when it was queued as steering. */
export async function handleChatLine(app: ChatTui, line: string): Promise<"steered" | undefined> {
  const { chat, transcript } = app;
  const { harness } = chat;
  const say = (text: string, tone: "plain" | "dim" | "error" | "warn" = "plain") => transcript.notice(text, tone);
  const text = line.trim();
  if (!text) return;
  if (text.startsWith("!")) {
    if (app.running()) return say("!commands wait until the agent is idle: let the run finish, or press Esc to abort it.", "warn"), undefined;
    const quiet = text.startsWith("!!");
    const shell = text.slice(quiet ? 2 : 1).trim();
    if (!shell) return say("Usage: !command (its output joins the context) or !!command (it does not)", "warn"), undefined;
    const result = await runShellLine(shell, chat.cwd);
    const details: ShellDetails = { command: shell, output: result.output, exitCode: result.exitCode };
    transcript.shellResult({ ...details, command: `${shell}${quiet ? " (kept out of the context)" : ""}` });
    if (!quiet) await harness.appendCustomMessage("bash", result.contextText, { display: true, details });
    return;
  }
  const [command, ...rest] = text.split(/\s+/);
  const isCommand = /^\/[A-Za-z][\w:.-]*$/.test(command);
  const builtIn = TUI_COMMANDS.some((entry) => entry.name === command);
  if (isCommand && !builtIn && !chat.slashCommands.includes(command.slice(1))) {
    const failed = chat.resources.failedName(command.slice(1));
    if (failed) return say(`${command} did not load (${failed}): nothing was sent to the model.`, "warn"), undefined;
    return say(`Unknown command ${command}: nothing was sent to the model. Type /help for the commands.`, "warn"), undefined;
  }
  if (command === "/exit" || command === "/quit") return app.quit(), undefined;
  if (command === "/help") return say(help(chat.slashCommands, chat.resources.diagnostics)), undefined;
  if (command === "/followup") {
    if (rest.length === 0) return say("Usage: /followup <text>", "warn"), undefined;
    harness.followUp(text.slice(command.length).trim());
    return say(`follow-up queued: ${text.slice(command.length).trim()}`, "dim"), undefined;
  }
  if (app.running()) {
    if (command === "/tree") return say(renderTree(harness.session.view.getTree(), { leafId: harness.session.view.leafId })), undefined;
    if (builtIn && !WHILE_RUNNING.has(command)) return say(`${command} does not run during a run: type it again once the agent is idle (Esc aborts the run).`, "warn"), undefined;
    harness.steer(isCommand ? expandSlashCommand(text, { skills: chat.resources.skills, templates: chat.resources.promptTemplates }).text : text);
    return "steered";
  }
  const entry = (reference: string) => resolveEntryId(harness.session as never, reference);
  switch (command) {
    case "/tree":
      openTree(app);
      return;
    case "/checkout": {
      const target = entry(rest.filter((word) => word !== "--summarize" && word !== "--files").join(" "));
      await checkout(app, target, { summarize: rest.includes("--summarize"), files: rest.includes("--files") });
      return;
    }
    case "/compact": {
      const compacted = await harness.compact(rest.join(" ") || undefined);
      return say(`compacted: ${compacted.tokensBefore} tokens before; keeps from ${compacted.firstKeptEntryId}`), undefined;
    }
    case "/label":
      await harness.label(entry(rest[0] ?? ""), rest.slice(1).join(" ") || undefined);
      return say("labelled"), undefined;
    case "/thinking":
      if (rest.length > 0) await harness.setThinkingLevel(parseThinkingLevel(rest[0]));
      return say(`thinking ${harness.getState().thinkingLevel}`), undefined;
    case "/name":
      await harness.setName(rest.join(" "));
      return say("named"), undefined;
    case "/model": {
      if (rest.length === 0) return say(`model ${harness.getState().modelName ?? chat.modelName}; /model provider:model switches (e.g. /model anthropic:claude-sonnet-4-5)`), undefined;
      const next = await settingsFor(app.opener, harness.id, rest[0]);
      const name = `${next.spec.provider}:${next.spec.modelId}`;
      const previous = chat.settings;
      await app.switchTo(harness.id, previous, [next]);
      await app.chat.harness.setModel(name);
      Object.assign(app.chat, { settings: next, modelName: name, model: app.chat.harness.registry.get(name).client });
      const { recordEndpoint } = await import("../store-context.ts");
      await recordEndpoint(app.chat.harness.session as never, next);
      if (next.spec.thinking) await app.chat.harness.setThinkingLevel(next.spec.thinking);
      return say(`model ${name} (logged)`), undefined;
    }
    case "/new":
      await app.switchTo(undefined, chat.settings);
      return say(`new session ${app.chat.harness.id}`), undefined;
    case "/fork": {
      const forked = await harness.fork(rest.length > 0 ? entry(rest.join(" ")) : undefined);
      const id = forked.id;
      await forked.dispose();
      await app.switchTo(id, chat.settings);
      return say(`forked into session ${id} (short id ${shortSessionId(id)})`), undefined;
    }
    case "/resume":
      await openResume(app);
      return;
    default:
      app.start(() => harness.prompt(text));
      return;
  }
}

async function checkout(app: ChatTui, target: string, options: { summarize: boolean; files: boolean }): Promise<void> {
  const { harness } = app.chat;
  const say = (text: string, tone: "plain" | "warn" = "plain") => app.transcript.notice(text, tone);
  if (options.files && !harness.workspace) return say("This session does not record its files: start the chat with --checkpoints to check out files.", "warn");
  const result = await harness.moveTo(target, { summarize: options.summarize });
  if (result.cancelled) return say("checkout cancelled by a hook; nothing changed", "warn");
  const leaf = result.summaryEntry?.id ?? result.newLeafId;
  const summary = result.summaryEntry ? `; branch summary ${result.summaryEntry.id} of the branch you left` : "";
  await app.redraw();
  say(`moved to ${result.newLeafId ?? "(root)"}${summary}; the leaf is ${leaf ?? "(root)"}`);
  if (options.files && harness.workspace) say(restoreLine(await harness.workspace.restore(target), target, harness.id));
  if (result.editorText) say(`(the message, to edit and send again:)\n${result.editorText}`, "plain");
}

function openTree(app: ChatTui): void {
  const { harness } = app.chat;
  const navigator = new TreeNavigator(
    {
      load: () => renderTree(harness.session.view.getTree(), { leafId: harness.session.view.leafId }),
      close: () => app.restoreEditor(),
      label: async (id, label) => {
        await harness.label(id, label).catch((error: unknown) => app.transcript.notice(String(error), "error"));
        app.refresh();
      },
      checkout: (id, options) => {
        app.restoreEditor();
        checkout(app, id, options)
          .catch((error: unknown) => app.transcript.notice(String(error), "error"))
          .finally(() => app.refresh());
      },
    },
    () => app.rows(),
  );
  app.replaceEditor(navigator);
}

async function openResume(app: ChatTui): Promise<void> {
  const sessions = (await app.opener.store.listNewestFirst()).slice(0, 50);
  if (sessions.length === 0) return app.transcript.notice("No sessions to resume.", "warn");
  const list = new SelectList(
    sessions.map((session) => ({
      value: session.id,
      label: `${shortSessionId(session.id)}  ${session.updatedAt}`,
      description: (session.name ?? session.firstMessage).replace(/\s+/g, " ").slice(0, 80),
    })),
    Math.max(3, Math.min(15, app.rows() - 8)),
    selectListTheme,
  );
  list.onCancel = () => app.restoreEditor();
  list.onSelect = (item) => {
    app.restoreEditor();
    settingsFor(app.opener, item.value, "recorded")
      .then((settings) => app.switchTo(item.value, settings))
      .then(() => app.transcript.notice(`resumed session ${item.value}`))
      .catch((error: unknown) => app.transcript.notice(String(error), "error"))
      .finally(() => app.refresh());
  };
  app.replaceEditor(list);
}
