/**
 * Truncation shared by the built-in tools: line and UTF-8 byte limits, whichever is hit first; lines counted as editors count them (a trailing
 * newline adds none). {@link truncateHead} never returns a partial line; {@link truncateTail} only when the last line alone exceeds the byte limit.
 * Pure; equal to pi's results (differential test).
 * @example
 * const result = truncateHead(text, { maxLines: 100 });
 * if (result.truncated) console.log(`showing ${result.outputLines} of ${result.totalLines} lines`);
 */

/**
 * Default line limit of tool output: 2000 lines. Source: pi.
 * @example
 * truncateHead(text, { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
 */
export const DEFAULT_MAX_LINES = 2000;
/**
 * Default byte limit of tool output: 51200 bytes (50 KiB). Source: pi.
 * @example
 * truncateTail(output, { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES / 2 });
 */
export const DEFAULT_MAX_BYTES = 50 * 1024;
/**
 * Longest grep match line shown, in UTF-16 code units, before it is clipped. Source: pi.
 * @example
 * const shown = line.length > GREP_MAX_LINE_LENGTH ? `${line.slice(0, GREP_MAX_LINE_LENGTH)}…` : line;
 */
export const GREP_MAX_LINE_LENGTH = 500;

/** The outcome of a truncation. Byte counts are UTF-8 bytes; line counts are `\n`-separated lines. Field names and meanings are pi's. */
export interface TruncationResult {
  /** The kept text. */
  content: string;
  /** True when anything was dropped. */
  truncated: boolean;
  /** Which limit cut the output, or null when nothing was dropped. */
  truncatedBy: "lines" | "bytes" | null;
  /** Lines in the input. */
  totalLines: number;
  /** UTF-8 bytes in the input. */
  totalBytes: number;
  /** Lines in `content`. */
  outputLines: number;
  /** UTF-8 bytes in `content`. */
  outputBytes: number;
  /** Tail truncation kept only the end of the last line. */
  lastLinePartial: boolean;
  /** Head truncation found a first line larger than the byte limit (content is empty). */
  firstLineExceedsLimit: boolean;
  /** The line limit applied. */
  maxLines: number;
  /** The byte limit applied, in bytes. */
  maxBytes: number;
}

/** Limits of a truncation; both default to pi's values. */
export interface TruncationOptions {
  /** Maximum lines kept (default 2000). */
  maxLines?: number;
  /** Maximum UTF-8 bytes kept (default 51200). */
  maxBytes?: number;
}

const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8");

/** The lines of `text` as editors count them: a trailing `\n` starts no empty line and `""` has none. */
export function editorLines(text: string): string[] {
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

/**
 * Formats a byte count for humans: below 1024 as `"NB"`, below 1 MiB as one-decimal `"KB"`, otherwise one-decimal `"MB"`. Source: pi.
 * @example
 * formatSize(51200); // "50.0KB"
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

function untouched(content: string, lineCount: number, byteCount: number, maxLines: number, maxBytes: number): TruncationResult {
  return {
    content,
    truncated: false,
    truncatedBy: null,
    totalLines: lineCount,
    totalBytes: byteCount,
    outputLines: lineCount,
    outputBytes: byteCount,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** The limits of `options`, the size and lines of `content`, and the result when it fits them (`whole`). */
function measure(content: string, options: TruncationOptions) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = utf8Length(content);
  const lines = editorLines(content);
  const fits = lines.length <= maxLines && totalBytes - (content.endsWith("\n") ? 1 : 0) <= maxBytes;
  return { maxLines, maxBytes, totalBytes, lines, whole: fits ? untouched(content, lines.length, totalBytes, maxLines, maxBytes) : undefined };
}

/**
 * Keeps whole lines from the top within both limits (for file reads). If the first line alone is
 * larger than `maxBytes`, the content is empty and `firstLineExceedsLimit` is true. Source: pi.
 * @example
 * truncateHead("a\nb\nc", { maxLines: 2 }).content; // "a\nb"
 */
export function truncateHead(content: string, options: TruncationOptions = {}): TruncationResult {
  const { maxLines, maxBytes, totalBytes, lines, whole } = measure(content, options);
  if (whole) return whole;
  const base = { truncated: true, totalLines: lines.length, totalBytes, lastLinePartial: false, maxLines, maxBytes };
  if (utf8Length(lines[0]) > maxBytes) {
    return { ...base, content: "", truncatedBy: "bytes", outputLines: 0, outputBytes: 0, firstLineExceedsLimit: true };
  }
  let kept = 0;
  let keptBytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  while (kept < lines.length && kept < maxLines) {
    const cost = utf8Length(lines[kept]) + (kept > 0 ? 1 : 0);
    if (keptBytes + cost > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    keptBytes += cost;
    kept += 1;
  }
  if (kept >= maxLines && keptBytes <= maxBytes) truncatedBy = "lines";
  const output = lines.slice(0, kept).join("\n");
  return { ...base, content: output, truncatedBy, outputLines: kept, outputBytes: utf8Length(output), firstLineExceedsLimit: false };
}

/** The last `maxBytes` bytes of `text`, starting at a UTF-8 character boundary. */
function tailBytes(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= maxBytes) return text;
  let start = buffer.length - maxBytes;
  while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start += 1;
  return buffer.subarray(start).toString("utf8");
}

/**
 * Keeps whole lines from the bottom within both limits (for command output). When the last line
 * alone exceeds `maxBytes`, keeps its trailing bytes and sets `lastLinePartial`. Source: pi.
 * @example
 * truncateTail("a\nb\nc", { maxLines: 2 }).content; // "b\nc"
 */
export function truncateTail(content: string, options: TruncationOptions = {}): TruncationResult {
  const { maxLines, maxBytes, totalBytes, lines, whole } = measure(content, options);
  if (whole) return whole;
  const kept: string[] = [];
  let keptBytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  let lastLinePartial = false;
  for (let index = lines.length - 1; index >= 0 && kept.length < maxLines; index -= 1) {
    const cost = utf8Length(lines[index]) + (kept.length > 0 ? 1 : 0);
    if (keptBytes + cost > maxBytes) {
      truncatedBy = "bytes";
      if (kept.length === 0) {
        const partial = tailBytes(lines[index], maxBytes);
        kept.unshift(partial);
        keptBytes = utf8Length(partial);
        lastLinePartial = true;
      }
      break;
    }
    kept.unshift(lines[index]);
    keptBytes += cost;
  }
  if (kept.length >= maxLines && keptBytes <= maxBytes) truncatedBy = "lines";
  const output = kept.join("\n");
  return {
    content: output,
    truncated: true,
    truncatedBy,
    totalLines: lines.length,
    totalBytes,
    outputLines: kept.length,
    outputBytes: utf8Length(output),
    lastLinePartial,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/**
 * Clips one line to `maxChars` UTF-16 code units, appending `"... [truncated]"` when clipped (grep match lines). Source: pi.
 * @example
 * truncateLine("x".repeat(600)).wasTruncated; // true
 */
export function truncateLine(line: string, maxChars: number = GREP_MAX_LINE_LENGTH): { text: string; wasTruncated: boolean } {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  return { text: `${line.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}
