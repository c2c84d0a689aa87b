/**
 * Approval answers to a real `arbor serve --approve read` (one SQLite file), whose worker also
 * continues runs whose approvals were all decided: the `POST /api/chat` carrying the client's
 * `approval-responded` parts records the decisions and continues the run itself, answering `200`
 * with the continuation of the same message, not `409` because the worker saw the last decision
 * first and continued the run; the run is continued once.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { REPLICA_TOKEN, startFleet, type Fleet } from "./replicas.ts";
import { messageOf, readChunks, userMessage } from "./service.ts";

describe("approval answers to arbor serve, whose worker continues decided runs", () => {
  let model: OpenAIServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await model?.close();
  });

  it("the answering request continues the run and streams it (200), once", async () => {
    model = await startOpenAIServer();
    model.script(toolCallResponse([{ id: "call_1", name: "read", arguments: { path: "a.txt" } }]), textResponse("Read it."));
    fleet = await startFleet({ kind: "sqlite" }, model.url, 1, {}, ["--approve", "read"]);
    writeFileSync(join(fleet.dir, "a.txt"), "contents of a.txt\n");
    const transport = new DefaultChatTransport<UIMessage>({ api: `${fleet.replicas[0].url}/api/chat`, headers: { authorization: `Bearer ${REPLICA_TOKEN}` } });
    const user = userMessage("read a.txt");
    const asked = (await messageOf(await readChunks(await transport.sendMessages({ chatId: "gated", messages: [user], trigger: "submit-message", messageId: undefined, abortSignal: undefined }))))!;
    expect(asked.parts.find((part) => part.type === "tool-read")).toMatchObject({ state: "approval-requested" });

    const answered: UIMessage = { ...asked, parts: asked.parts.map((part: any) => (part.state === "approval-requested" ? { ...part, state: "approval-responded", approval: { ...part.approval, approved: true } } : part)) };
    const stream = await transport.sendMessages({ chatId: "gated", messages: [user, answered], trigger: "submit-message", messageId: answered.id, abortSignal: undefined });
    let final: UIMessage | undefined;
    for await (const snapshot of readUIMessageStream({ message: structuredClone(answered), stream })) final = snapshot;
    expect(final!.parts.filter((part) => part.type === "text").map((part: any) => part.text)).toEqual(["Read it."]);
    expect(final!.parts.find((part) => part.type === "tool-read")).toMatchObject({ state: "output-available" });
    const events = await fleet.log.readStream("session-gated");
    expect(events.filter((event) => event.type === "run.started").map((event) => (event.data as { kind: string }).kind)).toEqual(["prompt", "resume"]);
    expect(events.filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status)).toEqual(["suspended", "done"]);
  }, 120_000);
});
