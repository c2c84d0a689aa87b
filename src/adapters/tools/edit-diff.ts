/**
 * The line-numbered diff the edit tool puts in `details.diff` (pi's format): `+N`/`-N`/` N` lines from `diffLines`, at most `contextLines` of
 * context around a change, skipped context as `...`. Pure.
 * `diff` (its CommonJS build) is required on the first call.
 */
import type * as Diff from "diff";
import { lazyRequire } from "../../core/lazy-require.ts";

const diff = lazyRequire<typeof Diff>("diff");

/** The diff text and the first changed line (1-based, new text), undefined when equal. */
export interface EditDiff {
  diff: string;
  firstChangedLine: number | undefined;
}

/**
 * Builds pi's line-numbered diff of two LF texts. See the module contract.
 * @example
 * const { diff, firstChangedLine } = generateDiffString(before, after, 4);
 */
export function generateDiffString(oldText: string, newText: string, contextLines = 4): EditDiff {
  const parts = diff().diffLines(oldText, newText);
  const width = String(Math.max(oldText.split("\n").length, newText.split("\n").length)).length;
  const output: string[] = [];
  const pad = (value: number | string) => String(value).padStart(width, " ");
  const skipped = () => output.push(` ${pad("")} ...`);
  let oldLine = 1;
  let newLine = 1;
  let lastWasChange = false;
  let firstChangedLine: number | undefined;
  const context = (lines: string[]) => {
    for (const line of lines) {
      output.push(` ${pad(oldLine)} ${line}`);
      oldLine += 1;
      newLine += 1;
    }
  };
  const skip = (count: number) => {
    oldLine += count;
    newLine += count;
  };
  parts.forEach((part, index) => {
    const lines = part.value.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    if (part.added || part.removed) {
      firstChangedLine ??= newLine;
      for (const line of lines) {
        if (part.added) {
          output.push(`+${pad(newLine)} ${line}`);
          newLine += 1;
        } else {
          output.push(`-${pad(oldLine)} ${line}`);
          oldLine += 1;
        }
      }
      lastWasChange = true;
      return;
    }
    const next = parts[index + 1];
    const trailingChange = next !== undefined && (next.added || next.removed);
    if (lastWasChange && trailingChange) {
      if (lines.length <= contextLines * 2) context(lines);
      else {
        context(lines.slice(0, contextLines));
        skipped();
        skip(lines.length - contextLines * 2);
        context(lines.slice(lines.length - contextLines));
      }
    } else if (lastWasChange) {
      const shown = lines.slice(0, contextLines);
      context(shown);
      if (lines.length > shown.length) {
        skipped();
        skip(lines.length - shown.length);
      }
    } else if (trailingChange) {
      const hidden = Math.max(0, lines.length - contextLines);
      if (hidden > 0) {
        skipped();
        skip(hidden);
      }
      context(lines.slice(hidden));
    } else {
      skip(lines.length);
    }
    lastWasChange = false;
  });
  return { diff: output.join("\n"), firstChangedLine };
}
