/**
 * The `read` tool: a window of lines of a text file, or an image (pi's parameters and texts). Images are detected by magic bytes (over 4.5 MiB of
 * base64 omitted, no resizing); other binaries get a note; text is cut to 2000 lines / 50 KiB with pi's notices. The file is opened once through a
 * symlink-refusing walk; extra hard links are refused unless allowed.
 */
import { constants, type Stats } from "node:fs";
import { access, type FileHandle } from "node:fs/promises";
import { z } from "zod";
import type { ImageContent, TextContent } from "../../core/messages.ts";
import { defineTool, type AgentTool, type ToolResult } from "../../core/tools.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, editorLines, formatSize, truncateHead, type TruncationResult } from "./truncate.ts";
import { abortable, throwIfAborted } from "./tool-support.ts";
import { ignoreError } from "../../core/ignored.ts";

/**
 * Parameters of the read tool (pi's).
 * @example
 * readParameters.parse({ path: "README.md", offset: 1, limit: 50 });
 */
export const readParameters = z.object({
  path: z.string().describe("Path to the file to read (relative or absolute)"),
  offset: z.number().optional().describe("Line number to start reading from (1-indexed)"),
  limit: z.number().optional().describe("Maximum number of lines to read"),
});

/** Arguments of the read tool. */
export type ReadToolInput = z.infer<typeof readParameters>;

/** Details of a read (pi's `truncation`, plus `binary` for non-text files, ours). */
export interface ReadToolDetails {
  truncation?: TruncationResult;
  binary?: { mimeType?: string; bytes: number };
}

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
/** Base64 payload limit for inline images, in bytes (pi's: 4.5 MiB). */
const MAX_IMAGE_BASE64_BYTES = 4.5 * 1024 * 1024;
const SNIFF_BYTES = 8192;
const TEXT_LIKE = /^(text\/|application\/(xml|json|javascript|x-sh|rtf))|\+xml$/;

async function exists(path: string): Promise<boolean> {
  return access(path, constants.F_OK).then(() => true, ignoreError("a read-path fallback that cannot be accessed is not there", false));
}

/** pi's read-path fallbacks for macOS screenshot names, each still checked by the env. */
async function resolveReadPath(env: ExecutionEnv, path: string): Promise<string> {
  const resolved = await env.resolvePath(path, "read");
  if (await exists(resolved)) return resolved;
  const expanded = env.expandPath(path);
  const amPm = expanded.replace(/ (AM|PM)\./gi, "\u202F$1.");
  const nfd = expanded.normalize("NFD");
  for (const variant of [amPm, nfd, expanded.replace(/'/g, "\u2019"), nfd.replace(/'/g, "\u2019")]) {
    if (variant === expanded) continue;
    const candidate = await env.checkPath(variant, "read", path);
    if (await exists(candidate)) return candidate;
  }
  return resolved;
}

async function sniff(handle: FileHandle): Promise<Buffer> {
  const buffer = Buffer.alloc(SNIFF_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
  return buffer.subarray(0, bytesRead);
}

function readText(text: string, path: string, offset: number | undefined, limit: number | undefined) {
  const allLines = editorLines(text);
  const trailing = text.endsWith("\n") ? "\n" : "";
  const startLine = offset ? Math.max(0, offset - 1) : 0;
  const startDisplay = startLine + 1;
  if (startLine > 0 && startLine >= allLines.length) throw new Error(`Offset ${offset} is beyond end of file (${allLines.length} lines total)`);
  let selected: string;
  let userLimited: number | undefined;
  if (limit !== undefined) {
    const endLine = Math.min(startLine + limit, allLines.length);
    selected = allLines.slice(startLine, endLine).join("\n") + (endLine === allLines.length ? trailing : "");
    userLimited = endLine - startLine;
  } else {
    selected = allLines.slice(startLine).join("\n") + trailing;
  }
  const truncation = truncateHead(selected);
  if (truncation.firstLineExceedsLimit) {
    const size = formatSize(Buffer.byteLength(allLines[startLine], "utf8"));
    const limitText = formatSize(DEFAULT_MAX_BYTES);
    return {
      text: `[Line ${startDisplay} is ${size}, exceeds ${limitText} limit. Use bash: sed -n '${startDisplay}p' ${path} | head -c ${DEFAULT_MAX_BYTES}]`,
      details: { truncation },
    };
  }
  if (truncation.truncated) {
    const endDisplay = startDisplay + truncation.outputLines - 1;
    const limitNote = truncation.truncatedBy === "lines" ? "" : ` (${formatSize(DEFAULT_MAX_BYTES)} limit)`;
    return {
      text: `${truncation.content}\n\n[Showing lines ${startDisplay}-${endDisplay} of ${allLines.length}${limitNote}. Use offset=${endDisplay + 1} to continue.]`,
      details: { truncation },
    };
  }
  if (userLimited !== undefined && startLine + userLimited < allLines.length) {
    const remaining = allLines.length - (startLine + userLimited);
    return { text: `${truncation.content}\n\n[${remaining} more lines in file. Use offset=${startLine + userLimited + 1} to continue.]`, details: undefined };
  }
  return { text: truncation.content, details: undefined };
}

/**
 * Creates the `read` tool bound to an execution env. See the module contract.
 * @example
 * const tool = createReadTool(env);
 */
export function createReadTool(env: ExecutionEnv): AgentTool<ReadToolInput, ReadToolDetails | undefined> {
  return defineTool({
    name: "read",
    replay: "safe",
    label: "read",
    description: `Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.`,
    parameters: readParameters,
    async execute({ path, offset, limit }, { signal }): Promise<ToolResult<ReadToolDetails | undefined>> {
      throwIfAborted(signal);
      return abortable(signal, async () => {
        const absolutePath = await resolveReadPath(env, path);
        await access(absolutePath, constants.R_OK);
        // Everything below reads the handle that was opened by a symlink-refusing walk, never the path again (swapped symlinks, hard links).
        const { handle, stats } = await env.openFile(absolutePath, { access: "read", path });
        try {
          return await readOpened(handle, stats, path, offset, limit, signal);
        } finally {
          await handle.close();
        }
      });
    },
  });
}

async function readOpened(
  handle: FileHandle,
  stats: Stats,
  path: string,
  offset: number | undefined,
  limit: number | undefined,
  signal: AbortSignal | undefined,
): Promise<ToolResult<ReadToolDetails | undefined>> {
  if (stats.isDirectory()) throw new Error(`Cannot read ${path}: it is a directory. Use ls to list it.`);
  // A FIFO, socket or device would block or never end: only regular files are read.
  if (!stats.isFile()) throw new Error(`Cannot read ${path}: it is not a regular file (a pipe, socket or device).`);
  const head = await sniff(handle);
  throwIfAborted(signal);
  // file-type is imported on the first read, not when the tools are created.
  const detected = head.length > 0 ? await (await import("file-type")).fileTypeFromBuffer(head) : undefined;
  if (detected && IMAGE_TYPES.has(detected.mime)) {
    const data = (await handle.readFile()).toString("base64");
    if (data.length >= MAX_IMAGE_BASE64_BYTES) {
      return {
        content: [
          {
            type: "text" as const,
            text: `Read image file [${detected.mime}]\n[Image omitted: ${formatSize(stats.size)} is above the inline image size limit (${formatSize(MAX_IMAGE_BASE64_BYTES)} as base64) and Arbor does not resize images.]`,
          },
        ],
        details: undefined,
      };
    }
    const content: (TextContent | ImageContent)[] = [
      { type: "text", text: `Read image file [${detected.mime}]` },
      { type: "image", data, mimeType: detected.mime },
    ];
    return { content, details: undefined };
  }
  const binaryType = detected && !TEXT_LIKE.test(detected.mime) ? detected.mime : undefined;
  if (binaryType || head.includes(0)) {
    const kind = binaryType ? `${binaryType}, ` : "";
    return {
      content: [
        {
          type: "text" as const,
          text: `[${path} is a binary file (${kind}${formatSize(stats.size)}); its content is not shown as text. Use bash tools such as file, xxd or unzip -l to inspect it.]`,
        },
      ],
      details: { binary: { ...(binaryType ? { mimeType: binaryType } : {}), bytes: stats.size } },
    };
  }
  const text = (await handle.readFile()).toString("utf8");
  throwIfAborted(signal);
  const { text: output, details } = readText(text, path, offset, limit);
  return { content: [{ type: "text" as const, text: output }], details };
}
