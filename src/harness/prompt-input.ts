/**
 * Turns what `prompt()` receives into a run's first messages (pi's order): only a string is expanded (`/skill:name`, `/template`), images follow the
 * text, `nextTurn` messages come after. An empty prompt throws `InvalidArgumentError`.
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
 * @throws InvalidArgumentError for an empty prompt, an empty message list, or a non-message input.
 * @example
 * buildPromptMessages("hello", [{ type: "image", data: png, mimeType: "image/png" }], { templates: [], skills: [] }).messages[0].content;
 * // [{ type: "text", text: "hello" }, { type: "image", ... }]
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
