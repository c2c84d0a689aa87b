/**
 * Tool approval over HTTP, as useChat does it: a gated call arrives as a `tool-approval-request`
 * part; the client's `approval-responded` parts in the next POST record the decisions (durable,
 * in the log), and the continuation streams into the same message.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readUIMessageStream, type UIMessage } from "ai";
import { startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { messageOf, readChunks, sessionEvents, startService, TOKEN, userMessage, type Service } from "./service.ts";

describe("tool approval over HTTP", () => {
  let model: OpenAIServer | undefined;
  let service: Service | undefined;
  afterEach(async () => {
    await service?.close();
    await model?.close();
  });

  it("asks with tool-approval-request parts, records the client's answers, and continues the same message", async () => {
    model = await startOpenAIServer();
    model.script(
      turnResponse({ text: "Reading both.", toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }, { id: "call_2", name: "read", arguments: { path: "b.txt" } }] }),
      textResponse("One read, one declined."),
    );
    service = await startService({ modelUrl: model.url, requireApproval: ["read"] });
    const user = userMessage("read a.txt and b.txt");
    const first = await readChunks(await service.transport().sendMessages({ chatId: "appr", messages: [user], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    expect(first.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" });
    const asked = (await messageOf(first))!;
    const tools = asked.parts.filter((part) => part.type === "tool-read") as any[];
    expect(tools.map((part) => [part.toolCallId, part.state, part.approval?.id])).toEqual([["call_1", "approval-requested", "call_1"], ["call_2", "approval-requested", "call_2"]]);
    expect(model.requests).toHaveLength(1);

    // What Chat.addToolApprovalResponse does to the parts, then the automatic resend.
    const answered: UIMessage = {
      ...asked,
      parts: asked.parts.map((part: any) =>
        part.state === "approval-requested" ? { ...part, state: "approval-responded", approval: { ...part.approval, approved: part.toolCallId === "call_1", reason: part.toolCallId === "call_1" ? undefined : "not that one" } } : part,
      ),
    };
    const answeredAgain = structuredClone(answered); // readUIMessageStream continues (mutates) the message it is given
    const stream = await service.transport().sendMessages({ chatId: "appr", messages: [user, answered], trigger: "submit-message", messageId: answered.id, abortSignal: undefined });
    let final: UIMessage | undefined;
    for await (const snapshot of readUIMessageStream({ message: answered, stream })) final = snapshot;
    expect(final!.id).toBe(asked.id);
    expect(final!.parts.map((part: any) => [part.type, part.state ?? "", part.toolCallId ?? part.text ?? ""])).toEqual([
      ["step-start", "", ""],
      ["text", "done", "Reading both."],
      ["tool-read", "output-available", "call_1"],
      ["tool-read", "output-denied", "call_2"],
      ["step-start", "", ""],
      ["text", "done", "One read, one declined."],
    ]);
    expect((final!.parts[2] as any).output).toEqual({ content: [{ type: "text", text: "contents of a.txt" }] });
    const events = await sessionEvents(service.log, "appr");
    expect(events.filter((event) => event.type === "approval.ended").map((event) => [(event.data as any).toolCallId, (event.data as any).status, (event.data as any).reason])).toEqual([
      ["call_1", "approved", undefined],
      ["call_2", "denied", "not that one"],
    ]);
    // The history from the log is the same one message (the resumed run folded into it).
    const detail = (await (await fetch(`${service.url}/api/sessions/appr`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { messages: UIMessage[] };
    expect(detail.messages.map((message) => message.id)).toEqual([expect.any(String), asked.id]);
    expect(detail.messages[1].parts.map((part: any) => [part.type, part.state ?? ""])).toEqual(final!.parts.map((part: any) => [part.type, part.state ?? ""]));
    // Answering again: the calls no longer wait.
    const again = await fetch(`${service.url}/api/chat`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ id: "appr", messages: [user, answeredAgain], trigger: "submit-message" }) });
    expect({ status: again.status, body: await again.text() }).toEqual({ status: expect.toSatisfy((status: number) => status === 404 || status === 409), body: expect.stringMatching(/APPROVAL_(NOT_FOUND|CONFLICT)/) });
  });
});
