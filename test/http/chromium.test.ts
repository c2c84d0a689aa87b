/**
 * Chromium (Debian's, through playwright-core) drives a page built with `@ai-sdk/react` 4
 * `useChat` (`ai` 7) against the Arbor HTTP service: a prompt and its streamed reply, a reload
 * mid-stream that resumes from the log, an approval given from the page (the call waits, the
 * page's Approve sends the decision, the run goes on), and a message steered in while a run goes
 * (it reaches the model's next request and shows as the reply's `steering-message` part, live
 * and after a reload).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitText } from "../../src/testing/openai-wire.ts";
import { launchChromium, withStaticFiles } from "./browser.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { startService, TOKEN, waitForEvent, type Service } from "./service.ts";

const REPLY = "Hello from Arbor, streamed to Chromium and resumed after a reload.";

/** Waits on the DOM (playwright re-checks on every animation frame; nothing waits for time). */
const pageWaits = (page: Page) => ({
  assistantText: (text: string) => page.waitForFunction(`[...document.querySelectorAll('[data-role="assistant"] .text')].some((p) => p.textContent === ${JSON.stringify(text)})`),
  status: (value: string) => page.waitForFunction(`document.querySelector("#status")?.textContent === ${JSON.stringify(value)}`),
  selector: (selector: string) => page.waitForSelector(selector),
});

const messagesOf = (page: Page) =>
  page.$$eval(".message", (items) =>
    items.map((item) => ({
      role: item.getAttribute("data-role"),
      texts: [...item.querySelectorAll(".text")].map((p) => p.textContent),
      steering: [...item.querySelectorAll(".steering")].map((p) => p.textContent),
      tools: [...item.querySelectorAll(".tool")].map((p) => p.getAttribute("data-state")),
    })),
  );

describe("useChat (@ai-sdk/react 4) in Chromium against the Arbor HTTP service", () => {
  let outDir: string;
  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "arbor-chat-page-"));
    await build({ configFile: false, logLevel: "error", root: resolve(import.meta.dirname, "chat-page"), build: { outDir, emptyOutDir: true, target: "es2022", chunkSizeWarningLimit: 10_000 } });
  }, 120_000);
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  let gated: GatedModelServer;
  let service: Service;
  beforeAll(async () => {
    gated = await startGatedModelServer();
    service = await startService({ modelUrl: gated.url, wrap: withStaticFiles(outDir), requireApproval: ["read"] });
  });
  afterAll(async () => {
    await service?.close();
    await gated?.close();
  });

  it("sends a prompt, renders the reply, and resumes it after a reload mid-stream", async () => {
    gated.script({ text: REPLY, chunkSize: 8 });
    const first = gated.requestCount();
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const wait = pageWaits(page);
      await page.goto(`${service.url}/?chat=web-1&token=${TOKEN}`);
      await page.fill("#prompt", "say hello");
      await page.click("#send");
      await gated.waitForRequests(first + 1);
      const pieces = splitText(REPLY, 8);
      gated.release(first, 3); // the role frame and two pieces
      await wait.assistantText(pieces[0] + pieces[1]);

      await page.reload();
      // After the reload the history (from the log) and the resumed stream show the message so far.
      await wait.assistantText(pieces[0] + pieces[1]);
      await wait.status("streaming");
      gated.release(first);
      await waitForEvent(service.log, "web-1", (event) => event.type === "run.ended");
      await wait.assistantText(REPLY);
      await wait.status("ready");
      expect(await messagesOf(page)).toEqual([
        { role: "user", texts: ["say hello"], steering: [], tools: [] },
        { role: "assistant", texts: [REPLY], steering: [], tools: [] },
      ]);
    } finally {
      await browser.close();
    }
  }, 120_000);

  it("approves a waiting tool call from the page; the run goes on and the call runs once", async () => {
    gated.script({ toolCalls: [{ id: "call-read-1", name: "read", arguments: { path: "notes.txt" } }] }, { text: "The notes say hi." });
    const first = gated.requestCount();
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const wait = pageWaits(page);
      await page.goto(`${service.url}/?chat=web-2&token=${TOKEN}`);
      await page.fill("#prompt", "read notes.txt");
      await page.click("#send");
      await gated.waitForRequests(first + 1);
      gated.release(first);
      await wait.selector('.tool[data-state="approval-requested"] .approve');
      await waitForEvent(service.log, "web-2", (event) => event.type === "run.ended" && (event.data as { status: string }).status === "suspended");
      await page.click('.tool[data-state="approval-requested"] .approve');
      // sendAutomaticallyWhen sends the decision; the server records it and continues the run.
      await gated.waitForRequests(first + 2);
      gated.release(first + 1);
      await wait.assistantText("The notes say hi.");
      await wait.status("ready");
      const events = await service.log.readStream("session-web-2");
      expect(events.filter((event) => event.type === "approval.ended").map((event) => (event.data as { status: string }).status)).toEqual(["approved"]);
      expect(events.filter((event) => event.type === "tool.ended").map((event) => (event.data as { outcome: string }).outcome)).toEqual(["succeeded"]);
      expect(await messagesOf(page)).toEqual([
        { role: "user", texts: ["read notes.txt"], steering: [], tools: [] },
        { role: "assistant", texts: ["The notes say hi."], steering: [], tools: ["output-available"] },
      ]);
    } finally {
      await browser.close();
    }
  }, 120_000);

  it("steers a running run from the page: the model's next request has the message, the reply shows it", async () => {
    const WORKING = "Working on it, in English for now.";
    gated.script({ text: WORKING, chunkSize: 8 }, { text: "Bien sûr, en français." });
    const first = gated.requestCount();
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const wait = pageWaits(page);
      await page.goto(`${service.url}/?chat=web-3&token=${TOKEN}`);
      await page.fill("#prompt", "explain the plan");
      await page.click("#send");
      await gated.waitForRequests(first + 1);
      const pieces = splitText(WORKING, 8);
      gated.release(first, 2);
      await wait.assistantText(pieces[0]);
      await page.fill("#steer-text", "answer in French");
      await page.click("#steer-send");
      await page.waitForFunction(`document.querySelector("#steered")?.textContent === "202"`);
      await waitForEvent(service.log, "web-3", (event) => event.type === "queue.changed" && (event.data as { action: string }).action === "enqueued");
      gated.release(first);
      // The run takes the steering message at its next step: a second model request that holds it.
      await gated.waitForRequests(first + 2);
      expect(gated.body(first + 1)).toContain("answer in French");
      gated.release(first + 1);
      await waitForEvent(service.log, "web-3", (event) => event.type === "run.ended");
      await wait.assistantText("Bien sûr, en français.");
      await wait.status("ready");
      const expected = [
        { role: "user", texts: ["explain the plan"], steering: [], tools: [] },
        { role: "assistant", texts: [WORKING, "Bien sûr, en français."], steering: ["answer in French"], tools: [] },
      ];
      expect(await messagesOf(page)).toEqual(expected);
      // The history from the log is what the live stream built.
      await page.reload();
      await wait.assistantText("Bien sûr, en français.");
      expect(await messagesOf(page)).toEqual(expected);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
