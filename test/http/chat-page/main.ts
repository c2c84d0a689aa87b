/**
 * A small useChat page (React, `@ai-sdk/react`) pointed at the Arbor HTTP service on the same
 * origin: `?chat=ID&token=T`. It loads the session's history from `GET /api/sessions/:id`, then
 * mounts `useChat` with `resume: true` (a reload mid-stream resumes from the log). Built by vite
 * at test time (test/http/chromium.test.ts); excluded from tsc (browser code, no DOM lib there).
 */
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type UIMessage } from "ai";
import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";

const params = new URLSearchParams(location.search);
const chatId = params.get("chat") ?? "web";
const token = params.get("token") ?? "";
const headers = { authorization: `Bearer ${token}` };

function Chat(props: { initial: UIMessage[] }) {
  const [input, setInput] = useState("");
  const { messages, sendMessage, status } = useChat({
    id: chatId,
    messages: props.initial,
    resume: true,
    transport: new DefaultChatTransport({ api: "/api/chat", headers }),
  });
  return h(
    "main",
    null,
    h("p", { id: "status" }, status),
    h(
      "ol",
      { id: "messages" },
      messages.map((message) =>
        h(
          "li",
          { key: message.id, "data-role": message.role, "data-id": message.id, className: "message" },
          message.parts.map((part, index) => {
            if (part.type === "text") return h("p", { key: index, className: "text" }, part.text);
            if (part.type.startsWith("tool-")) return h("p", { key: index, className: "tool", "data-state": (part as { state?: string }).state }, part.type);
            return null;
          }),
        ),
      ),
    ),
    h(
      "form",
      {
        onSubmit: (event: { preventDefault(): void }) => {
          event.preventDefault();
          void sendMessage({ text: input });
          setInput("");
        },
      },
      h("input", { id: "prompt", value: input, onChange: (event: { target: { value: string } }) => setInput(event.target.value) }),
      h("button", { id: "send", type: "submit" }, "Send"),
    ),
  );
}

const history = await fetch(`/api/sessions/${encodeURIComponent(chatId)}`, { headers });
const initial: UIMessage[] = history.ok ? ((await history.json()) as { messages: UIMessage[] }).messages : [];
createRoot(document.getElementById("root")!).render(h(Chat, { initial }));
