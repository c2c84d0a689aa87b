/**
 * zod schemas for the message model and session entries (see `src/core/messages.ts`, `src/core/entries.ts`). Objects are loose: fields Arbor does not
 * know (pi's `diagnostics`, `responseModel`, …) are kept, so imports round-trip.
 */
import { z } from "zod";

const text = z.looseObject({ type: z.literal("text"), text: z.string() });
const image = z.looseObject({ type: z.literal("image"), data: z.string(), mimeType: z.string() });
const thinking = z.looseObject({ type: z.literal("thinking"), thinking: z.string() });
const toolCall = z.looseObject({
  type: z.literal("toolCall"),
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
/** A token count: null = the provider did not report it; absent = an older pi file did not record it (pi v1 has no totalTokens). */
const count = z.number().finite().nullable().optional();

/** Usage; counts may be null (unknown) or absent (old pi files). */
export const usageSchema = z.looseObject({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  totalTokens: count,
  cost: z.looseObject({}).optional(),
});

const userContent = z.union([z.string(), z.array(z.union([text, image]))]);

/** Any stored message. */
export const agentMessageSchema = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("user"), content: userContent, timestamp: z.number() }),
  z.looseObject({
    role: z.literal("assistant"),
    content: z.array(z.union([text, thinking, toolCall])),
    api: z.string().optional(),
    provider: z.string().optional(),
    model: z.string().optional(),
    usage: usageSchema.optional(),
    stopReason: z.enum(["stop", "length", "toolUse", "error", "aborted", "deferred"]),
    errorMessage: z.string().optional(),
    timestamp: z.number(),
  }),
  z.looseObject({
    role: z.literal("toolResult"),
    toolCallId: z.string(),
    toolName: z.string(),
    content: z.array(z.union([text, image])),
    isError: z.boolean(),
    timestamp: z.number(),
  }),
  z.looseObject({ role: z.literal("custom"), customType: z.string(), content: userContent, timestamp: z.number() }),
  z.looseObject({ role: z.literal("bashExecution"), command: z.string(), output: z.string(), timestamp: z.number() }),
  z.looseObject({ role: z.literal("compactionSummary"), summary: z.string(), tokensBefore: z.number() }),
  z.looseObject({ role: z.literal("branchSummary"), summary: z.string(), fromId: z.string() }),
  // pi 1.x: a system-prompt patch (kept, not applied).
  z.looseObject({ role: z.literal("system") }),
]);

const base = { id: z.string().min(1), parentId: z.string().nullable(), timestamp: z.string() };

/** Known entry kinds. */
export const knownEntrySchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message"), ...base, message: agentMessageSchema }),
  z.looseObject({ type: z.literal("thinking_level_change"), ...base, thinkingLevel: z.string() }),
  z.looseObject({ type: z.literal("model_change"), ...base, provider: z.string(), modelId: z.string() }),
  z.looseObject({ type: z.literal("active_tools_change"), ...base, toolNames: z.array(z.string()) }),
  z.looseObject({
    type: z.literal("compaction"),
    ...base,
    summary: z.string(),
    firstKeptEntryId: z.string(),
    tokensBefore: z.number(),
    retainedTail: z.array(z.string()).optional(),
    usage: usageSchema.optional(),
    fromHook: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal("branch_summary"),
    ...base,
    fromId: z.string(),
    summary: z.string(),
    usage: usageSchema.optional(),
    fromHook: z.boolean().optional(),
  }),
  z.looseObject({ type: z.literal("custom"), ...base, customType: z.string() }),
  z.looseObject({
    type: z.literal("custom_message"),
    ...base,
    customType: z.string(),
    content: userContent,
    display: z.boolean(),
  }),
  z.looseObject({ type: z.literal("label"), ...base, targetId: z.string(), label: z.string().optional() }),
  z.looseObject({ type: z.literal("session_info"), ...base, name: z.string().optional() }),
  // pi 1.x; unknown kinds are accepted.
  z.looseObject({ type: z.literal("usage"), ...base, kind: z.string(), provider: z.string().optional(), model: z.string().optional(), usage: usageSchema.optional() }),
  z.looseObject({ type: z.literal("context_edit"), ...base, targetId: z.string(), replacement: z.unknown() }),
]);

const KNOWN = new Set(knownEntrySchema.options.map((option) => option.shape.type.value as string));

/** Any entry: a known kind validated strictly, or an unknown kind kept verbatim. */
export const sessionEntrySchema = z.looseObject({ type: z.string().min(1), ...base }).check((context) => {
  if (!KNOWN.has(context.value.type)) return;
  const result = knownEntrySchema.safeParse(context.value);
  if (!result.success) {
    for (const issue of result.error.issues) {
      context.issues.push({ ...issue, input: context.value } as never);
    }
  }
});
