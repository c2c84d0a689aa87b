/**
 * The loopback OpenAI server of the PostgreSQL machine tests, answering from the
 * request alone (any worker process may send any session's next turn): a session
 * whose last prompt says "hold" hangs; others get a `step` tool call until the request
 * carries ten tool results, then the text "done".
 */
import { hangResponse, type RecordedRequest, startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/openai-server.ts";

/** The session id named in the request's first prompt ("session <id>: ..."). */
export function sessionOf(request: RecordedRequest): string | undefined {
  return /session ([0-9a-zA-Z_-]+):/.exec(JSON.stringify(request.body?.messages ?? []))?.[1];
}

/** Starts the server; `onRequest` sees every request first (e.g. to kill a worker at a count). */
export async function startStepServer(onRequest: (request: RecordedRequest, session: string | undefined) => void = () => undefined) {
  return startOpenAIServer({
    respond(request) {
      const session = sessionOf(request);
      onRequest(request, session);
      const messages = (request.body?.messages ?? []) as { role: string }[];
      const lastUser = messages.filter((message) => message.role === "user").pop();
      if (JSON.stringify(lastUser ?? "").includes(": hold")) return hangResponse();
      const results = messages.filter((message) => message.role === "tool").length;
      if (results >= 10) return textResponse("done");
      return toolCallResponse([{ id: `call_${session ?? "x"}_${results}`, name: "step", arguments: { n: results } }]);
    },
  });
}
