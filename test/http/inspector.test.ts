/**
 * The offline inspector in Chromium: the session list (refreshed live), the tree (leaf, branch,
 * label and the label entry's text) and the run timeline with tool calls and durations, from the
 * service's own routes only.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { inspectorResponse } from "../../src/http/inspector-assets.ts";
import { launchChromium } from "./browser.ts";
import { ensureInspectorBuilt } from "./inspector-build.ts";
import { readChunks, startService, TOKEN, userMessage, type Service } from "./service.ts";

describe("the offline inspector page", () => {
  let model: OpenAIServer | undefined;
  let service: Service | undefined;
  beforeAll(ensureInspectorBuilt, 120_000);
  afterEach(async () => {
    await service?.close();
    await model?.close();
  });

  it("renders the session list, the tree with its leaf, branch and label, and the run timeline; saves a screenshot", async () => {
    model = await startOpenAIServer();
    model.script(
      turnResponse({ text: "Reading both.", toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }, { id: "call_2", name: "read", arguments: { path: "b.txt" } }] }),
      textResponse("Both are read."),
      textResponse("A second branch."),
    );
    service = await startService({ modelUrl: model.url });
    const send = async (text: string) =>
      readChunks(await service!.transport().sendMessages({ chatId: "insp", messages: [userMessage(text)], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    await send("read a.txt and b.txt");
    const session = await service.harness.openSession("insp");
    const firstUser = session.session.view.getEntries().find((entry) => entry.type === "message" && (entry as any).message.role === "user")!;
    await session.label(firstUser.id, "checkpoint");
    await session.moveTo(firstUser.parentId!);
    await send("something else");

    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const foreign: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith(service!.url)) foreign.push(request.url());
      });
      await page.goto(`${service.url}/inspector#token=${TOKEN}`);
      await page.click('#sessions [data-session-id="insp"]');
      await page.waitForSelector('#timeline .run[data-status="done"] >> nth=1');
      await page.waitForSelector("#tree .leaf");
      const tree = await page.$$eval("#tree [data-entry-id]", (items) => items.map((item) => item.getAttribute("data-type")));
      // Every entry stays in the tree: 2 user prompts, 3 assistant replies, 2 tool results.
      expect(tree.filter((type) => type === "message").length).toBe(7);
      const labels = await page.$$eval("#tree .label", (items) => items.map((item) => item.textContent));
      expect(labels).toEqual(["checkpoint"]);
      // The label entry itself shows its text and target, not just "label".
      const labelEntry = (await page.textContent("#tree [data-type=label] > .entry"))!;
      expect(labelEntry).toContain('"checkpoint" on');
      expect(labelEntry).toContain(firstUser.id.slice(0, 8));
      // The branch: the first user message and the second one are siblings under the same parent.
      const siblings = await page.$$eval(`#tree [data-entry-id="${firstUser.parentId}"] > ul > li`, (items) => items.length);
      expect(siblings).toBe(2);
      const runs = await page.$$eval("#timeline .run", (items) => items.map((item) => item.getAttribute("data-status")));
      expect(runs).toEqual(["done", "done"]);
      const tools = await page.$$eval("#timeline .tool", (items) => items.map((item) => ({ id: item.getAttribute("data-tool-call-id"), outcome: item.getAttribute("data-outcome"), ms: item.getAttribute("data-duration-ms") })));
      expect(tools.map((tool) => [tool.id, tool.outcome])).toEqual([["call_1", "succeeded"], ["call_2", "succeeded"]]);
      for (const tool of tools) expect(Number(tool.ms)).toBeGreaterThanOrEqual(0);
      expect(foreign).toEqual([]);

      const dir = mkdtempSync(join(tmpdir(), "arbor-inspector-"));
      const path = process.env.ARBOR_INSPECTOR_SCREENSHOT ?? join(dir, "inspector.png");
      await page.setViewportSize({ width: 1280, height: 640 });
      await page.screenshot({ path });
      expect(readFileSync(path).subarray(1, 4).toString()).toBe("PNG");
      rmSync(dir, { recursive: true, force: true });
    } finally {
      await browser.close();
    }
  }, 120_000);

  it("refreshes the session list live: a new session and a chosen session's new messages appear without a reload", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("First."), textResponse("Second."), textResponse("Third."));
    service = await startService({ modelUrl: model.url });
    const send = async (chatId: string, text: string) =>
      readChunks(await service!.transport().sendMessages({ chatId, messages: [userMessage(text)], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    await send("one", "first question");

    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      let listReads = 0;
      page.on("request", (request) => {
        if (new URL(request.url()).pathname === "/api/sessions") listReads += 1;
      });
      // A short refresh interval for the test (the default is 5 s, docs/http.md).
      await page.goto(`${service.url}/inspector#token=${TOKEN}&refresh=200`);
      await page.waitForSelector('#sessions [data-session-id="one"]');
      // (The list also holds the harness's own session, which startService's harness made.)
      const listed = () => page.$$eval("#sessions [data-session-id]", (items) => items.map((item) => item.getAttribute("data-session-id")).filter((id) => id === "one" || id === "two"));
      expect(await listed()).toEqual(["one"]);

      // Another client starts a session: it joins the list, first (the most recently appended), without a reload.
      await send("two", "second question");
      await page.waitForSelector('#sessions [data-session-id="two"]');
      expect(await listed()).toEqual(["two", "one"]);

      // The chosen session's new messages update its row (its count), from its live event stream.
      await page.click('#sessions [data-session-id="one"]');
      await page.waitForSelector("#tree [data-entry-id][data-type=message] >> nth=1");
      expect(await page.textContent('#sessions [data-session-id="one"] .muted')).toContain("2 msgs");
      await send("one", "third question");
      await page.waitForSelector('#sessions [data-session-id="one"] .muted:has-text("4 msgs")');
      expect(await listed()).toEqual(["one", "two"]);
      expect(listReads).toBeGreaterThan(2);
    } finally {
      await browser.close();
    }
  }, 120_000);

  it("serves the built page with the API base path, its built assets only, and no data without the token", async () => {
    model = await startOpenAIServer();
    service = await startService({ modelUrl: model.url });
    for (const path of ["/", "/inspector"]) {
      const page = await fetch(`${service.url}${path}`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await page.text();
      expect(html).toContain('<body data-base="/api">');
      expect(html).toContain('src="/inspector/assets/inspector.js"');
    }
    const script = await fetch(`${service.url}/inspector/assets/inspector.js`);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await script.text()).length).toBeGreaterThan(1000);
    expect((await fetch(`${service.url}/inspector/assets/inspector.css`)).headers.get("content-type")).toBe("text/css; charset=utf-8");
    // Only the files the build wrote: no other name, no path out of the folder.
    expect((await fetch(`${service.url}/inspector/assets/nothing.js`)).status).toBe(404);
    expect((await fetch(`${service.url}/inspector/assets/..%2F..%2F..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${service.url}/api/sessions`)).status).toBe(401);
  });

  it("answers 503 naming the build command when the page is not built, and leaves other paths to the API", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-inspector-unbuilt-"));
    try {
      for (const path of ["/", "/inspector", "/inspector/assets/inspector.js"]) {
        const response = inspectorResponse(path, "/api", dir)!;
        expect(response.status).toBe(503);
        expect(await response.text()).toContain("npm run build");
      }
      expect(inspectorResponse("/api/sessions", "/api", dir)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
