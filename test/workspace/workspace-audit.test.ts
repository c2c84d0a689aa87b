/**
 * Content-free where the audit asks for it, with workspace checkpoints and session memory on: a
 * real harness (SQLite file, telemetry through the real OpenTelemetry SDK without
 * `captureContent`) writes a file, runs bash, writes, reads and searches memory through the
 * model's tools and the library, and restores the workspace. A marker is planted in a file's
 * path and contents, a bash command and its output, a memory key, a memory value and a search
 * query. The log holds every marker (so the check can fail); the audit stream
 * (`auditEvents$`, the tombstone's copy) and the spans hold none.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createCodingTools } from "../../src/adapters/tools/index.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { AuditEvent } from "../../src/store/events/audit.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";

const MARK = {
  path: "MARKPATH7731",
  fileText: "MARKFILETEXT7731",
  command: "MARKCOMMAND7731",
  bashText: "MARKBASHTEXT7731",
  key: "MARKKEY7731",
  value: "MARKVALUE7731",
  query: "MARKQUERY7731",
  libraryValue: "MARKLIBRARY7731",
};

describe("workspace and memory under the content-free audit", () => {
  it("the log holds the files' and memory's content; the audit stream and the spans never do", async () => {
    const base = mkdtempSync(join(tmpdir(), "arbor-ws-audit-"));
    const root = join(base, "repo");
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const log = createSqliteEventLog({ path: join(base, "arbor.db") });
    const model = scriptedModel([
      { toolCalls: [{ id: "c_write", name: "write", arguments: { path: `${MARK.path}/f.txt`, content: `${MARK.fileText}\n` } }] },
      { toolCalls: [{ id: "c_bash", name: "bash", arguments: { command: `echo ${MARK.command} > /dev/null; printf '%s' ${MARK.bashText} > b.txt` } }] },
      { toolCalls: [{ id: "c_mem", name: "memory_write", arguments: { key: MARK.key, value: { note: `${MARK.value} ${MARK.query}` } } }] },
      { toolCalls: [{ id: "c_search", name: "memory_search", arguments: { query: MARK.query } }] },
      { text: "done" },
    ]);
    mkdirSync(root);
    const harness = await createHarness({
      eventLog: log,
      cwd: root,
      models: { main: model },
      tools: createCodingTools(createExecutionEnv({ root })),
      workspace: { root },
      memory: { tools: true },
      telemetry: { tracerProvider },
    });
    const audit: Promise<AuditEvent[]> = firstValueFrom(harness.auditEvents$.pipe(takeWhile((event) => event.type !== "run.ended", true), toArray()));
    try {
      expect((await harness.prompt("work")).status).toBe("done");
      const audited = await audit;
      await harness.memory!.write("library.note", { text: MARK.libraryValue });
      await harness.workspace!.restore(null);

      // The log holds each marker (the checks below could fail).
      const events = await log.readStream(`session-${harness.session.id}`);
      const logged = JSON.stringify(events);
      for (const marker of [MARK.path, MARK.command, MARK.bashText, MARK.key, MARK.value, MARK.query, MARK.libraryValue]) expect(logged, marker).toContain(marker);
      const blobs = await Promise.all((await log.workspaceBlobs!.list("default")).map((row) => log.workspaceBlobs!.get("default", row.hash)));
      expect(blobs.map((blob) => blob.toString("utf8")).join("\n")).toContain(MARK.fileText);
      expect(events.some((event) => event.type === "workspace.checkpointed")).toBe(true);
      expect(events.some((event) => event.type === "memory.written")).toBe(true);

      // The audit stream: the run, its model calls and tool calls; none of the content.
      expect(audited.filter((event) => event.type === "tool.ended").map((event) => (event as { toolName: string }).toolName)).toEqual(["write", "bash", "memory_write", "memory_search"]);
      const auditText = JSON.stringify(audited);
      for (const marker of Object.values(MARK)) expect(auditText, marker).not.toContain(marker);

      // Spans without captureContent: none of the content either.
      const spans = exporter.getFinishedSpans();
      expect(spans.length).toBeGreaterThan(0);
      const spanText = JSON.stringify(spans.map((span) => [span.name, span.status, span.attributes, span.events.map((event) => [event.name, event.attributes])]));
      for (const marker of Object.values(MARK)) expect(spanText, marker).not.toContain(marker);

      // The tombstone keeps the audit stream only.
      const sessionId = harness.session.id;
      await harness.close();
      await harness.repository!.delete(sessionId);
      const tombstone = JSON.stringify(await log.readStream(`tombstone-${sessionId}`));
      expect(tombstone).toContain("tool.ended");
      for (const marker of Object.values(MARK)) expect(tombstone, marker).not.toContain(marker);
    } finally {
      await harness.close();
      await log.close();
      await tracerProvider.shutdown();
    }
  });
});
