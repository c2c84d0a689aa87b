import * as pi from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
  editorLines,
  type TruncationOptions,
  type TruncationResult,
} from "../../src/adapters/tools/truncate.ts";

const ours = { truncateHead, truncateTail };

/**
 * pi's result restated with editor line counts: pi applied to the text without its final newline
 * (where a trailing newline is not a line), with the whole text's bytes, and the untouched text
 * kept whole. On text without a trailing newline this is pi's result unchanged. The empty text
 * has no lines.
 */
function piAsEditor(piFn: (content: string, options?: TruncationOptions) => TruncationResult, content: string, options: TruncationOptions): TruncationResult {
  if (content === "") return { ...piFn(content, options), totalLines: 0, outputLines: 0 };
  if (!content.endsWith("\n")) return piFn(content, options);
  const result = piFn(content.slice(0, -1), options);
  if (result.truncated) return { ...result, totalBytes: result.totalBytes + 1 };
  return { ...result, content, totalBytes: result.totalBytes + 1, outputBytes: result.outputBytes + 1 };
}

const piTools = pi as unknown as {
  truncateHead: typeof truncateHead;
  truncateTail: typeof truncateTail;
  truncateLine: typeof truncateLine;
  formatSize: typeof formatSize;
};

const text = fc
  .array(fc.constantFrom("a", "b", " ", "\n", "\n", "é", "中", "😀", "\r", "xyz"), { maxLength: 80 })
  .map((parts) => parts.join(""));
const limits = fc.record({ maxLines: fc.integer({ min: 1, max: 12 }), maxBytes: fc.integer({ min: 1, max: 60 }) }, { requiredKeys: [] });

describe("truncation utilities, differential against pi 0.73.1", () => {
  it("uses pi's defaults", () => {
    expect(DEFAULT_MAX_LINES).toBe(2000);
    expect(DEFAULT_MAX_BYTES).toBe(51200);
  });

  it("truncateHead and truncateTail equal pi's on generated inputs (pi's count on the text without its final newline)", () => {
    fc.assert(
      fc.property(text, limits, (content, options) => {
        for (const name of ["truncateHead", "truncateTail"] as const) {
          expect(ours[name](content, options)).toEqual(piAsEditor(piTools[name], content, options));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("both equal pi's at the default limits on large inputs", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4000 }), fc.integer({ min: 0, max: 60 }), fc.boolean(), (lines, width, trailing) => {
        const content = Array.from({ length: lines }, (_, index) => `${index}:${"é".repeat(width)}`).join("\n") + (trailing ? "\n" : "");
        expect(truncateHead(content)).toEqual(piAsEditor(piTools.truncateHead, content, {}));
        expect(truncateTail(content)).toEqual(piAsEditor(piTools.truncateTail, content, {}));
      }),
      { numRuns: 60 },
    );
  });

  it("truncateLine and formatSize equal pi's", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 700 }), fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }), (line, max) => {
        expect(truncateLine(line, max)).toEqual(piTools.truncateLine(line, max));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 1024 * 1024 * 1024 }), (bytes) => {
        expect(formatSize(bytes)).toBe(piTools.formatSize(bytes));
      }),
      { numRuns: 2000 },
    );
    expect(formatSize(1024)).toBe("1.0KB");
    expect(formatSize(51200)).toBe("50.0KB");
  });

  it("counts lines as editors do: a trailing newline is not one more line (pi's is)", () => {
    expect(truncateHead("a\n", { maxLines: 1 })).toMatchObject({ truncated: false, totalLines: 1, outputLines: 1, content: "a\n" });
    expect(piTools.truncateHead("a\n", { maxLines: 1 })).toMatchObject({ truncated: true, totalLines: 2, outputLines: 1, content: "a" });
    const file = Array.from({ length: 2000 }, (_, index) => `${index + 1}\n`).join("");
    expect(truncateHead(file)).toMatchObject({ truncated: false, totalLines: 2000, content: file });
    expect(truncateTail(file)).toMatchObject({ truncated: false, totalLines: 2000, content: file });
    expect(truncateHead("")).toMatchObject({ truncated: false, totalLines: 0 });
    expect(editorLines("a\n\n")).toEqual(["a", ""]);
  });
});
