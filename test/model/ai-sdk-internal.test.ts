/**
 * The `ai/internal` function Arbor relies on (`src/adapters/model/ai-sdk-internal.ts`, the one
 * module that imports it) still has the shape it uses. `ai/internal` is not public API: an
 * `ai` upgrade that renames, moves or reshapes them fails here first, by name, instead of as
 * wrong prompts somewhere in the model tests.
 */
import { InvalidPromptError } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import * as internal from "ai/internal";
import { describe, expect, it } from "vitest";
import { convertModelPrompt } from "../../src/adapters/model/ai-sdk-internal.ts";
import { validateModelPrompt } from "../../src/adapters/model/prompt-validation.ts";

const options = () => ({ supportedUrls: {}, abortSignal: new AbortController().signal });

describe("ai/internal as Arbor uses it", () => {
  it("still exports convertToLanguageModelPrompt as a function", () => {
    for (const name of ["convertToLanguageModelPrompt"] as const) {
      expect(typeof (internal as Record<string, unknown>)[name], `ai/internal no longer exports ${name}: rewrite src/adapters/model/ai-sdk-internal.ts against this ai version`).toBe("function");
    }
  });

  it("converts system, user, assistant tool call and tool result to the provider prompt", async () => {
    const messages: ModelMessage[] = [
      { role: "user", content: [{ type: "text", text: "read a" }, { type: "image", image: "aGk=", mediaType: "image/png" }] },
      { role: "assistant", content: [{ type: "text", text: "reading" }, { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "A" } }] },
    ];
    await expect(validateModelPrompt("Be brief.", messages)).resolves.toBeUndefined();
    expect(await convertModelPrompt({ system: "Be brief.", messages }, options())).toEqual([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "read a" },
          { type: "file", data: { type: "data", data: "aGk=" }, mediaType: "image/png" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "reading" },
          { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a" } },
        ],
      },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "A" } }] },
    ]);
  });

  it("rejects with the SDK's own errors: InvalidPromptError for an empty or malformed prompt, MissingToolResultsError for a call without its result", async () => {
    await expect(validateModelPrompt(undefined, [])).rejects.toSatisfy((error: unknown) => InvalidPromptError.isInstance(error));
    await expect(validateModelPrompt(undefined, [{ role: "user", content: 42 } as never])).rejects.toSatisfy((error: unknown) => InvalidPromptError.isInstance(error));
    await expect(
      convertModelPrompt({ messages: [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: {} }] }, { role: "user", content: "next" }] }, options()),
    ).rejects.toMatchObject({ name: "AI_MissingToolResultsError" });
  });
});
