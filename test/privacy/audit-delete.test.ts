/**
 * The content-free audit stream survives a session delete: after `repository.delete(id)` the
 * tombstone holds the session's audit events exactly as `auditEvents$` showed them before the
 * delete (runs, model calls, tool calls with their durations and usage), and still no content:
 * a marker planted in the prompt, the reply, the tool input and the tool result is in none of it.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { AuditEvent } from "../../src/store/events/audit.ts";
import { tombstoneStreamId, type SessionDeletedData } from "../../src/store/events/session-events.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { tempDir } from "../cli/cli-helpers.ts";

const MARKER = "AUDIT-MARKER-5e1d";

describe("the audit stream after a delete", { timeout: 60_000 }, () => {
  let server: OpenAIServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("arbor-audit-delete-");
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is kept, content-free, in the session's tombstone", async () => {
    const log = createSqliteEventLog({ path: join(dir, "arbor.db") });
    server.script(toolCallResponse([{ id: "call_1", name: "lookup", arguments: { key: MARKER } }]), textResponse(`The value of ${MARKER} is known.`));
    const harness = await createHarness({
      eventLog: log,
      cwd: dir,
      models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) },
      tools: [defineTool({ name: "lookup", description: "Look a key up", parameters: z.object({ key: z.string() }), execute: async ({ key }) => ({ content: [{ type: "text", text: `value of ${key}` }] }) })],
    });
    try {
      const outcome = await harness.prompt(`look up ${MARKER}`);
      expect(outcome.status).toBe("done");
      const id = harness.id;
      // The audit stream as a subscriber saw it (catch-up from the log), up to the run's end.
      const before = await firstValueFrom(harness.auditEvents$.pipe(takeWhile((event) => event.type !== "run.ended", true), toArray()));
      expect(before.map((event) => event.type)).toEqual(["run.started", "model.ended", "tool.started", "tool.ended", "model.ended", "run.ended"]);
      await harness.close();

      await harness.repository!.delete(id);
      expect(await log.readStream(`session-${id}`)).toEqual([]);
      const [tombstone] = await log.readStream(tombstoneStreamId(id));
      const data = tombstone.data as SessionDeletedData;
      expect(data.audit).toEqual(before);
      const toolEnded = data.audit!.find((event) => event.type === "tool.ended") as Extract<AuditEvent, { type: "tool.ended" }>;
      expect(toolEnded).toMatchObject({ toolCallId: "call_1", toolName: "lookup", outcome: "succeeded", isError: false });
      expect(JSON.stringify(tombstone)).not.toContain(MARKER);
    } finally {
      await harness.close();
      await log.close();
    }
  });
});
