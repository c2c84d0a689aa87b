/**
 * The inspector follows a run live: the agent, run and tool machine states (recorded from the
 * actors' XState inspection events, content redacted) change in the page while the run
 * proceeds. The tool is held at a gate so the mid-run states are observed, not guessed.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { launchChromium } from "./browser.ts";
import { ensureInspectorBuilt } from "./inspector-build.ts";
import { heldToolGate, readChunks, startService, TOKEN, userMessage, type Service } from "./service.ts";

describe("the inspector's live machine states", () => {
  let model: OpenAIServer | undefined;
  let service: Service | undefined;
  beforeAll(ensureInspectorBuilt, 120_000);
  afterEach(async () => {
    await service?.close();
    await model?.close();
  });

  it("shows the run streaming then in tools, the tool executing, then the run done and the agent idle; no content", async () => {
    model = await startOpenAIServer();
    model.script(turnResponse({ text: "Reading it.", toolCalls: [{ id: "call_live", name: "read", arguments: { path: "secret-plan.txt" } }] }), textResponse("The plan is read."));
    const { inTool, release, toolGate } = heldToolGate();
    service = await startService({
      modelUrl: model.url,
      toolGate,
    });
    const reply = service.transport().sendMessages({ chatId: "live", messages: [userMessage("read secret-plan.txt please")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }).then(readChunks);
    await inTool;

    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${service.url}/inspector#token=${TOKEN}`);
      await page.click('#sessions [data-session-id="live"]');
      // Mid-run, while the tool is held: the states of that moment, from the live stream.
      await page.waitForSelector('#machines .machine[data-machine="agent"][data-state="running"]');
      await page.waitForSelector('#machines .machine[data-machine="run"][data-state^="tools"][data-status="active"]');
      await page.waitForSelector('#machines .machine[data-machine="tool"][data-tool-call-id="call_live"][data-state="executing"][data-status="active"]');
      const tool = page.locator('#machines .machine[data-machine="tool"]');
      expect(await tool.locator(".kind").textContent()).toContain("read");
      // The tool row sits under its run's row.
      const runId = await page.getAttribute('#machines .machine[data-machine="run"]', "data-run-id");
      expect(await page.$$eval(`#machines .run-machines:has([data-run-id="${runId}"]) [data-machine="tool"]`, (rows) => rows.length)).toBe(1);

      release();
      const chunks = await reply;
      expect(chunks.at(-1)).toMatchObject({ type: "finish" });
      // The same page, without a reload: the run ended, the tool succeeded, the agent is idle again.
      await page.waitForSelector(`#machines .machine[data-machine="run"][data-run-id="${runId}"][data-state="done"][data-status="done"]`);
      await page.waitForSelector('#machines .machine[data-machine="tool"][data-state="succeeded"][data-status="done"]');
      await page.waitForSelector('#machines .machine[data-machine="agent"][data-state="idle"]');
      // The tree follows too: the tool result and the final answer joined it without a reload.
      await page.waitForSelector("#tree [data-entry-id][data-type=message] >> nth=3");
      expect(await page.$$eval("#tree [data-entry-id][data-type=message]", (items) => items.length)).toBe(4);
      const runPath = (await page.textContent(`#machines .machine[data-run-id="${runId}"] .path`))!.split(" → ");
      expect(runPath).toContain("streaming");
      expect(runPath.indexOf("streaming")).toBeLessThan(runPath.findIndex((state) => state.startsWith("tools")));
      expect(runPath.at(-1)).toBe("done");
      const toolPath = (await tool.locator(".path").textContent())!.split(" → ");
      expect(toolPath.indexOf("executing")).toBeGreaterThanOrEqual(0);
      expect(toolPath.indexOf("executing")).toBeLessThan(toolPath.indexOf("succeeded"));

      // Content is redacted: neither the prompt nor the tool's arguments or output reach the page or the records.
      const shown = (await page.textContent("#machines"))!;
      expect(shown).not.toContain("secret-plan");
      const records = JSON.stringify(service.machines.current("live"));
      expect(records).toContain("call_live");
      expect(records).not.toContain("secret-plan");
      expect(records).not.toContain("contents of");

      const dir = mkdtempSync(join(tmpdir(), "arbor-inspector-live-"));
      const path = process.env.ARBOR_INSPECTOR_LIVE_SCREENSHOT ?? join(dir, "inspector-live.png");
      await page.setViewportSize({ width: 1280, height: 640 });
      await page.screenshot({ path });
      expect(readFileSync(path).subarray(1, 4).toString()).toBe("PNG");
      rmSync(dir, { recursive: true, force: true });
    } finally {
      await browser.close();
    }
  }, 120_000);

  it("answers 404 on the machines route of another tenant's or an unknown session, and 401 without the token", async () => {
    model = await startOpenAIServer();
    service = await startService({ modelUrl: model.url });
    const get = (path: string, token?: string) => fetch(`${service!.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    expect((await get("/api/sessions/nope/machines", TOKEN)).status).toBe(404);
    expect((await get("/api/sessions/nope/machines")).status).toBe(401);
  });
});
