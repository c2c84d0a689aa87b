/**
 * A loopback OpenAI-compatible server that plays a scripted coding session, so the
 * main job can be tried without a model or a key:
 *
 *   npm run demo-server            # prints the base URL
 *   OPENAI_API_KEY=demo npx arbor run --base-url <url> --model openai:demo "make a greeting"
 *
 * Each run gets the same five answers: write a file, run it with bash, edit it,
 * read it back, then a final text answer. Serves until Ctrl-C. Binds 127.0.0.1 only.
 */
import { startOpenAIServer, textResponse, toolCallResponse, type ScriptedResponse } from "../src/testing/index.ts";

const demo = (round: number): ScriptedResponse[] => [
  toolCallResponse([{ id: `call_w${round}`, name: "write", arguments: { path: "greeting.txt", content: "Hello from Arbor!\n" } }], { delayMs: 20 }),
  toolCallResponse([{ id: `call_b${round}`, name: "bash", arguments: { command: "cat greeting.txt && wc -c greeting.txt" } }], { delayMs: 20 }),
  toolCallResponse([{ id: `call_e${round}`, name: "edit", arguments: { path: "greeting.txt", edits: [{ oldText: "Hello", newText: "Hi" }] } }], { delayMs: 20 }),
  toolCallResponse([{ id: `call_r${round}`, name: "read", arguments: { path: "greeting.txt" } }], { delayMs: 20 }),
  textResponse("I wrote greeting.txt, ran it through bash, changed Hello to Hi, and read it back: it now says \"Hi from Arbor!\".", { delayMs: 20 }),
];

const server = await startOpenAIServer();
let round = 0;
server.script(demo(round++));
console.log(`demo OpenAI-compatible server: ${server.url}`);
console.log(`try: OPENAI_API_KEY=demo npx arbor run --base-url ${server.url} --model openai:demo "make a greeting"`);
// Keep one round queued ahead of the requests.
for (let seen = 1; ; seen++) {
  await server.waitForRequests(seen);
  if (server.remaining() < 5) server.script(demo(round++));
}
