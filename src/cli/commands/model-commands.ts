/**
 * Commands that call a model: `arbor run`, `resume`, `checkout`, `compact` (and `chat`, from `chat.ts`). A resumed session works in its recorded
 * folder (refused if gone); `--approve TOOL` asks on a terminal, else stops with exit 3; a run that cannot start writes nothing and quotes the
 * prompt; Ctrl-C aborts cleanly, twice exits. `resume` continues an unfinished run from the log (`docs/durability.md`). Exit codes: 0 done, 1 failed,
 * 2 usage, 3 approval, 130 aborted.
 */
import type { Command } from "commander";
import type { ModelFlags } from "../config.ts";
import type { StoreFlags } from "../store-context.ts";
import { withToolFlags, type ToolFlags } from "../tool-flags.ts";
import { registerChatCommand } from "./chat.ts";

/** The flags of `arbor run`. */
export type RunFlags = ModelFlags & ToolFlags & { session?: string; continue?: boolean; resume?: boolean; continueRun?: boolean; print?: boolean; thinking?: string; cwd?: string; json?: boolean; inspect?: string | boolean; inspectHost?: string; contextFiles?: boolean; approve?: string[]; budget?: string };

/** Adds the model flags to a command. */
export function withModelFlags(command: Command): Command {
  return command
    .option("--model <provider:model>", "openai:, anthropic: or google: and the model id, e.g. openai:gpt-4o-mini; pi's openai/gpt-4o-mini and a :thinking suffix (openai/o4-mini:high) work too (default: $ARBOR_MODEL)")
    .option("--base-url <url>", "the provider's base URL, e.g. an OpenAI-compatible http://127.0.0.1:11434/v1 (default: $OPENAI_BASE_URL, $ANTHROPIC_BASE_URL or $GOOGLE_GENERATIVE_AI_BASE_URL)")
    .option("--api <api>", "openai only: chat or responses (default: chat when a base URL is given)")
    .option("--context-window <tokens>", "context window of a model Arbor does not know")
    .option("--api-key-env <name>", "read the API key from this variable (default: OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY)")
    .option("--idle-timeout <seconds>", "cancel (and retry) a model call that sends nothing for this long; 0 turns it off (default 120)")
    .option("--price <prices>", "the model's prices in $ per million tokens, input=2.5,output=10[,cache-read=1.25,cache-write=3]: usage is priced with them, and a cost= budget needs them (default: $ARBOR_MODEL_PRICE)");
}

/** Registers run, checkout, compact and chat on `program`. */
export function registerModelCommands(program: Command, globals: () => StoreFlags, exit: { code: number }): void {
  withToolFlags(withModelFlags(
    program
      .command("run")
      .description("Run the coding agent on a prompt (arguments, @files and piped stdin) and print the answer")
      .argument("[prompt...]", "the prompt; @path adds that file's text; piped stdin comes first")
      .option("--session <id>", "run in this session")
      .option("-c, --continue", "run in the latest session")
      .option("-r, --resume", "pick the session to run in from a list (needs a terminal)")
      .option("-p, --print", "print the answer and exit (what run always does; pi's flag)")
      .option("--thinking <level>", "thinking level: off, minimal, low, medium, high or xhigh (logged)")
      .option("--cwd <dir>", "directory the coding tools work in (default: a resumed session's own folder, else the current directory)")
      .option("--json", "print the logged events as JSON lines")
      .option("--approve <tool>", "ask before every call of this tool (repeatable; all = every tool): on a terminal you are asked, else the run stops with exit code 3 and prints the waiting call (see arbor approvals / approve / deny)", (value: string, previous: string[] = []) => [...previous, value])
      .option("--inspect [port]", "serve the Stately inspector for the actors on this port of 127.0.0.1 (default 8080); the page loads the hosted Stately UI from stately.ai (needs internet); content is redacted")
      .option("--inspect-host <host>", "interface for --inspect (default 127.0.0.1; 0.0.0.0 lets other machines connect)")
      .option("--no-context-files", "do not add AGENTS.md / CLAUDE.md (from $ARBOR_AGENT_DIR or ~/.arbor/agent, and from the folders down to --cwd) to the system prompt")
      .option("--budget <limits>", "limits of this run, e.g. cost=0.50,tokens=20000,tool-calls=50,turns=10,duration=10m (docs/budgets.md); over them the run ends budget_exceeded, exit code 4"),
  )).action(async (words: string[], flags: RunFlags) => {
    const { runAction } = await import("./model-actions.ts");
    await runAction(words, flags, globals(), exit);
  });

  withToolFlags(withModelFlags(
    program
      .command("resume")
      .description("Continue a session's run that its process left unfinished (killed, crashed), from the log (docs/durability.md)")
      .argument("<session>", "session id, unique prefix, or latest")
      .option("--cwd <dir>", "directory the coding tools work in (default: the session's own folder)")
      .option("--json", "print the logged events as JSON lines")
      .option("--approve <tool>", "also ask before every call of this tool (repeatable; all = every tool), besides the tools the run was started with (recorded in the log)", (value: string, previous: string[] = []) => [...previous, value])
      .option("--budget <limits>", "run limits as for arbor run; combined with the limits the run was started with (the smaller of each holds)"),
  )).action(async (reference: string, flags: ModelFlags & ToolFlags & { cwd?: string; json?: boolean; approve?: string[]; budget?: string }) => {
    const { runAction } = await import("./model-actions.ts");
    await runAction([], { ...flags, session: reference, continueRun: true }, globals(), exit);
  });

  withModelFlags(
    program
      .command("checkout")
      .description("Move a session's leaf to an entry (pi's /tree); --summarize keeps a summary of the branch you leave")
      .argument("<session>", "session id, unique prefix, or latest")
      .argument("<entry>", "entry id, unique prefix, or label")
      .option("--summarize", "summarize the abandoned branch (calls the session's model: needs its key)")
      .option("--label <label>", "label the new position")
      .option("--files", "also put the session's folder back to the files recorded there (your unrecorded changes are saved first; docs/workspace.md)"),
  ).action(async (reference: string, entryReference: string, flags: ModelFlags & { summarize?: boolean; label?: string; files?: boolean }) => {
    const { checkoutAction } = await import("./model-actions.ts");
    await checkoutAction(reference, entryReference, flags, globals());
  });

  withModelFlags(
    program
      .command("compact")
      .description("Summarize the older part of a session's context (calls the model: needs its key)")
      .argument("<session>", "session id, unique prefix, or latest")
      .option("--instructions <text>", "what the summary should focus on")
      .option("--keep-recent <tokens>", "keep this many of the newest tokens as they are (default 20000, at most half the window); lower it to compact a short session"),
  ).action(async (reference: string, flags: ModelFlags & { instructions?: string; keepRecent?: string }) => {
    const { compactAction } = await import("./model-actions.ts");
    await compactAction(reference, flags, globals());
  });

  registerChatCommand(program, globals);
}
