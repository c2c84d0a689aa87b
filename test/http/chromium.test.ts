/**
 * Chromium (Debian's, through playwright-core): a useChat page built with vite sends a prompt
 * and renders the streamed reply; a reload mid-stream resumes from the log.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitText } from "../../src/testing/openai-wire.ts";
import { launchChromium, withStaticFiles } from "./browser.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { startService, TOKEN, waitForEvent, type Service } from "./service.ts";

const REPLY = "Hello from Arbor, streamed to Chromium and resumed after a reload.";

describe("useChat in Chromium against the Arbor HTTP service", () => {
  let outDir: string;
  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "arbor-chat-page-"));
    await build({ configFile: false, logLevel: "error", root: resolve(import.meta.dirname, "chat-page"), build: { outDir, emptyOutDir: true, target: "es2022", chunkSizeWarningLimit: 10_000 } });
  }, 120_000);
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  let gated: GatedModelServer | undefined;
  let service: Service | undefined;
  afterAll(async () => {
    await service?.close();
    await gated?.close();
  });

  it("sends a prompt, renders the reply, and resumes it after a reload mid-stream", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: REPLY, chunkSize: 8 });
    service = await startService({ modelUrl: gated.url, wrap: withStaticFiles(outDir) });
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      // Waits on the DOM (playwright re-checks on every animation frame; nothing waits for time).
      const assistantText = (text: string) => page.waitForFunction(`document.querySelector('[data-role="assistant"] .text')?.textContent === ${JSON.stringify(text)}`);
      const status = (value: string) => page.waitForFunction(`document.querySelector("#status")?.textContent === ${JSON.stringify(value)}`);
      await page.goto(`${service.url}/?chat=web-1&token=${TOKEN}`);
      await page.fill("#prompt", "say hello");
      await page.click("#send");
      await gated.waitForRequests(1);
      const pieces = splitText(REPLY, 8);
      gated.release(0, 3); // the role frame and two pieces
      await assistantText(pieces[0] + pieces[1]);

      await page.reload();
      // After the reload the history (from the log) and the resumed stream show the message so far.
      await assistantText(pieces[0] + pieces[1]);
      await status("streaming");
      gated.release(0);
      await waitForEvent(service.log, "web-1", (event) => event.type === "run.ended");
      await assistantText(REPLY);
      await status("ready");
      const messages = await page.$$eval(".message", (items) => items.map((item) => ({ role: item.getAttribute("data-role"), texts: [...item.querySelectorAll(".text")].map((p) => p.textContent) })));
      expect(messages).toEqual([
        { role: "user", texts: ["say hello"] },
        { role: "assistant", texts: [REPLY] },
      ]);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
