/**
 * MCP tool-result content mapped to Arbor content blocks: text and images as such, embedded resources as text or image, binary blobs and audio as
 * one-line notes, unknown kinds as JSON text; `structuredContent` or `(no content)` when empty, so the model always sees something. Pure.
 */
import type { ImageContent, TextContent } from "../../core/messages.ts";

type Block = Record<string, unknown> & { type?: unknown };

function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function text(value: string): TextContent {
  return { type: "text", text: value };
}

function mapBlock(block: Block): TextContent | ImageContent {
  switch (block.type) {
    case "text":
      return text(typeof block.text === "string" ? block.text : "");
    case "image":
      if (typeof block.data === "string" && typeof block.mimeType === "string") return { type: "image", data: block.data, mimeType: block.mimeType };
      break;
    case "audio":
      return text(`[audio ${String(block.mimeType)}, ${typeof block.data === "string" ? base64Bytes(block.data) : 0} bytes, not shown]`);
    case "resource": {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      const uri = String(resource.uri ?? "");
      const mimeType = typeof resource.mimeType === "string" ? resource.mimeType : undefined;
      if (typeof resource.text === "string") return text(`[resource ${uri}${mimeType ? ` (${mimeType})` : ""}]\n${resource.text}`);
      if (typeof resource.blob === "string") {
        if (mimeType?.startsWith("image/")) return { type: "image", data: resource.blob, mimeType };
        return text(`[resource ${uri}${mimeType ? ` (${mimeType})` : ""}, ${base64Bytes(resource.blob)} bytes of binary data, not shown]`);
      }
      break;
    }
    case "resource_link": {
      const description = typeof block.description === "string" ? `: ${block.description}` : "";
      return text(`[resource link ${String(block.name ?? "")} ${String(block.uri ?? "")}${description}]`);
    }
  }
  return text(`[${String(block.type)} content] ${JSON.stringify(block)}`);
}

/**
 * Maps a `tools/call` result's content to Arbor content blocks (see the module contract).
 * @param result the MCP result (`content`, optional `structuredContent`)
 * @example
 * mapMcpContent({ content: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] });
 * // [{ type: "text", text: "[audio audio/wav, 3 bytes, not shown]" }]
 */
export function mapMcpContent(result: { content?: unknown; structuredContent?: unknown }): (TextContent | ImageContent)[] {
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  const mapped = blocks.filter((block) => typeof block === "object" && block !== null).map(mapBlock);
  if (mapped.length > 0) return mapped;
  if (result.structuredContent !== undefined) return [text(JSON.stringify(result.structuredContent))];
  return [text("(no content)")];
}

/** The text of an error result: its text blocks joined by newlines, or a fixed note. */
export function errorText(content: readonly (TextContent | ImageContent)[]): string {
  const joined = content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n").trim();
  return joined || "the tool reported an error without any text";
}
