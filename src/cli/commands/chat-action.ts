/**
 * `arbor chat [--session ID]`: an interactive session.
 *
 * Contract (ours; queue semantics pi's):
 * - a line typed while the agent works is queued as steering; `/followup text`
 *   queues a follow-up;
 * - commands: `/tree`, `/checkout <entry> [--summarize]`, `/compact [instructions]`,
 *   `/label <entry> <label>`, `/name <name>`, `/exit`; `/skill:name args` and prompt
 *   templates `/name args` are expanded by the harness;
 * - Ctrl-C aborts a running run; when idle it exits (as does end of input).
 *
 * @example
 * ```sh
 * arbor chat --model openai:gpt-4o-mini
 * ```
 */
import { createInterface } from "node:readline";
import type { RunOutcome } from "../../machines/agent-types.ts";
import { createCliHarness, resolveSessionCwd } from "../agent-setup.ts";
import type { ToolFlags } from "../tool-flags.ts";
import { startInspector } from "./model-actions.ts";
import { CliError, describeCliError } from "../cli-error.ts";
import { resolveModelSettings, settingsSecrets, type ModelFlags } from "../config.ts";
import { renderTree } from "../render-tree.ts";
import { printRun } from "../run-printer.ts";
import { openStore, recordEndpoint, recordedEndpoint, resolveEntryId } from "../store-context.ts";

/** `arbor chat` (loaded lazily by `registerChatCommand`). */
export async function chatAction(flags: ModelFlags & ToolFlags & { session?: string; continue?: boolean; cwd?: string; inspect?: string | boolean }, globals: { db?: string }): Promise<void> {
      const store = openStore(globals);
      const sessionId = flags.session ? await store.resolveSessionId(flags.session) : flags.continue ? await store.resolveSessionId("latest") : undefined;
      const existing = sessionId ? await store.repo.open(sessionId) : undefined;
      // A resumed session works where it was started (unless --cwd says otherwise).
      const cwd = resolveSessionCwd(flags.cwd, existing?.view.info.cwd, sessionId);
      const settings = resolveModelSettings(flags, process.env, existing ? recordedEndpoint(existing) : {});
      store.addSecrets(settingsSecrets(settings));
      if (!settings.apiKey) {
        await store.close();
        throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env).`);
      }
      const inspector = await startInspector(flags.inspect);
      const { harness, sandbox } = await createCliHarness({ store, sessionId, cwd, settings, inspect: inspector?.inspect, tools: flags });
      process.stderr.write(`sandbox: ${sandbox}\n`);
      await recordEndpoint(harness.session as never, settings);
      const printer = printRun(harness.events$, { json: false, afterPosition: await store.repo.log.headPosition() });
      process.stderr.write(`session ${harness.id} (type /exit to leave)\n`);
      const lines = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true });
      let running: Promise<RunOutcome> | undefined;
      const say = (text: string) => process.stdout.write(`${text}\n`);
      const start = (work: () => Promise<RunOutcome>) => {
        running = work().finally(async () => {
          // The prompt comes after the run's last event is printed (PostgreSQL delivers asynchronously).
          await printer.caughtUp(harness.session.view.version);
          running = undefined;
          lines.prompt();
        });
        running.catch((error: unknown) => say(describeCliError(error)));
      };
      const handle = async (line: string) => {
        const text = line.trim();
        if (!text) return;
        if (text === "/exit" || text === "/quit") return lines.close();
        if (text.startsWith("/followup ")) return harness.followUp(text.slice("/followup ".length));
        if (text === "/tree") return say(renderTree(harness.session.view.getTree(), { leafId: harness.session.view.leafId }));
        if (running) return harness.steer(text);
        const [command, ...rest] = text.split(/\s+/);
        switch (command) {
          case "/checkout": {
            const target = resolveEntryId(harness.session as never, rest[0] ?? "");
            const result = await harness.moveTo(target, { summarize: rest.includes("--summarize") });
            say(`leaf ${result.newLeafId ?? "(root)"}${result.editorText ? `\n${result.editorText}` : ""}`);
            return;
          }
          case "/compact": {
            const entry = await harness.compact(rest.join(" ") || undefined);
            return say(`compacted: ${entry.tokensBefore} tokens before; keeps from ${entry.firstKeptEntryId}`);
          }
          case "/label":
            await harness.label(resolveEntryId(harness.session as never, rest[0] ?? ""), rest.slice(1).join(" ") || undefined);
            return say("labelled");
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
      for (const signal of ["SIGTERM", "SIGHUP"] as const) {
        process.on(signal, () => {
          harness.abort(`received ${signal}`);
          lines.close();
        });
      }
      lines.setPrompt("> ");
      lines.prompt();
      lines.on("line", (line) => {
        handle(line)
          .catch((error: unknown) => say(describeCliError(error)))
          .finally(() => {
            if (!running) lines.prompt();
          });
      });
      await new Promise<void>((resolve) => lines.once("close", () => resolve()));
      // After /exit the pipe may still be open; let go of it so the process can end.
      process.stdin.destroy();
      if (running) await running.catch(() => undefined);
      await harness.waitForIdle();
      await printer.caughtUp(harness.session.view.version);
      printer.stop();
      await harness.close();
      inspector?.stop();
      await store.close();
    }
