/**
 * A model decorator that keeps registered secrets out of what is sent to the model and out of what
 * the model streams back, before the agent records a single delta.
 *
 * Contract (ours):
 * - **requests**: the system prompt, every message (text, tool-call arguments, tool results,
 *   object keys included) and the tool descriptions are redacted ({@link SecretRedactor}) before
 *   the inner model sees them; headers and provider options are passed unchanged (they carry the
 *   credentials on purpose);
 * - **streams**: each text, thinking and tool-call block is redacted over its assembled text by a
 *   {@link createStreamRedactor} per block: a delta is held back while its tail could still be the
 *   start of a secret (at most the longest secret form), so a key streamed 4 characters per chunk
 *   never appears in any delta, partial, final message or the `message.delta` events recorded
 *   from them; the rest of a block is released as one more delta just before its `*-end` event;
 *   deltas that release nothing are not forwarded;
 * - `partial` messages carry the redacted text released so far for open blocks, redacted text for
 *   closed ones, and redacted tool-call arguments; `done` and `error` messages (and
 *   `toolcall-end`'s tool call) are redacted whole;
 * - with no secret registered when it is created, the inner client is returned unchanged;
 *   secrets added to the redactor later apply to later calls.
 *
 * @example
 * ```ts
 * const model = createRedactingModel(createOpenAIModel({ modelId: "gpt-4o-mini" }), createSecretRedactor([apiKey]));
 * ```
 */
import type { AssistantMessage } from "../core/messages.ts";
import { withModelStream, type ModelClient, type ModelRequest, type ModelStreamEvent } from "../core/model-stream.ts";
import { createStreamRedactor, type SecretRedactor, type StreamRedactor } from "../core/secrets.ts";

/** `request` with the secrets redacted from everything but headers and provider options. */
function redactRequest(request: ModelRequest, redactor: SecretRedactor): ModelRequest {
  return {
    ...request,
    ...(request.systemPrompt !== undefined ? { systemPrompt: redactor.redact(request.systemPrompt) } : {}),
    messages: redactor.redactValue(request.messages),
    tools: redactor.redactValue(request.tools),
  };
}

/** The per-stream state: one stream redactor per open block, the redacted text of closed ones. */
class StreamState {
  private readonly open = new Map<number, StreamRedactor>();
  private readonly closed = new Map<number, string>();

  constructor(private readonly redactor: SecretRedactor) {}

  push(index: number, delta: string): string {
    let stream = this.open.get(index);
    if (!stream) this.open.set(index, (stream = createStreamRedactor(this.redactor)));
    return stream.push(delta);
  }

  /** Ends block `index`; returns its held-back rest (possibly ""). */
  end(index: number): string {
    const stream = this.open.get(index);
    if (!stream) return "";
    const rest = stream.end();
    this.open.delete(index);
    this.closed.set(index, stream.emitted);
    return rest;
  }

  partial(partial: AssistantMessage): AssistantMessage {
    const content = partial.content.map((block, index) => {
      if (block.type === "toolCall") return { ...block, arguments: this.redactor.redactValue(block.arguments) };
      const text = this.open.get(index)?.emitted ?? this.closed.get(index) ?? this.redactor.redact(block.type === "text" ? block.text : block.thinking);
      return block.type === "text" ? { ...block, text } : { ...block, thinking: text };
    });
    return { ...partial, content, ...(partial.errorMessage !== undefined ? { errorMessage: this.redactor.redact(partial.errorMessage) } : {}) };
  }
}

async function* redactStream(events: AsyncIterable<ModelStreamEvent>, redactor: SecretRedactor): AsyncGenerator<ModelStreamEvent> {
  const state = new StreamState(redactor);
  for await (const event of events) {
    switch (event.type) {
      case "text-delta":
      case "thinking-delta":
      case "toolcall-delta": {
        const delta = state.push(event.contentIndex, event.delta);
        if (delta) yield { ...event, delta, partial: state.partial(event.partial) };
        break;
      }
      case "text-end":
      case "thinking-end":
      case "toolcall-end": {
        const rest = state.end(event.contentIndex);
        const partial = state.partial(event.partial);
        if (rest) {
          if (event.type === "toolcall-end") yield { type: "toolcall-delta", contentIndex: event.contentIndex, id: event.toolCall.id, delta: rest, partial };
          else yield { type: event.type === "text-end" ? "text-delta" : "thinking-delta", contentIndex: event.contentIndex, delta: rest, partial };
        }
        if (event.type === "toolcall-end") yield { ...event, toolCall: redactor.redactValue(event.toolCall), partial };
        else yield { ...event, partial };
        break;
      }
      case "done":
      case "error":
        yield { ...event, message: redactor.redactValue(event.message) };
        break;
      default:
        yield { ...event, partial: state.partial(event.partial) };
    }
  }
}

/**
 * Wraps `client` so that the secrets of `redactor` are redacted from its requests and its streams
 * (see the module contract).
 *
 * @example
 * ```ts
 * const safe = createRedactingModel(model, createSecretRedactor([process.env.OPENAI_API_KEY ?? ""]));
 * ```
 */
export function createRedactingModel(client: ModelClient, redactor: SecretRedactor): ModelClient {
  if (redactor.size === 0) return client;
  return withModelStream(client, (request, options) => redactStream(client.stream(redactRequest(request, redactor), options), redactor));
}
