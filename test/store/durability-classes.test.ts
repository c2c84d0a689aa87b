/**
 * Durability classes (docs/event-log.md): on a file log at FULL, a commit of process-crash-safe
 * events only (`message.delta`) writes the WAL without syncing it; a commit holding any durable
 * event syncs it, as every commit did before. Observed from outside with strace: the fsync /
 * fdatasync calls on the `-wal` file while a child appends each kind of batch.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { createDefaultEventRegistry, createEventRegistry } from "../../src/store/events/index.ts";
import { EVENT_CATALOGUE } from "../../src/store/events/catalogue.ts";
import { ROOT } from "./child-process.ts";
import { z } from "zod";

const dir = mkdtempSync(join(tmpdir(), "arbor-durability-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** WAL syncs per phase of the child (`fixtures/durability-child.ts`) under strace. */
function walSyncsPerPhase(synchronous: string): Record<string, number> {
  const db = join(dir, `${synchronous}.db`);
  const trace = join(dir, `${synchronous}.trace`);
  const result = spawnSync(
    "/usr/bin/strace",
    ["-f", "-y", "-qq", "-e", "trace=fsync,fdatasync,statx,newfstatat,stat,lstat", "-o", trace, process.execPath, "--import", "tsx", "test/store/fixtures/durability-child.ts", db, synchronous],
    { cwd: ROOT, encoding: "utf8" },
  );
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  const counts: Record<string, number> = {};
  let phase = "open";
  for (const line of readFileSync(trace, "utf8").split("\n")) {
    const marker = /\/arbor-phase-([a-z]+)/.exec(line);
    if (marker) phase = marker[1];
    else if (/^\d+\s+f(data)?sync\(\d+<[^>]*-wal>/.test(line)) counts[phase] = (counts[phase] ?? 0) + 1;
  }
  return counts;
}

describe("durability classes", () => {
  it("are part of the catalogue: streaming progress is process-crash-safe, everything else durable", () => {
    const registry = createDefaultEventRegistry();
    const relaxed = Object.keys(EVENT_CATALOGUE).filter((type) => registry.durability?.(type) === "process-crash-safe");
    expect(relaxed.sort()).toEqual(["message.delta", "message.started"]);
    const documented = /- `process-crash-safe`: (.*)\./.exec(readFileSync(join(ROOT, "docs/events.md"), "utf8"))?.[1];
    expect(documented?.split(", ").map((name) => name.replaceAll("`", "")).sort()).toEqual(relaxed.sort());
    for (const type of ["entry.appended", "tool.started", "tool.ended", "run.ended", "approval.ended", "control.requested", "task.claimed", "agent.ended"]) {
      expect(registry.durability?.(type)).toBe("durable");
    }
  });

  it("are declared per registered type, durable by default, and checked", () => {
    const registry = createEventRegistry()
      .register("progress.ticked", 1, z.object({}), { durability: "process-crash-safe" })
      .register("invoice.sent", 1, z.object({}));
    expect(registry.durability?.("progress.ticked")).toBe("process-crash-safe");
    expect(registry.durability?.("invoice.sent")).toBe("durable");
    expect(() => registry.register("x.y", 1, z.object({}), { durability: "sometimes" as never })).toThrow(/durability must be "durable" or "process-crash-safe", got "sometimes"/);
  });

  it("at FULL, only commits holding a durable event sync the WAL", () => {
    const counts = walSyncsPerPhase("FULL");
    // 20 commits, none synced; SQLite syncs a new WAL header when it restarts the WAL (after a checkpoint).
    expect(counts.relaxed ?? 0).toBeLessThanOrEqual(2);
    expect(counts.durable).toBeGreaterThanOrEqual(20);
    expect(counts.mixed).toBeGreaterThanOrEqual(20);
  });

  it("at NORMAL, no commit syncs the WAL, as before", () => {
    const counts = walSyncsPerPhase("NORMAL");
    expect((counts.relaxed ?? 0) + (counts.durable ?? 0) + (counts.mixed ?? 0)).toBe(0);
  });
});
