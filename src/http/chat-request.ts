/**
 * The body of `POST /api/chat` as `DefaultChatTransport` sends it (`ai` 7): `id`, non-empty `messages` whose last is a user message (text and image
 * parts), a `regenerate-message` trigger, or a last assistant message with `approval-responded` parts (decisions by tool call id). Refusals are
 * `400`/`501` naming the field; bodies over `maxBodyBytes` are `413`.
 */
import { z } from "zod";
import type { ImageContent } from "../core/messages.ts";
import { DEFAULT_MAX_BODY_BYTES, readLimitedJson } from "./body-limit.ts";
import { jsonError } from "./responses.ts";

const partSchema = z.looseObject({ type: z.string() });
const bodySchema = z.looseObject({
  id: z.string(),
  messages: z.array(z.looseObject({ id: z.string().optional(), role: z.string(), parts: z.array(partSchema) })).min(1),
  // The two triggers `ai`'s chat transport sends; anything else is refused rather than read as a new prompt.
  trigger: z.enum(["submit-message", "regenerate-message"]).optional(),
  messageId: z.string().optional(),
});

/** A parsed chat request: a new prompt, or decisions on calls waiting for approval. */
export type ChatRequest =
  | { kind: "prompt"; id: string; prompt: { text: string; images: ImageContent[] } }
  | { kind: "approvals"; id: string; decisions: { toolCallId: string; approved: boolean; reason?: string }[] }
  | { kind: "regenerate"; id: string; messageId?: string };

/** Parses and checks the body (see the module contract). */
export async function parseChatRequest(request: Request, maxBodyBytes = DEFAULT_MAX_BODY_BYTES): Promise<ChatRequest | { error: Response }> {
  const body = await readLimitedJson(request, maxBodyBytes, { expected: "{ id, messages, trigger, messageId }" });
  if ("error" in body) return body;
  const json = body.value;
  const parsed = bodySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { error: jsonError(400, "INVALID_ARGUMENT", `Invalid body field "${issue.path.join(".") || "(root)"}": ${issue.message}.`) };
  }
  const { id, messages, trigger, messageId } = parsed.data;
  if (trigger === "regenerate-message") return { kind: "regenerate", id, ...(messageId !== undefined ? { messageId } : {}) };
  const last = messages[messages.length - 1];
  if (last.role === "assistant" && last.parts.some((part) => part.state === "approval-responded")) {
    const decisions: { toolCallId: string; approved: boolean; reason?: string }[] = [];
    for (const part of last.parts) {
      if (part.state !== "approval-responded") continue;
      const approval = part.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
      if (typeof approval?.id !== "string" || typeof approval.approved !== "boolean") {
        return { error: jsonError(400, "INVALID_ARGUMENT", `An approval-responded part needs approval: { id, approved } (field "messages.${messages.length - 1}.parts").`) };
      }
      decisions.push({ toolCallId: approval.id, approved: approval.approved, ...(typeof approval.reason === "string" ? { reason: approval.reason } : {}) });
    }
    return { kind: "approvals", id, decisions };
  }
  if (last.role !== "user") return { error: jsonError(400, "INVALID_ARGUMENT", `The last message must be the user's new message; got role "${last.role}" (field "messages.${messages.length - 1}.role").`) };
  const texts: string[] = [];
  const images: ImageContent[] = [];
  for (const part of last.parts) {
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "file" && typeof part.url === "string" && typeof part.mediaType === "string" && part.mediaType.startsWith("image/")) {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
      if (!match) return { error: jsonError(400, "INVALID_ARGUMENT", `Image parts must be base64 data: URLs (field "messages.${messages.length - 1}.parts").`) };
      images.push({ type: "image", mimeType: match[1], data: match[2] });
    }
  }
  const text = texts.join("\n\n");
  if (text.trim() === "" && images.length === 0) return { error: jsonError(400, "INVALID_ARGUMENT", `The last user message has no text or image part (field "messages.${messages.length - 1}.parts").`) };
  return { kind: "prompt", id, prompt: { text, images } };
}
