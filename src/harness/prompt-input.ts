/**
 * Turns what `prompt()` receives into the messages a run starts with: `/skill:name args` and
 * `/template args` expansion, images, and custom messages held for the next turn.
 *
 * Contract (order and semantics pi's `AgentSession.prompt`, `docs/pi-parity.md`;
 * ours where marked):
 * - only a **string** is expanded; a message or a message list is used as given (ours: no
 *   expansion inside structured input);
 * - expansion is `expandSlashCommand` (skills first when `enableSkillCommands`, then
 *   templates); an unknown `/name` is sent unchanged (pi);
 * - images become image blocks after the text block of the user message (pi);
 * - an empty string with no images throws `InvalidArgumentError` (nothing is sent or written);
 * - `nextTurn` messages go right after the prompt messages, in the order they were queued (pi).
 *
 * @example
 * ```ts
 * const { messages, text } = buildPromptMessages("/review src/app.ts", [], { templates, skills, enableSkillCommands: true });
 * ```
 */
import { expandSlashCommand, type SlashCommandExpansion } from "../adapters/prompt-templates/expand.ts";
import type { PromptTemplate } from "../adapters/prompt-templates/types.ts";
import type { Skill } from "../adapters/skills/types.ts";
import { InvalidArgumentError } from "../core/errors.ts";
import type { AgentMessage, ImageContent, UserMessage } from "../core/messages.ts";

/** What {@link buildPromptMessages} may expand. */
export interface PromptResources {
  templates: readonly PromptTemplate[];
  skills: readonly Skill[];
  /** `/skill:name` expansion (default true, pi). */
  enableSkillCommands?: boolean;
}

/** The result of {@link buildPromptMessages}. */
export interface PromptMessages {
  messages: AgentMessage[];
  /** The prompt text after expansion ("" for structured input). */
  text: string;
  /** What the slash command expanded to, for strings. */
  expansion?: SlashCommandExpansion;
}

/**
 * Builds the run's starting messages (see the module contract).
 *
 * @throws InvalidArgumentError for an empty prompt, an empty message list, or a non-message input.
 * @example
 * ```ts
 * buildPromptMessages("hello", [{ type: "image", data: png, mimeType: "image/png" }], { templates: [], skills: [] }).messages[0].content;
 * // [{ type: "text", text: "hello" }, { type: "image", ... }]
 * ```
 */
export function buildPromptMessages(
  input: string | AgentMessage | AgentMessage[],
  images: readonly ImageContent[] | undefined,
  resources: PromptResources,
  nextTurn: readonly AgentMessage[] = [],
  now: () => number = Date.now,
): PromptMessages {
  if (typeof input === "string") {
    if (input.trim() === "" && !images?.length) throw new InvalidArgumentError("prompt(): the prompt text is empty and there are no images.");
    const expansion = expandSlashCommand(input, {
      templates: resources.templates,
      skills: resources.enableSkillCommands === false ? [] : resources.skills,
    });
    const content: UserMessage["content"] = images?.length ? [{ type: "text", text: expansion.text }, ...images] : expansion.text;
    return { messages: [{ role: "user", content, timestamp: now() }, ...nextTurn], text: expansion.text, expansion };
  }
  const list = Array.isArray(input) ? input : [input];
  if (list.length === 0) throw new InvalidArgumentError("prompt(): the message list is empty.");
  list.forEach((message, index) => {
    if (typeof message !== "object" || message === null || typeof (message as { role?: unknown }).role !== "string") {
      throw new InvalidArgumentError(`prompt(): input[${index}] is not a message (expected an object with a role).`);
    }
  });
  const withImages = images?.length ? [...list, { role: "user" as const, content: [...images], timestamp: now() }] : list;
  return { messages: [...withImages, ...nextTurn], text: "" };
}
