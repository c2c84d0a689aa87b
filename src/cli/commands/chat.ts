/** `arbor chat [--session ID]`: registration; the body is in `chat-action.ts` (loaded lazily so model-free commands start fast). */
import type { Command } from "commander";
import type { ModelFlags } from "../config.ts";
import { withToolFlags, type ToolFlags } from "../tool-flags.ts";

/** The flags of `arbor chat`. */
export type ChatFlags = ModelFlags & ToolFlags & { session?: string; continue?: boolean; resume?: boolean; thinking?: string; cwd?: string; inspect?: string | boolean; inspectHost?: string; contextFiles?: boolean; approve?: string[]; plain?: boolean };

/** Registers `chat` on `program`. */
export function registerChatCommand(program: Command, globals: () => { db?: string }): void {
  withToolFlags(program
    .command("chat")
    .description("Chat interactively (a TUI on a terminal, lines elsewhere); lines typed while the agent works are queued as steering")
    .argument("[messages...]", "prompts to send first, one after the other; @path adds that file's text to the first")
    .option("--session <id>", "continue this session")
    .option("-c, --continue", "continue the latest session")
    .option("-r, --resume", "pick the session to continue from a list")
    .option("--plain", "the line chat even on a terminal (no TUI): one line per message, for screen readers and logs")
    .option("--thinking <level>", "thinking level: off, minimal, low, medium, high or xhigh (logged)")
    .option("--cwd <dir>", "directory the coding tools work in (default: a resumed session's own folder, else the current directory)")
    .option("--model <provider:model>", "openai:, anthropic: or google: and the model id; pi's provider/model and a :thinking suffix work too (default: $ARBOR_MODEL)")
    .option("--base-url <url>", "the provider's base URL (default: $OPENAI_BASE_URL, $ANTHROPIC_BASE_URL or $GOOGLE_GENERATIVE_AI_BASE_URL)")
    .option("--api <api>", "openai only: chat or responses (default: chat when a base URL is given)")
    .option("--context-window <tokens>", "context window of a model Arbor does not know")
    .option("--api-key-env <name>", "read the API key from this variable (default: OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY)")
    .option("--approve <tool>", "ask before every call of this tool (repeatable; all = every tool): the next line you type answers (y approves, anything else denies with it as the reason)", (value: string, previous: string[] = []) => [...previous, value])
    .option("--idle-timeout <seconds>", "cancel (and retry) a model call that sends nothing for this long; 0 turns it off (default 120)")
    .option("--inspect [port]", "serve the Stately inspector for the actors on this port of 127.0.0.1 (default 8080); the page loads the hosted Stately UI from stately.ai (needs internet); content is redacted")
      .option("--inspect-host <host>", "interface for --inspect (default 127.0.0.1; 0.0.0.0 lets other machines connect)")
      .option("--no-context-files", "do not add AGENTS.md / CLAUDE.md (from $ARBOR_AGENT_DIR or ~/.arbor/agent, and from the folders down to --cwd) to the system prompt"))
    .action(async (messages: string[], flags: ChatFlags) => {
      const { chatAction } = await import("./chat-action.ts");
      await chatAction(flags, globals(), messages);
    });
}
