/**
 * `harness.abort()` also aborts a manual compaction in progress; no entry is appended, and the log
 * holds the call's intent and its cancelled ending.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { CompactionError } from "../../src/core/errors.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { hangResponse, startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";

let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

describe("abort during compaction", { timeout: 60_000 }, () => {
  it("harness.abort() cancels a hanging summary call: no entry, only the call's intent and its cancelled ending", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-abort-compact-"));
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const harness = await createHarness({
      eventLogPath: join(dir, "arbor.db"),
      cwd: dir,
      models: { main: { model, contextWindow: 100_000 } },
      compaction: { keepRecentTokens: 50 },
    });
    try {
      const long = "word ".repeat(400);
      server.script(textResponse(`first ${long}`), textResponse(`second ${long}`), textResponse(`third ${long}`));
      for (const text of ["one", "two", "three"]) expect((await harness.prompt(`${text} ${long}`)).status).toBe("done");
      const before = harness.session.view.version;
      server.script(hangResponse("## Goal\npartial"));
      const compaction = harness.compact();
      await server.waitForRequests(4);
      harness.abort("stop");
      await expect(compaction).rejects.toSatisfy((error: unknown) => CompactionError.isInstance(error));
      const logged = (await harness.repository!.log.readStream(`session-${harness.session.id}`)).filter((event) => event.version > before);
      expect(logged.map((event) => [event.type, (event.data as { status?: string }).status])).toEqual([
        ["summary.started", undefined],
        ["summary.ended", "cancelled"],
      ]);
      expect(harness.session.view.getEntries().some((entry) => entry.type === "compaction")).toBe(false);
    } finally {
      await harness.close();
    }
  });
});
