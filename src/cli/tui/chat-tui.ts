/**
 * `arbor chat` (and bare `arbor`) on a terminal: pi's interactive TUI on `@earendil-works/pi-tui` (keys and commands in `docs/cli.md`). The screen
 * is the transcript, a working line, queued steering, an approval question, the editor and a footer. A line typed during a run is steering; commands
 * that change the session are refused until the run ends and are never sent to the model; Esc/Ctrl-C abort.
 */
import { Container, Editor, Loader, ProcessTerminal, TuiMainScreen, matchesKey, truncateToWidth, type Component } from "@earendil-works/pi-tui";
import type { Subscription } from "rxjs";
import type { PendingApproval } from "../../machines/approval-fold.ts";
import type { RunOutcome } from "../../machines/agent-types.ts";
import { isArborEvent } from "../../store/events/catalogue.ts";
import { sessionStreamId } from "../../store/events/session-events.ts";
import { describeCliError } from "../cli-error.ts";
import type { ResolvedModelSettings } from "../config.ts";
import { contextTokensOf, statusLine } from "../status-line.ts";
import { shortSessionId } from "../store-context.ts";
import { chatCompletion } from "./file-completion.ts";
import { openChat, type ChatOpener, type OpenChat } from "./chat-session.ts";
import { handleChatLine, TUI_COMMANDS } from "./chat-commands.ts";
import { editorTheme, style } from "./theme.ts";
import { Lines, Transcript } from "./transcript.ts";
import { ignoreError } from "../../core/ignored.ts";

/** The running TUI, as the commands see it. */
export interface ChatTui {
  readonly chat: OpenChat;
  readonly opener: ChatOpener;
  readonly transcript: Transcript;
  running(): boolean;
  /** Starts a run (a prompt, or continuing after approvals). */
  start(work: () => Promise<RunOutcome>): void;
  /** Shows `component` in the editor's place (a navigator, a picker) until `restore()`. */
  replaceEditor(component: Component): void;
  restoreEditor(): void;
  /** Closes this session's harness and opens `sessionId` (a new session when undefined). */
  switchTo(sessionId: string | undefined, settings: ResolvedModelSettings, extra?: ResolvedModelSettings[]): Promise<void>;
  /** Draws the current branch again, from its entries and the session's logged events. */
  redraw(): Promise<void>;
  /** Redraws the footer and the screen. */
  refresh(): void;
  rows(): number;
  quit(): void;
}

/** Runs the TUI until the user leaves. */
export async function runChatTui(opener: ChatOpener, first: { sessionId?: string; settings: ResolvedModelSettings; initial: string[] }): Promise<void> {
  let chat = await openChat(opener, first.sessionId, first.settings);
  const initial = [...first.initial];
  const terminal = new ProcessTerminal();
  const tui = new TuiMainScreen(terminal);
  const header = new Lines();
  const transcript = new Transcript();
  const working = new Container();
  const queued = new Lines();
  const question = new Lines();
  const slot = new Container();
  const footer = new Lines();
  for (const child of [header, transcript, working, queued, question, slot, footer]) tui.addChild(child);
  const editor = new Editor(tui, editorTheme, { paddingX: 0 });
  slot.addChild(editor);

  let running: Promise<RunOutcome> | undefined;
  let asking: PendingApproval[] = [];
  let steering: string[] = [];
  let subscription: Subscription | undefined;
  let quitArmed = false;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const loader = new Loader(tui, style.cyan, style.gray, "working… (esc aborts)");

  const showQueue = () => queued.setText(steering.map((text) => style.gray(`steering: ${text.replace(/\s+/g, " ")}`)).join("\n"));
  const showQuestion = () => {
    const call = asking[0];
    question.setText(call ? style.yellow(`approve ${call.toolName} ${JSON.stringify(call.input)} (${call.toolCallId})? y approves; anything else denies, with it as the reason`) : "");
  };
  const refreshFooter = () => {
    const { harness } = chat;
    const home = process.env.HOME;
    const where = home && chat.cwd.startsWith(home) ? `~${chat.cwd.slice(home.length)}` : chat.cwd;
    const name = harness.session.view.name;
    const line = statusLine({
      model: harness.getState().modelName ?? chat.modelName,
      thinking: harness.getState().thinkingLevel,
      stats: harness.getStats(),
      contextTokens: contextTokensOf(harness.session.view.buildContext().messages),
      contextWindow: chat.settings.contextWindow ?? chat.model.contextWindow,
      shortId: shortSessionId(harness.id),
      sandbox: chat.sandbox,
    });
    footer.setText(style.gray([`${where}${name ? ` · ${name}` : ""}`, line].join("\n")));
  };
  const showHeader = () => {
    const lines = [
      `session ${chat.harness.id} (short id ${shortSessionId(chat.harness.id)}; /exit leaves)`,
      style.gray("/help lists the commands · Esc aborts · Ctrl+O tool output · Ctrl-C twice quits"),
      `sandbox: ${chat.sandbox}`,
      ...(chat.contextFiles.length > 0 ? [`context: ${chat.contextFiles.join(", ")} (--no-context-files leaves them out)`] : []),
      ...chat.resources.diagnostics.map((line) => style.yellow(line)),
    ];
    header.setText(lines.map((line) => truncateToWidth(line, 1000)).join("\n"));
  };
  const completion = () =>
    chatCompletion(
      [...TUI_COMMANDS.filter((entry) => entry.name.startsWith("/")).map((entry) => ({ name: entry.name.slice(1), description: entry.does })), ...chat.slashCommands.map((name) => ({ name }))],
      chat.cwd,
    );

  const redraw = async () => {
    const events = await opener.store.repo.log.readStream(sessionStreamId(chat.harness.id));
    transcript.showBranch(chat.harness.session.view.getBranch(), events.filter(isArborEvent));
  };
  const subscribe = async () => {
    const after = await opener.store.repo.log.headPosition();
    await redraw();
    subscription = chat.harness.events$.subscribe({
      next(event) {
        if (event.globalPosition <= after) return;
        transcript.apply(event);
        if (event.type === "entry.appended" && steering.length > 0) {
          const entry = event.data.entry as { type: string; message?: { role?: string } };
          if (entry.type === "message" && entry.message?.role === "user") {
            steering = steering.slice(1);
            showQueue();
          }
        }
        if (event.type === "message.ended" || event.type === "run.ended" || event.type === "entry.appended") refreshFooter();
        tui.requestRender();
      },
      error: (error: unknown) => {
        transcript.notice(`the session's events stopped: ${describeCliError(error)}`, "error");
        tui.requestRender();
      },
    });
  };

  const app: ChatTui = {
    get chat() {
      return chat;
    },
    opener,
    transcript,
    running: () => running !== undefined,
    redraw,
    start(work) {
      const run = async () => {
        const outcome = await work();
        if (outcome.status === "suspended") {
          asking = (await chat.harness.pendingApprovals()).filter((call) => call.status === "pending");
          for (const call of asking) transcript.awaitingApproval(call.toolCallId);
          showQuestion();
        }
        return outcome;
      };
      working.clear();
      working.addChild(loader);
      loader.start();
      const current: Promise<RunOutcome> = run().finally(() => {
        if (running !== current) return;
        running = undefined;
        loader.stop();
        working.clear();
        steering = [];
        showQueue();
        refreshFooter();
        tui.requestRender();
        sendInitial();
      });
      running = current;
      current.catch((error: unknown) => {
        transcript.notice(describeCliError(error), "error");
        tui.requestRender();
      });
      tui.requestRender();
    },
    replaceEditor(component) {
      slot.clear();
      slot.addChild(component);
      tui.setFocus(component);
      tui.requestRender();
    },
    restoreEditor() {
      slot.clear();
      slot.addChild(editor);
      tui.setFocus(editor);
      tui.requestRender();
    },
    async switchTo(sessionId, settings, extra = []) {
      subscription?.unsubscribe();
      await chat.harness.waitForIdle();
      await chat.harness.close();
      chat = await openChat(opener, sessionId, settings, extra);
      editor.setAutocompleteProvider(completion());
      showHeader();
      await subscribe();
      refreshFooter();
      tui.requestRender();
    },
    refresh() {
      refreshFooter();
      tui.requestRender();
    },
    rows: () => terminal.rows,
    quit: () => finish(),
  };

  const handle = async (text: string) => {
    if (asking.length > 0) {
      const call = asking.shift()!;
      const answer = text.trim();
      if (/^y(es)?$/i.test(answer)) {
        await chat.harness.approve(call.toolCallId);
        transcript.approved(call.toolCallId);
      }
      else await chat.harness.deny(call.toolCallId, { reason: /^n(o)?$/i.test(answer) || answer === "" ? "declined at the prompt" : answer });
      transcript.notice(`${/^y(es)?$/i.test(answer) ? "approved" : "denied"} ${call.toolName} (${call.toolCallId})`);
      showQuestion();
      if (asking.length === 0) app.start(() => chat.harness.continue());
      return;
    }
    const result = await handleChatLine(app, text);
    if (result === "steered") {
      steering.push(text.trim());
      showQueue();
    }
  };

  function sendInitial(): void {
    const message = asking.length === 0 && !running ? initial.shift() : undefined;
    if (message === undefined) return;
    void handle(message).catch((error: unknown) => transcript.notice(describeCliError(error), "error"));
  }

  editor.onSubmit = (text) => {
    if (text.trim() !== "") editor.addToHistory(text);
    handle(text)
      .catch((error: unknown) => transcript.notice(describeCliError(error), "error"))
      .finally(() => app.refresh());
  };
  tui.addInputListener((data) => {
    if (!matchesKey(data, "ctrl+c")) quitArmed = false;
    if (matchesKey(data, "ctrl+c")) {
      if (running) chat.harness.abort("interrupted by the user (Ctrl-C)");
      else if (slot.children[0] !== editor) app.restoreEditor();
      else if (editor.getText() !== "") editor.setText("");
      else if (quitArmed) finish();
      else {
        quitArmed = true;
        transcript.notice("(press Ctrl-C again to quit)");
      }
      tui.requestRender();
      return { consume: true };
    }
    if (matchesKey(data, "escape") && running && slot.children[0] === editor && !editor.isShowingAutocomplete()) {
      chat.harness.abort("interrupted by the user (Esc)");
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+o")) {
      transcript.toggleExpanded();
      tui.requestRender();
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+d") && slot.children[0] === editor && editor.getText() === "") {
      finish();
      return { consume: true };
    }
    return undefined;
  });
  const onSignal = (signal: string) => () => {
    chat.harness.abort(`received ${signal}`);
    finish();
  };
  const signals = (["SIGTERM", "SIGHUP"] as const).map((signal) => [signal, onSignal(signal)] as const);
  for (const [signal, listener] of signals) process.on(signal, listener);

  editor.setAutocompleteProvider(completion());
  showHeader();
  await subscribe();
  refreshFooter();
  tui.setFocus(editor);
  tui.start();
  sendInitial();
  await finished;
  for (const [signal, listener] of signals) process.off(signal, listener);
  if (running) {
    chat.harness.abort("the chat was closed");
    await running.catch(ignoreError("the chat was closed; the run's error is shown by its own handler"));
  }
  await chat.harness.waitForIdle();
  subscription?.unsubscribe();
  loader.stop();
  tui.stop();
  await chat.harness.close();
}
