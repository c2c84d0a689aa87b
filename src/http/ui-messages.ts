/**
 * A session's conversation as AI SDK `UIMessage`s, built from the log for a reloaded page: user prompts by entry id; each run one assistant message
 * (id = run id) made by `readUIMessageStream` over the projection's chunks, exactly what a streaming client holds; steering messages are parts of
 * the reply; log order.
 */
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import type { UserMessage } from "../core/messages.ts";
import type { StoredEvent } from "../store/event-log.ts";
import { isArborEvent } from "../store/events/catalogue.ts";
import { initialRunProjection, projectRunEvent, type RunProjectionState, userUIParts } from "./ui-projection.ts";

/** The message the AI SDK's client builds from `chunks` (`readUIMessageStream`); undefined for no chunks. */
export async function foldChunks(chunks: UIMessageChunk[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return last;
}

/**
 * The session's UI messages (see the module contract).
 * @example
 * const [first] = await uiMessagesOf(events); // { id, role: "user", parts: [{ type: "text", text }] }
 */
export async function uiMessagesOf(events: readonly StoredEvent[]): Promise<UIMessage[]> {
  const slots: (UIMessage | { runChunks: UIMessageChunk[] })[] = [];
  let run: { state: RunProjectionState; chunks: UIMessageChunk[] } | undefined;
  for (const event of events) {
    if (!isArborEvent(event)) continue;
    if (event.type === "entry.appended" && event.data.entry.type === "message") {
      const message = (event.data.entry as { message: { role: string } }).message;
      const inRun = run !== undefined && !run.state.ended && run.state.runId !== undefined && event.metadata.runId === run.state.runId;
      // A user message steered into the run is the reply's steering-message part (the projection's).
      if (message.role === "user" && !(inRun && !run!.state.promptPending)) {
        const user: UIMessage = { id: event.data.entry.id, role: "user", parts: userUIParts(message as UserMessage) };
        // The prompt is logged inside its run (after run.started): it goes before the run's reply.
        const runSlot = inRun ? slots.findIndex((slot) => "runChunks" in slot && slot.runChunks === run!.chunks) : -1;
        if (runSlot >= 0) slots.splice(runSlot, 0, user);
        else slots.push(user);
      }
    }
    // A `resume` run after a suspension continues the same message (the projection folds it in).
    if (event.type === "run.started" && (run === undefined || (run.state.ended && !(run.state.suspended && event.data.kind === "resume")))) {
      run = { state: initialRunProjection(), chunks: [] };
      slots.push({ runChunks: run.chunks });
    }
    if (run) {
      const step = projectRunEvent(run.state, event);
      run.state = step.state;
      run.chunks.push(...step.chunks);
    }
  }
  const messages: UIMessage[] = [];
  for (const slot of slots) {
    if (!("runChunks" in slot)) {
      messages.push(slot);
      continue;
    }
    const message = await foldChunks(slot.runChunks);
    if (message) messages.push(message);
  }
  return messages;
}
