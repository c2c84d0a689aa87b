/**
 * Prompt validation with the AI SDK's public schema: `ai` 7's `standardizePrompt` no longer checks messages against the `ModelMessage` schema, so
 * Arbor does it itself with the exported `modelMessageSchema` and throws the SDK's own `InvalidPromptError`, as `ai` 6 did.
 */
import { InvalidPromptError } from "@ai-sdk/provider";
import { modelMessageSchema, type ModelMessage } from "ai";

/**
 * Rejects with `InvalidPromptError` when `messages` is empty, holds a system message (the system prompt is `system`), or a message does not match the
 * SDK's `ModelMessage` schema (the message names the index and the schema's issue); resolves otherwise. Async, as the SDK's own check was.
 */
export async function validateModelPrompt(system: string | undefined, messages: readonly ModelMessage[]): Promise<void> {
  const prompt = { system, messages };
  if (messages.length === 0) throw new InvalidPromptError({ prompt, message: "messages must not be empty" });
  for (const [index, message] of messages.entries()) {
    if ((message as { role?: unknown }).role === "system") {
      throw new InvalidPromptError({ prompt, message: `messages[${index}] is a system message; the system prompt is passed apart.` });
    }
    const result = await modelMessageSchema.safeParseAsync(message);
    if (!result.success) {
      throw new InvalidPromptError({
        prompt,
        message: `The messages do not match the ModelMessage[] schema: messages[${index}]: ${result.error.issues.map((issue) => issue.message).join("; ")}`,
        cause: result.error,
      });
    }
  }
}
