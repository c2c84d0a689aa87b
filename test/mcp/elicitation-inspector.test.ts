/**
 * The inspector page answers an MCP server's request for input: a harness runs server-everything's
 * `trigger-elicitation-request` (stdio) behind the HTTP service; the page (Chromium) shows the
 * waiting request with the fields asked for, shows the service's refusal of an invalid answer,
 * then accepts a valid one; the waiting run gets it and ends done. Real SQLite, the real MCP
 * server, the real @ai-sdk/openai client against the loopback model server.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer, type ChatServer } from "../../src/http/node-adapter.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { launchChromium } from "../http/browser.ts";
import { ensureInspectorBuilt } from "../http/inspector-build.ts";
import { everythingStdio } from "./helpers.ts";

const TOKEN = "inspector-token";
let model: OpenAIServer | undefined;
let harness: AgentHarness | undefined;
let service: ChatServer | undefined;
beforeAll(ensureInspectorBuilt, 180_000);
afterEach(async () => {
  await service?.close();
  await harness?.close();
  await model?.close();
});

describe("the inspector answers elicitations", () => {
  it("shows the waiting request, refuses an invalid answer with the service's message, and accepts a valid one", { timeout: 180_000 }, async () => {
    model = await startOpenAIServer();
    const dir = mkdtempSync(join(tmpdir(), "arbor-elicit-inspector-"));
    harness = await createHarness({
      eventLogPath: join(dir, "arbor.db"),
      cwd: dir,
      models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: model.url, apiKey: "test", api: "chat" }) },
      mcpServers: [everythingStdio()],
    });
    service = await startChatServer({ handler: createChatHandler({ harness, token: TOKEN }) });
    model.script(toolCallResponse([{ id: "call_ask", name: "everything__trigger-elicitation-request", arguments: {} }]), textResponse("thanks, Alan"));
    const outcome = harness.prompt("ask me");

    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${service.url}/inspector#token=${TOKEN}&refresh=200`);
      await page.click(`#sessions [data-session-id="${harness.id}"]`);
      const pending = '#elicitations .elicitation[data-status="pending"]';
      await page.waitForSelector(pending, { timeout: 60_000 });
      expect(await page.textContent(pending)).toContain("Please provide inputs for the following fields:");
      expect(await page.textContent(`${pending} .fields`)).toContain("name (string): Your full, legal name");

      await page.fill(`${pending} textarea.answer`, '{"name": 5}');
      await page.click(`${pending} button.accept`);
      await page.waitForSelector(`${pending} .error`);
      expect(await page.textContent(`${pending} .error`)).toMatch(/^400 Invalid answer to elicitation "el_[^"]+": name: must be string/);

      await page.fill(`${pending} textarea.answer`, '{"name": "Alan Turing", "check": true}');
      await page.click(`${pending} button.accept`);
      await page.waitForSelector('#elicitations .elicitation[data-status="answered"]');
      expect(await page.textContent('#elicitations .elicitation[data-status="answered"]')).toContain("answered: accept via http");
    } finally {
      await browser.close();
    }
    const result = await vi.waitFor(() => outcome, { timeout: 60_000 });
    expect(result.status).toBe("done");
    const tools = (model.requests[1].body as { messages: { role: string; content?: unknown }[] }).messages.filter((message) => message.role === "tool");
    expect(JSON.stringify(tools)).toContain("Name: Alan Turing");
  });
});
