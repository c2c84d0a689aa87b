/**
 * A model decorator that keeps registered secrets out of requests (system prompt, messages, tool descriptions; not headers or provider options)
 * and out of streamed replies before a single delta is recorded: each block is redacted over its assembled text, holding back a tail that could
 * start a secret. Without secrets at creation the inner client is returned unchanged.
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
 * Wraps `client` so that the secrets of `redactor` are redacted from its requests and its streams (see the module contract).
 * @example
 * const safe = createRedactingModel(model, createSecretRedactor([process.env.OPENAI_API_KEY ?? ""]));
 */
export function createRedactingModel(client: ModelClient, redactor: SecretRedactor): ModelClient {
  if (redactor.size === 0) return client;
  return withModelStream(client, (request, options) => redactStream(client.stream(redactRequest(request, redactor), options), redactor));
}
