/**
 * The `ai` package's own chat client in Node: `AbstractChat` over an array state (what
 * `useChat` does in React), for tests that call `sendMessage()` and `resumeStream()`.
 */
import { AbstractChat, type ChatState, type ChatStatus, type UIMessage } from "ai";

class ArrayState implements ChatState<UIMessage> {
  messages: UIMessage[] = [];
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  pushMessage = (message: UIMessage) => void (this.messages = this.messages.concat(message));
  popMessage = () => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: UIMessage) => void (this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)]);
  snapshot = <T>(value: T): T => structuredClone(value);
}

export class NodeChat extends AbstractChat<UIMessage> {
  constructor(init: ConstructorParameters<typeof AbstractChat<UIMessage>>[0] extends infer I ? Omit<I & object, "state"> : never) {
    super({ ...init, state: new ArrayState() } as never);
  }
}
