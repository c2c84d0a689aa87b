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
} from "../../src/adapters/tools/truncate.ts";

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

  it("truncateHead equals pi's on generated inputs", () => {
    fc.assert(
      fc.property(text, limits, (content, options) => {
        expect(truncateHead(content, options)).toEqual(piTools.truncateHead(content, options));
      }),
      { numRuns: 2000 },
    );
  });

  it("truncateTail equals pi's on generated inputs", () => {
    fc.assert(
      fc.property(text, limits, (content, options) => {
        expect(truncateTail(content, options)).toEqual(piTools.truncateTail(content, options));
      }),
      { numRuns: 2000 },
    );
  });

  it("both equal pi's at the default limits on large inputs", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4000 }), fc.integer({ min: 0, max: 60 }), fc.boolean(), (lines, width, trailing) => {
        const content = Array.from({ length: lines }, (_, index) => `${index}:${"é".repeat(width)}`).join("\n") + (trailing ? "\n" : "");
        expect(truncateHead(content)).toEqual(piTools.truncateHead(content));
        expect(truncateTail(content)).toEqual(piTools.truncateTail(content));
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

  it("keeps pi's line counting quirk: a trailing newline is one more line", () => {
    const result = truncateHead("a\n", { maxLines: 1 });
    expect(result).toMatchObject({ truncated: true, totalLines: 2, outputLines: 1, content: "a" });
  });
});
