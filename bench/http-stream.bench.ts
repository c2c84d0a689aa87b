/**
 * http-stream (goal P10): streaming a chat over HTTP with Arbor's chat handler versus the AI
 * SDK's own `streamText(...).toUIMessageStreamResponse()`, which persists nothing.
 *
 * Each server runs in its own process (`http-stream-server-child.ts`: Arbor on a SQLite file
 * on disk with default settings, or the AI SDK handler), behind the same Node `http` adapter,
 * against the same loopback OpenAI-wire model server (in this process), which streams a reply
 * of WORDS paced text deltas (`delayMs` between frames). The client (this process) posts with
 * the `ai` package's `DefaultChatTransport` and reads each stream to the end.
 * Measured per mode: the server process's CPU (user + system) per reply, and the time from the
 * POST to the first `text-delta` chunk (median). One chat at a time (ROUNDS_ONE replies) and
 * CONCURRENT chats at once. Modes alternate (ai-sdk, arbor, arbor, ai-sdk, ...), each on a fresh
 * server process and, for Arbor, a fresh log; each measurement starts after one warm-up chat, and
 * the ratio is of the medians over the rounds.
 * Sizes: ARBOR_BENCH_P10_WORDS (default 200), ARBOR_BENCH_P10_CONCURRENT (default 50),
 * ARBOR_BENCH_P10_ROUNDS (default 2).
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DefaultChatTransport, type UIMessage } from "ai";
import { startOpenAIServer, textResponse } from "../src/testing/openai-server.ts";
import { median, printGoal } from "./goal.ts";

const here = dirname(fileURLToPath(import.meta.url));
const WORDS = Number(process.env.ARBOR_BENCH_P10_WORDS ?? 200);
const CONCURRENT = Number(process.env.ARBOR_BENCH_P10_CONCURRENT ?? 50);
const ROUNDS = Number(process.env.ARBOR_BENCH_P10_ROUNDS ?? 2);
/** Sequential replies per round of the one-chat measurement (the first is a warm-up, not counted). */
const SEQUENTIAL = 21;
const PACE_MS = 1;

type Mode = "arbor" | "ai-sdk";

interface Server {
  url: string;
  cpuMs(): Promise<number>;
  close(): Promise<void>;
}

async function startServer(mode: Mode, modelUrl: string, dir: string): Promise<Server> {
  const child: ChildProcess = fork(join(here, "http-stream-server-child.ts"), [JSON.stringify({ mode, modelUrl, dir })], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = <T>(): Promise<T> =>
    new Promise((resolve, reject) => {
      child.once("message", (message) => resolve(message as T));
      child.once("exit", (code) => reject(new Error(`the ${mode} server exited (${code})`)));
    });
  const { url } = await next<{ url: string }>();
  return {
    url,
    async cpuMs() {
      const reply = next<{ cpu: NodeJS.CpuUsage }>();
      child.send("cpu");
      const { cpu } = await reply;
      return (cpu.user + cpu.system) / 1000;
    },
    close: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.send("close");
      }),
  };
}

/** Posts one chat and reads it to the end; resolves with the ms to the first text delta. */
async function chat(url: string, chatId: string): Promise<number> {
  const transport = new DefaultChatTransport<UIMessage>({ api: `${url}/api/chat` });
  const at = performance.now();
  const stream = await transport.sendMessages({
    chatId,
    messages: [{ id: `${chatId}-u`, role: "user", parts: [{ type: "text", text: "go" }] }],
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined,
  });
  const reader = stream.getReader();
  let first = Number.NaN;
  let deltas = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value.type === "text-delta") {
      if (deltas === 0) first = performance.now() - at;
      deltas++;
    }
    if (value.type === "error") throw new Error(`the stream failed: ${value.errorText}`);
  }
  if (deltas === 0) throw new Error("the stream carried no text delta");
  return first;
}

interface Measurement {
  cpuPerReplyMs: number;
  firstDeltaMs: number;
}

async function measure(mode: Mode, modelUrl: string, concurrent: number, round: number): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), `arbor-p10-${mode}-`));
  const server = await startServer(mode, modelUrl, dir);
  try {
    await chat(server.url, `warm-${round}`);
    const before = await server.cpuMs();
    const firsts: number[] = [];
    let replies = 0;
    if (concurrent === 1) {
      for (let index = 1; index < SEQUENTIAL; index++) {
        firsts.push(await chat(server.url, `one-${round}-${index}`));
        replies++;
      }
    } else {
      firsts.push(...(await Promise.all(Array.from({ length: concurrent }, (_, index) => chat(server.url, `many-${round}-${index}`)))));
      replies = concurrent;
    }
    const cpu = (await server.cpuMs()) - before;
    return { cpuPerReplyMs: cpu / replies, firstDeltaMs: median(firsts) };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function httpStream(): Promise<void> {
  const text = Array.from({ length: WORDS }, (_, index) => `word${index}`).join(" ");
  const model = await startOpenAIServer({ respond: () => textResponse(text, { delayMs: PACE_MS }) });
  try {
    for (const concurrent of [1, CONCURRENT]) {
      const runs: Record<Mode, Measurement[]> = { arbor: [], "ai-sdk": [] };
      for (let round = 0; round < ROUNDS; round++) {
        const order: Mode[] = round % 2 === 0 ? ["ai-sdk", "arbor"] : ["arbor", "ai-sdk"];
        for (const mode of order) runs[mode].push(await measure(mode, model.url, concurrent, round));
      }
      const of = (mode: Mode, key: keyof Measurement) => median(runs[mode].map((run) => run[key]));
      const label = concurrent === 1 ? "1 chat" : `${concurrent} concurrent chats`;
      console.log(
        `${label}, ${WORDS} deltas paced ${PACE_MS} ms: CPU per reply arbor ${of("arbor", "cpuPerReplyMs").toFixed(1)} ms, ai-sdk ${of("ai-sdk", "cpuPerReplyMs").toFixed(1)} ms; ` +
          `first delta (median) arbor ${of("arbor", "firstDeltaMs").toFixed(1)} ms, ai-sdk ${of("ai-sdk", "firstDeltaMs").toFixed(1)} ms`,
      );
      for (const [key, what] of [["cpuPerReplyMs", "server CPU per reply"], ["firstDeltaMs", "time to first delta"]] as const) {
        const arbor = of("arbor", key);
        const baseline = of("ai-sdk", key);
        printGoal({ bench: `P10 http ${what}, ${label}`, arbor, baseline, unit: "ms", ratio: arbor / baseline, goal: "<= 1.2" });
      }
    }
  } finally {
    await model.close();
  }
}
