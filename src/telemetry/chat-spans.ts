/**
 * The `chat` span of each model call and the GenAI client metrics (`gen_ai.client.operation.duration`, `gen_ai.client.token.usage`, created when
 * the session's telemetry is): every `stream()` of an instrumented client is one span under the session's current parent, ended at the stream's
 * `done` or `error` event, or `abandoned` when the stream stops before either; its usage is added to the open run's. Exporter errors are
 * swallowed (`safely`): telemetry never changes a model call.
 */
import type { Attributes, Context, Histogram, Meter, Span } from "@opentelemetry/api";
import type { AssistantMessage } from "../core/messages.ts";
import type { ModelClient, ModelErrorInfo, ModelRequest, ModelStreamEvent } from "../core/model-stream.ts";
import { finishReasonOf, outputMessageOf, toGenAiMessages } from "./content.ts";
import type { ResolvedTelemetry } from "./options.ts";
import { safely } from "./otel-api.ts";
import { genAiProviderName, type RecordUsage, type SpanRecord } from "./span-record.ts";

/** What the chat spans need of the session's telemetry (`session-telemetry.ts`). */
export interface ChatSpanHost {
  settings: ResolvedTelemetry;
  sessionId: string;
  meter: Meter;
  /** Starts a span of `record` under `parent`. */
  start(record: SpanRecord, parent: Context): Span;
  /** Sets ERROR status: `safe`, or the redacted `text` when content is captured. */
  fail(span: Span, safe: string, text?: string): void;
  attributes(record: SpanRecord): Attributes;
  /** The parent of a model call made now. */
  parentNow(): Context;
  /** The open run, whose id the span carries and whose usage it adds to. */
  run(): { record: SpanRecord; usage: Required<RecordUsage> } | undefined;
  /** The retry attempt this call is, taken once (undefined inside an operation or for a first attempt). */
  takeAttempt(): number | undefined;
}

function errorTypeOf(message: AssistantMessage, error: ModelErrorInfo | undefined): string {
  if (message.stopReason === "aborted") return "aborted";
  if (error?.contextOverflow) return "context_overflow";
  if (error?.status !== undefined) return String(error.status);
  return /time(d)? ?out/i.test(message.errorMessage ?? "") ? "timeout" : "model_error";
}

function usageOf(message: AssistantMessage): RecordUsage {
  const usage: RecordUsage = {};
  const { input, output, cacheRead, cacheWrite } = message.usage ?? {};
  // Arbor's (pi's) `input` excludes cached tokens; GenAI's and OpenInference's prompt counts include them.
  if (typeof input === "number") usage.input = input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  if (typeof output === "number") usage.output = output;
  if (typeof cacheRead === "number") usage.cacheRead = cacheRead;
  if (typeof cacheWrite === "number") usage.cacheWrite = cacheWrite;
  return usage;
}

/** Bucket advice of the GenAI metrics (semantic conventions). */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/** Creates the histograms and returns `instrument`: a client whose every `stream()` call is a `chat` span (the same wrapper for the same client). */
export function createChatSpans(host: ChatSpanHost): (client: ModelClient) => ModelClient {
  const { settings, sessionId, meter, start, fail, attributes, parentNow } = host;
  const duration: Histogram = meter.createHistogram("gen_ai.client.operation.duration", {
    description: "GenAI operation duration",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const tokens: Histogram = meter.createHistogram("gen_ai.client.token.usage", {
    description: "Measures number of input and output tokens used",
    unit: "{token}",
    advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
  });
  const wrapped = new WeakMap<ModelClient, ModelClient>();

  const chatRecord = (client: ModelClient, request: ModelRequest): SpanRecord => {
    const runId = host.run()?.record.runId;
    const record: SpanRecord = {
      operation: "chat",
      sessionId,
      provider: client.provider,
      requestModel: client.modelId,
      ...(runId ? { runId } : {}),
      ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    };
    const attempt = host.takeAttempt();
    if (attempt !== undefined) record.attempt = attempt;
    if (settings.captureContent) {
      record.content = { inputMessages: toGenAiMessages(request.messages), ...(request.systemPrompt ? { systemInstructions: request.systemPrompt } : {}) };
    }
    return record;
  };

  const finishChat = (span: Span, record: SpanRecord, startedAt: number, message: AssistantMessage | undefined, error: ModelErrorInfo | undefined, abandoned = false) => {
    const done: SpanRecord = { ...record };
    if (message) {
      if (message.responseId) done.responseId = message.responseId;
      done.responseModel = message.responseModel ?? message.model ?? record.requestModel;
      done.finishReasons = [finishReasonOf(message.stopReason)];
      done.usage = usageOf(message);
      if (settings.captureContent && message.stopReason !== "error") done.content = { ...record.content, outputMessages: [outputMessageOf(message)] };
      if (message.stopReason === "error" || message.stopReason === "aborted") done.errorType = errorTypeOf(message, error);
    } else if (abandoned) {
      done.errorType = "abandoned";
    }
    span.setAttributes(attributes(done));
    if (done.errorType) fail(span, done.errorType, message?.errorMessage);
    span.end();
    const run = host.run();
    if (run && done.usage && record.runId === run.record.runId) {
      run.usage.input += done.usage.input ?? 0;
      run.usage.output += done.usage.output ?? 0;
      run.usage.cacheRead += done.usage.cacheRead ?? 0;
      run.usage.cacheWrite += done.usage.cacheWrite ?? 0;
    }
    const metricAttributes = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": genAiProviderName(record.provider ?? "unknown"),
      "gen_ai.request.model": record.requestModel ?? "unknown",
      ...(done.responseModel ? { "gen_ai.response.model": done.responseModel } : {}),
      ...(done.errorType ? { "error.type": done.errorType } : {}),
    };
    duration.record((performance.now() - startedAt) / 1000, metricAttributes);
    if (done.usage?.input !== undefined) tokens.record(done.usage.input, { ...metricAttributes, "gen_ai.token.type": "input" });
    if (done.usage?.output !== undefined) tokens.record(done.usage.output, { ...metricAttributes, "gen_ai.token.type": "output" });
  };

  const instrument = (client: ModelClient): ModelClient => {
    const known = wrapped.get(client);
    if (known) return known;
    async function* stream(request: ModelRequest, options: { signal?: AbortSignal }): AsyncGenerator<ModelStreamEvent> {
      let span: Span | undefined;
      let record: SpanRecord | undefined;
      const startedAt = performance.now();
      safely(() => {
        record = chatRecord(client, request);
        span = start(record, parentNow());
      });
      let finished = false;
      const finish = (message: AssistantMessage | undefined, error: ModelErrorInfo | undefined, abandoned = false) => {
        if (finished || !span || !record) return;
        finished = true;
        const [openSpan, openRecord] = [span, record];
        safely(() => finishChat(openSpan, openRecord, startedAt, message, error, abandoned));
      };
      try {
        for await (const event of client.stream(request, options)) {
          if (event.type === "done") finish(event.message, undefined);
          else if (event.type === "error") finish(event.message, event.error);
          yield event;
        }
      } finally {
        finish(undefined, undefined, true);
      }
    }
    // Own copies of the client's fields (so a spread keeps them), the client itself as prototype for the rest.
    const instrumented: ModelClient = Object.assign(Object.create(client) as ModelClient, { ...client }, { stream });
    wrapped.set(client, instrumented);
    wrapped.set(instrumented, instrumented);
    return instrumented;
  };

  return instrument;
}
