/**
 * Bounded accounting of a command's streamed output for the bash tool: UTF-8 decoded across chunks, memory bounded to what can still be shown,
 * over-long lines clipped, the visible text the tail within `maxLines`/`maxBytes`. On ANY truncation the full output is spilled to a 0600 file
 * (redacted by the env's secrets, cut at `maxSpillBytes`). Lines are counted as editors count them.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import { createStreamRedactor, type SecretRedactor, type StreamRedactor } from "../../core/secrets.ts";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateTail, type TruncationResult } from "./truncate.ts";

/**
 * Longest line shown by bash, in UTF-16 code units, before it is clipped (ours).
 * @example
 * const clipped = line.length > BASH_MAX_LINE_CHARS; // 2000
 */
export const BASH_MAX_LINE_CHARS = 2000;

/** Options of {@link BashOutput}. */
export interface BashOutputOptions {
  maxLines?: number;
  maxBytes?: number;
  maxLineChars?: number;
  /** Returns (creating it if needed) the directory for spilled output. */
  spillDir: () => string;
  /** Secrets redacted from the spill file (it then holds the decoded text, redacted, instead of the raw bytes). */
  redactor?: SecretRedactor;
  /** The spill file is cut after this many bytes, with a notice. Default: no cap. */
  maxSpillBytes?: number;
}

/** A view of the output so far. */
export interface BashOutputSnapshot {
  /** The visible text (tail, clipped lines), without notices. */
  content: string;
  /** pi's truncation record with whole-output totals; `truncated` is true for line/byte truncation. */
  truncation: TruncationResult;
  /** How many lines were clipped. */
  clippedLines: number;
  /** Length of the last line in bytes. */
  lastLineBytes: number;
  /** The spill file, when anything was truncated or clipped. */
  fullOutputPath?: string;
}

interface Line {
  head: string;
  bytes: number;
  clipped: boolean;
}

const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8");

/** Streaming output accumulator. See the module contract. */
export class BashOutput {
  private readonly maxLines: number;
  private readonly maxBytes: number;
  private readonly maxLineChars: number;
  private readonly spillDir: () => string;
  private readonly decoder = new TextDecoder("utf-8");
  private lines: Line[] = [];
  private linesRenderedBytes = 0;
  private current: Line = { head: "", bytes: 0, clipped: false };
  /** `\n` characters seen so far. */
  private newlines = 0;
  private totalBytes = 0;
  private clippedLines = 0;
  private pending: (Buffer | string)[] = [];
  private readonly spillRedactor: StreamRedactor | undefined;
  private readonly maxSpillBytes: number;
  private spilledBytes = 0;
  private spillCut = false;
  private spillPath: string | undefined;
  private spillStream: WriteStream | undefined;
  private spillError: Error | undefined;

  constructor(options: BashOutputOptions) {
    this.maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxLineChars = options.maxLineChars ?? BASH_MAX_LINE_CHARS;
    this.spillDir = options.spillDir;
    this.spillRedactor = options.redactor && options.redactor.size > 0 ? createStreamRedactor(options.redactor) : undefined;
    this.maxSpillBytes = options.maxSpillBytes ?? Number.POSITIVE_INFINITY;
  }

  /** Adds a raw chunk. */
  append(chunk: Buffer): void {
    const text = this.decoder.decode(chunk, { stream: true });
    this.addText(text);
    this.toSpill(this.spillRedactor ? text : chunk);
  }

  /** Flushes the decoder and the spill file; returns the final snapshot. */
  async finish(): Promise<BashOutputSnapshot> {
    const text = this.decoder.decode();
    this.addText(text);
    if (this.spillRedactor) this.toSpill(text);
    if (this.needsSpill()) this.startSpill();
    const stream = this.spillStream;
    if (stream) {
      if (this.spillRedactor) this.writeSpill(this.spillRedactor.end(), false);
      await new Promise<void>((resolve) => {
        stream.end(() => resolve());
      });
    }
    return this.snapshot();
  }

  /** The current view; spills first when truncation has happened. */
  snapshot(): BashOutputSnapshot {
    if (this.needsSpill()) this.startSpill();
    const visible = [...this.lines, this.current].map((line) => this.render(line)).join("\n");
    const tail = truncateTail(visible, { maxLines: this.maxLines, maxBytes: this.maxBytes });
    // Truncated = whole lines were dropped (in memory or by the tail cut); clipping alone is not.
    const truncated = tail.truncated || tail.outputLines < this.lineCount();
    const truncation: TruncationResult = {
      ...tail,
      truncated,
      truncatedBy: truncated ? (tail.truncatedBy ?? "lines") : null,
      totalLines: this.lineCount(),
      totalBytes: this.totalBytes,
      maxLines: this.maxLines,
      maxBytes: this.maxBytes,
    };
    return {
      content: tail.content,
      truncation,
      clippedLines: this.clippedLines,
      lastLineBytes: this.current.bytes > 0 || this.lines.length === 0 ? this.current.bytes : this.lines[this.lines.length - 1].bytes,
      ...(this.spillPath && !this.spillError ? { fullOutputPath: this.spillPath } : {}),
    };
  }

  /** Lines so far, as editors count them: a last line without its newline counts, an empty one does not. */
  private lineCount(): number {
    return this.newlines + (this.current.bytes > 0 ? 1 : 0);
  }

  private render(line: Line): string {
    return line.clipped ? `${line.head}... [truncated, line is ${formatSize(line.bytes)}]` : line.head;
  }

  private needsSpill(): boolean {
    return this.spillPath === undefined && (this.lineCount() > this.maxLines || this.totalBytes > this.maxBytes || this.clippedLines > 0);
  }

  private startSpill(): void {
    if (this.spillPath !== undefined) return;
    this.spillPath = join(this.spillDir(), `arbor-bash-${randomBytes(8).toString("hex")}.log`);
    this.spillStream = createWriteStream(this.spillPath, { mode: 0o600, flags: "wx" });
    this.spillStream.on("error", (error) => {
      this.spillError = error;
    });
    const pending = this.pending;
    this.pending = [];
    for (const chunk of pending) this.writeSpill(chunk);
  }

  /** Output on its way to the spill file: held until a spill starts, then written. */
  private toSpill(data: Buffer | string): void {
    if (data.length === 0) return;
    if (this.spillStream) this.writeSpill(data);
    else {
      this.pending.push(data);
      if (this.needsSpill()) this.startSpill();
    }
  }

  /** Writes to the open spill file: redacted text when there are secrets; cut at `maxSpillBytes`. */
  private writeSpill(data: Buffer | string, redact = true): void {
    const stream = this.spillStream;
    if (!stream || this.spillCut) return;
    let bytes = typeof data === "string" ? Buffer.from(this.spillRedactor && redact ? this.spillRedactor.push(data) : data, "utf8") : data;
    const notice = `\n[arbor: spill file cut at ${formatSize(this.maxSpillBytes)}]\n`;
    // The notice fits inside the cap, so the file never exceeds it.
    const room = this.maxSpillBytes - Buffer.byteLength(notice) - this.spilledBytes;
    if (bytes.length > room) {
      bytes = bytes.subarray(0, Math.max(0, room));
      this.spillCut = true;
    }
    this.spilledBytes += bytes.length;
    if (bytes.length > 0) stream.write(bytes);
    if (this.spillCut) stream.write(notice);
  }

  private addText(text: string): void {
    if (text.length === 0) return;
    this.totalBytes += utf8Length(text);
    const parts = text.split("\n");
    parts.forEach((part, index) => {
      if (index > 0) this.endLine();
      this.extendLine(part);
    });
  }

  private extendLine(part: string): void {
    if (part.length === 0) return;
    const line = this.current;
    line.bytes += utf8Length(part);
    if (line.clipped) return;
    line.head += part;
    if (line.head.length > this.maxLineChars) {
      let cut = this.maxLineChars;
      const code = line.head.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // do not split a surrogate pair
      line.head = line.head.slice(0, cut);
      line.clipped = true;
      this.clippedLines += 1;
    }
  }

  private endLine(): void {
    const line = this.current;
    this.lines.push(line);
    this.linesRenderedBytes += utf8Length(this.render(line)) + 1;
    this.current = { head: "", bytes: 0, clipped: false };
    this.newlines += 1;
    // Drop lines that can no longer be shown: beyond the line limit, or before a suffix that already exceeds the byte limit.
    while (
      this.lines.length > this.maxLines ||
      (this.lines.length > 0 && this.linesRenderedBytes - (utf8Length(this.render(this.lines[0])) + 1) > this.maxBytes)
    ) {
      const dropped = this.lines.shift();
      if (!dropped) break;
      this.linesRenderedBytes -= utf8Length(this.render(dropped)) + 1;
    }
  }
}
