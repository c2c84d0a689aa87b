/**
 * A small useChat page (React, `@ai-sdk/react` 4, `ai` 7) pointed at the Arbor HTTP service on
 * the same origin: `?chat=ID&token=T`. It loads the session's history from `GET /api/sessions/:id`,
 * then mounts `useChat` with `resume: true` (a reload mid-stream resumes from the log). A tool
 * call waiting for approval shows an Approve button (`addToolApprovalResponse`; the answer is sent
 * by `sendAutomaticallyWhen`); the steer form posts to `POST /api/chat/:id/steer` while a run goes,
 * and a steered message shows as the reply's `steering-message` part. With `&reconnect=1`, a
 * stream that broke (the server went away: `onFinish`'s `isDisconnect`) is resumed at once with
 * `resumeStream()`, as an app behind a load balancer would. Built by vite at test time
 * (test/http/chromium.test.ts, chromium-failover.test.ts); excluded from tsc (browser code, no DOM lib there).
 */
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";

const params = new URLSearchParams(location.search);
const chatId = params.get("chat") ?? "web";
const token = params.get("token") ?? "";
const headers = { authorization: `Bearer ${token}` };
const reconnect = params.get("reconnect") === "1";
/** The mounted chat's resumeStream, for onFinish (which runs before the hook's value is read). */
let resume: (() => Promise<void>) | undefined;

type AnyPart = { type: string; text?: string; state?: string; approval?: { id: string }; parts?: { type: string; text?: string }[] };

function Chat(props: { initial: UIMessage[] }) {
  const [input, setInput] = useState("");
  const [steering, setSteering] = useState("");
  const [steered, setSteered] = useState("");
  const { messages, sendMessage, status, addToolApprovalResponse, resumeStream } = useChat({
    id: chatId,
    messages: props.initial,
    resume: true,
    transport: new DefaultChatTransport({ api: "/api/chat", headers }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    // After the SDK has settled the broken request (a task, not a wait deciding any order).
    onFinish: ({ isDisconnect }) => {
      if (reconnect && isDisconnect) setTimeout(() => void resume?.(), 0);
    },
  });
  resume = resumeStream;
  const renderPart = (part: AnyPart, index: number) => {
    if (part.type === "text") return h("p", { key: index, className: "text" }, part.text);
    if (part.type === "steering-message") return h("p", { key: index, className: "steering" }, (part.parts ?? []).map((inner) => inner.text ?? "").join(""));
    if (part.type.startsWith("tool-")) {
      const approve = part.state === "approval-requested" && part.approval ? h("button", { key: "approve", className: "approve", onClick: () => void addToolApprovalResponse({ id: part.approval!.id, approved: true }) }, "Approve") : null;
      return h("p", { key: index, className: "tool", "data-state": part.state }, part.type, approve);
    }
    return null;
  };
  return h(
    "main",
    null,
    h("p", { id: "status" }, status),
    h(
      "ol",
      { id: "messages" },
      messages.map((message) => h("li", { key: message.id, "data-role": message.role, "data-id": message.id, className: "message" }, (message.parts as AnyPart[]).map(renderPart))),
    ),
    h(
      "form",
      {
        id: "chat",
        onSubmit: (event: { preventDefault(): void }) => {
          event.preventDefault();
          void sendMessage({ text: input });
          setInput("");
        },
      },
      h("input", { id: "prompt", value: input, onChange: (event: { target: { value: string } }) => setInput(event.target.value) }),
      h("button", { id: "send", type: "submit" }, "Send"),
    ),
    h(
      "form",
      {
        id: "steer",
        onSubmit: (event: { preventDefault(): void }) => {
          event.preventDefault();
          const text = steering;
          setSteering("");
          void fetch(`/api/chat/${encodeURIComponent(chatId)}/steer`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ text }) }).then((response) => setSteered(String(response.status)));
        },
      },
      h("input", { id: "steer-text", value: steering, onChange: (event: { target: { value: string } }) => setSteering(event.target.value) }),
      h("button", { id: "steer-send", type: "submit" }, "Steer"),
      h("span", { id: "steered" }, steered),
    ),
  );
}

const history = await fetch(`/api/sessions/${encodeURIComponent(chatId)}`, { headers });
const initial: UIMessage[] = history.ok ? ((await history.json()) as { messages: UIMessage[] }).messages : [];
createRoot(document.getElementById("root")!).render(h(Chat, { initial }));
