/**
 * Commands that call a model: `arbor run`, `arbor checkout`, `arbor compact`
 * (and `arbor chat`, registered from `chat.ts`).
 *
 * Contract (ours):
 * - `run [prompt...]` runs in a new session, `--session ID`, or `--continue` (the
 *   latest); the prompt comes from stdin when no arguments are given; with an
 *   existing session and no prompt it continues (e.g. after a crash or a missing key);
 * - exit codes: 0 done, 1 failed, 130 aborted; usage errors 2;
 * - a missing API key: the prompt is appended to the session first (durable), then
 *   one line on stderr names the variable to set and how to resume; exit 2;
 * - Ctrl-C aborts the run cleanly (running tools are killed, the session stays
 *   consistent); a second Ctrl-C exits at once;
 * - `checkout` moves the leaf (pi's semantics: a user message target moves to its
 *   parent and prints the message text for re-editing); `--summarize` needs a model.
 *
 * @example
 * ```sh
 * OPENAI_API_KEY=sk-... arbor run --model openai:gpt-4o-mini "add a test for utils.ts"
 * arbor run --continue "now run the tests"
 * ```
 */
import type { Command } from "commander";
import { compact } from "../../compaction/compact.ts";
import { createHookRunner } from "../../harness/hooks.ts";
import { navigateTo } from "../../harness/tree-navigation.ts";
import { createCliHarness } from "../agent-setup.ts";
import { CliError } from "../cli-error.ts";
import { resolveModelSettings, type ModelFlags } from "../config.ts";
import { printRun } from "../run-printer.ts";
import { openStore, resolveEntryId } from "../store-context.ts";
import { registerChatCommand } from "./chat.ts";

interface DbFlags {
  db?: string;
}

/** Adds the model flags to a command. */
export function withModelFlags(command: Command): Command {
  return command
    .option("--model <provider:model>", "model to use (default: $ARBOR_MODEL)")
    .option("--base-url <url>", "OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 (default: $OPENAI_BASE_URL)")
    .option("--api <api>", "chat or responses (default: chat when a base URL is given)")
    .option("--context-window <tokens>", "context window of a model Arbor does not know")
    .option("--api-key-env <name>", "read the API key from this variable instead of OPENAI_API_KEY");
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

const EXIT_CODES = { done: 0, failed: 1, aborted: 130, interrupted: 1 } as const;

/** Registers run, checkout, compact and chat on `program`. */
export function registerModelCommands(program: Command, globals: () => DbFlags, exit: { code: number }): void {
  withModelFlags(
    program
      .command("run")
      .description("Run the coding agent on a prompt (arguments, or stdin)")
      .argument("[prompt...]", "the prompt; read from stdin when absent")
      .option("--session <id>", "run in this session")
      .option("--continue", "run in the latest session")
      .option("--cwd <dir>", "directory the coding tools work in (default: the current directory)")
      .option("--json", "print the logged events as JSON lines"),
  ).action(async (words: string[], flags: ModelFlags & { session?: string; continue?: boolean; cwd?: string; json?: boolean }) => {
    const settings = resolveModelSettings(flags);
    const prompt = words.length > 0 ? words.join(" ") : await readStdin();
    const store = openStore(globals());
    try {
      const sessionId = flags.session ? await store.resolveSessionId(flags.session) : flags.continue ? await store.resolveSessionId("latest") : undefined;
      if (!prompt && !sessionId) throw new CliError('No prompt: pass it as arguments (arbor run "…") or on stdin.');
      const { harness } = await createCliHarness({ store, sessionId, cwd: flags.cwd ?? process.cwd(), settings });
      try {
        if (!settings.apiKey) {
          if (prompt) await harness.session.appendEntry({ type: "message", message: { role: "user", content: prompt, timestamp: Date.now() } });
          throw new CliError(
            `No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env). Your prompt is saved in session ${harness.id}; resume with: arbor run --session ${harness.id}`,
          );
        }
        const head = await store.repo.log.headPosition();
        const printer = printRun(harness.events$, { json: flags.json === true, afterPosition: head });
        let interrupted = false;
        const onSigint = () => {
          if (interrupted) process.exit(130);
          interrupted = true;
          harness.abort("interrupted by the user (Ctrl-C)");
        };
        process.on("SIGINT", onSigint);
        try {
          const outcome = prompt ? await harness.prompt(prompt) : await harness.continue();
          await harness.waitForIdle();
          exit.code = EXIT_CODES[outcome.status];
          if (!flags.json) process.stderr.write(`session ${harness.id}\n`);
        } finally {
          process.off("SIGINT", onSigint);
          printer.stop();
        }
      } finally {
        await harness.close();
      }
    } finally {
      await store.close();
    }
  });

  withModelFlags(
    program
      .command("checkout")
      .description("Move a session's leaf to an entry (pi's /tree); --summarize keeps a summary of the branch you leave")
      .argument("<session>", "session id, unique prefix, or latest")
      .argument("<entry>", "entry id or unique prefix")
      .option("--summarize", "summarize the abandoned branch (needs a model)")
      .option("--label <label>", "label the new position"),
  ).action(async (reference: string, entryReference: string, flags: ModelFlags & { summarize?: boolean; label?: string }) => {
    const store = openStore(globals());
    try {
      const session = await store.openSession(reference);
      const targetId = resolveEntryId(session, entryReference);
      let result;
      if (flags.summarize) {
        const { harness } = await createCliHarness({ store, sessionId: session.id, cwd: session.view.info.cwd || process.cwd(), settings: resolveModelSettings(flags) });
        try {
          result = await harness.moveTo(targetId, { summarize: true, label: flags.label });
        } finally {
          await harness.close();
        }
      } else {
        result = await navigateTo({ session, hooks: createHookRunner(), isBusy: () => false }, targetId, { label: flags.label });
      }
      if (result.cancelled) throw new CliError("Checkout cancelled by a hook; nothing changed.", 1);
      process.stdout.write(`leaf ${result.newLeafId ?? "(root)"}\n`);
      if (result.editorText !== undefined) process.stdout.write(`\n${result.editorText}\n`);
    } finally {
      await store.close();
    }
  });

  withModelFlags(
    program
      .command("compact")
      .description("Summarize the older part of a session's context")
      .argument("<session>", "session id, unique prefix, or latest")
      .option("--instructions <text>", "what the summary should focus on"),
  ).action(async (reference: string, flags: ModelFlags & { instructions?: string }) => {
    const settings = resolveModelSettings(flags);
    if (!settings.apiKey) throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env).`);
    const store = openStore(globals());
    try {
      const sessionId = await store.resolveSessionId(reference);
      const { harness, model } = await createCliHarness({ store, sessionId, cwd: process.cwd(), settings });
      try {
        const entry = await compact(harness.session, { model, customInstructions: flags.instructions });
        process.stdout.write(`compaction ${entry.id}: ${entry.tokensBefore} tokens before; keeps from ${entry.firstKeptEntryId}\n`);
      } finally {
        await harness.close();
      }
    } finally {
      await store.close();
    }
  });

  registerChatCommand(program, globals);
}
