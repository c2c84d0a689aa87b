/**
 * Every synthetic tool result (aborted, skipped, timed out, interrupted by a crash, missing) tells
 * the model plainly whether the tool ran, and that it may need to be run again.
 */
import { describe, expect, it } from "vitest";
import type { ToolCall } from "../../src/core/messages.ts";
import { abortedText, interruptedText, skippedText, timedOutText } from "../../src/machines/loop-messages.ts";
import { missingResultText } from "../../src/store/session/pairing.ts";

const call: ToolCall = { type: "toolCall", id: "c1", name: "bash", arguments: { command: "make" } };

describe("synthetic tool results", () => {
  it.each([
    ["skipped", skippedText(call, "user pressed stop"), /did not run/],
    ["aborted", abortedText(call, "user pressed stop"), /may not have finished/],
    ["timed out", timedOutText(call, 5000), /may not have finished/],
    ["interrupted", interruptedText(call), /may not have finished/],
    ["missing (crashed)", missingResultText(call), /may not have run or may not have finished/],
  ])("%s: says whether the tool ran and that it may need to be run again", (_kind, text, ran) => {
    expect(text).toContain('"bash"');
    expect(text).toMatch(ran);
    expect(text).toMatch(/may need to\s+be run again/);
  });
});
