/**
 * Failover seen from a browser: the `useChat` page (`chat-page/`, `@ai-sdk/react` 4, `ai` 7) in
 * Chromium, behind a round-robin loopback proxy in front of two real `arbor serve` processes on
 * one PostgreSQL schema (and on one SQLite file), and the loopback model server. The page sends a prompt; the run reads a
 * file, then streams its answer; the model's second reply stops halfway (it never finishes: the
 * kill lands mid-answer), and the replica that owns the run is killed with SIGKILL. The page's
 * stream breaks; it resumes it (`resumeStream()`, `GET /api/chat/:id/stream`), which only the
 * survivor can serve; the survivor continues the run from the log (`arbor serve`'s default
 * durability `continue`), and the page ends with the one answer, not half of it followed by all
 * of it. The log shows one takeover (`run.resumed`, naming both processes), the run ended `done`,
 * every call paired and nothing twice.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hangResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { expectRunIntact } from "../fleet/fixtures/run-checks.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";
import { launchChromium } from "./browser.ts";
import { REPLICA_TOKEN, startFleet, waitForSessionEvent, type Backend, type Fleet } from "./replicas.ts";
import { startRoundRobinProxy, type RoundRobinProxy } from "./round-robin-proxy.ts";

const ANSWER = "The notes say the deploy is on Tuesday; this answer was finished by the replica that survived.";
const HALF = ANSWER.slice(0, 40);
const schema = useTestSchemas("failover");

const backends: [string, () => Backend][] = [
  ["PostgreSQL", () => ({ kind: "pg", schema: schema() })],
  ["SQLite", () => ({ kind: "sqlite" })],
];

describe.each(backends)("useChat in Chromium behind a round-robin proxy, the owning replica killed mid-answer (%s)", (_name, backend) => {
  let outDir: string;
  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "arbor-failover-page-"));
    await build({ configFile: false, logLevel: "error", root: resolve(import.meta.dirname, "chat-page"), build: { outDir, emptyOutDir: true, target: "es2022", chunkSizeWarningLimit: 10_000 } });
  }, 120_000);

  let model: OpenAIServer;
  let fleet: Fleet;
  let proxy: RoundRobinProxy;
  afterAll(async () => {
    if (process.env.DEBUG_REPLICAS) for (const replica of fleet?.replicas ?? []) console.log(replica.url, replica.stderr());
    await proxy?.close();
    await fleet?.close();
    await model?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  it("the page's resumed stream completes the same answer, served by the survivor", async () => {
    model = await startOpenAIServer();
    model.script(
      toolCallResponse([{ id: "call_notes", name: "read", arguments: { path: "notes.txt" } }]),
      hangResponse(HALF),
      textResponse(ANSWER, { chunkSize: 8, delayMs: 15 }),
    );
    fleet = await startFleet(backend(), model.url);
    writeFileSync(join(fleet.dir, "notes.txt"), "deploy: Tuesday\n");
    proxy = await startRoundRobinProxy(fleet.replicas.map((replica) => replica.url), outDir);

    const id = "failover-1";
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${proxy.url}/?chat=${id}&token=${REPLICA_TOKEN}&reconnect=1`);
      await page.waitForFunction(`document.querySelector("#status")?.textContent === "ready"`);
      await page.fill("#prompt", "what do the notes say?");
      await page.click("#send");

      // The answer is streaming on the replica that owns the run, and the page shows some of it.
      const started = await waitForSessionEvent(fleet.log, id, (event) => event.type === "run.started");
      await waitForSessionEvent(fleet.log, id, (event) => event.type === "message.delta" && (event.data as { kind: string }).kind === "text");
      await page.waitForFunction(`[...document.querySelectorAll('[data-role="assistant"] .text')].some((p) => p.textContent.length > 0)`);
      const ownerPid = (started.metadata.owner as { pid: number }).pid;
      const owner = fleet.replicas.find((replica) => replica.child.pid === ownerPid)!;
      const survivor = fleet.replicas.find((replica) => replica !== owner)!;
      expect(owner).toBeDefined();
      owner.child.kill("SIGKILL");
      expect((await owner.exited).signal).toBe("SIGKILL");

      // The page resumes; only the survivor answers, and it finishes the answer.
      await page.waitForFunction(`[...document.querySelectorAll('[data-role="assistant"] .text')].some((p) => p.textContent === ${JSON.stringify(ANSWER)})`);
      const ended = await waitForSessionEvent(fleet.log, id, (event) => event.type === "run.ended");
      await page.waitForFunction(`document.querySelector("#status")?.textContent === "ready"`);
      const messages = await page.$$eval(".message", (items) =>
        items.map((item) => ({
          role: item.getAttribute("data-role"),
          texts: [...item.querySelectorAll(".text")].map((p) => p.textContent),
          tools: [...item.querySelectorAll(".tool")].map((p) => p.getAttribute("data-state")),
        })),
      );
      expect(messages).toEqual([
        { role: "user", texts: ["what do the notes say?"], tools: [] },
        { role: "assistant", texts: [ANSWER], tools: ["output-available"] },
      ]);

      // The log: one takeover by the survivor, the run done, every call paired, nothing twice.
      expect(ended.data).toMatchObject({ status: "done" });
      const events = await fleet.log.readStream(`session-${id}`);
      const resumed = events.filter((event) => event.type === "run.resumed");
      expect(resumed).toHaveLength(1);
      expect(resumed[0].data).toMatchObject({ runId: (started.data as { runId: string }).runId, previousOwner: { pid: owner.child.pid }, reason: expect.any(String) });
      expect((resumed[0].metadata.owner as { pid: number }).pid).toBe(survivor.child.pid);
      expectRunIntact(events);
      expect(model.requests).toHaveLength(3);

      // The page's resumed stream was served by the survivor.
      const resumes = proxy.hits.filter((hit) => hit.method === "GET" && hit.path === `/api/chat/${id}/stream` && hit.status === 200);
      expect(resumes.length).toBeGreaterThan(0);
      expect(resumes.at(-1)!.upstream).toBe(survivor.url);
    } finally {
      await browser.close();
    }
  }, 180_000);
});
