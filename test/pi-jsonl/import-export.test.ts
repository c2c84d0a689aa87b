import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSessionContext, migrateSessionEntries, parseSessionEntries } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { exportPiSession, exportPiSessionToFile, importPiSession } from "../../src/adapters/pi-jsonl/index.ts";
import { ArborError, SessionImportError } from "../../src/core/errors.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-pi-io-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = '{"type":"session","version":3,"id":"0199-header","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}';
const U1 = '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}';
const A1 =
  '{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"stop","timestamp":2}}';

let fileCounter = 0;
function file(text: string): { path: string; bytes: Buffer; mtimeMs: number } {
  const path = join(dir, `f${fileCounter++}.jsonl`);
  writeFileSync(path, text);
  return { path, bytes: readFileSync(path), mtimeMs: statSync(path).mtimeMs };
}

function expectUntouched(source: { path: string; bytes: Buffer; mtimeMs: number }) {
  expect(readFileSync(source.path).equals(source.bytes)).toBe(true);
  expect(statSync(source.path).mtimeMs).toBe(source.mtimeMs);
}

const repo = () => createSessionRepository({ log: createMemoryEventLog() });

describe("pi JSONL import: bad input", () => {
  it("skips blank and unparseable lines with diagnostics naming the line, and never writes the file", async () => {
    const source = file([HEADER, "", U1, "{not json", "   ", A1, "[1,2]"].join("\n") + "\n");
    const { session, diagnostics } = await importPiSession(repo(), source.path);
    expect(diagnostics.map((diagnostic) => [diagnostic.kind, diagnostic.line])).toEqual([
      ["blank_line", 2],
      ["unparseable_line", 4],
      ["blank_line", 5],
      ["not_an_object", 7],
    ]);
    expect(diagnostics[1].message).toMatch(/Line 4 is not valid JSON/);
    expect(session.view.getEntries().map((entry) => entry.id)).toEqual(["u1", "a1"]);
    expectUntouched(source);
  });

  it.each([
    ["a corrupt header line", `{"type":"session","id":\n${U1}\n`, /corrupt header: line 1/],
    ["a missing header", `${U1}\n${A1}\n`, /no pi session header: line 1/],
    ["a header without an id", `{"type":"session","version":3}\n${U1}\n`, /no pi session header/],
    ["an empty file", "", /is empty/],
    ["an unsupported version", `{"type":"session","version":4,"id":"x"}\n${U1}\n`, /Unsupported pi session version 4/],
    // A line nested 200,000 deep: a clear error naming the file and line, not a stack overflow.
    ["a line nested 200,000 deep", `{"type":"session","version":3,"id":"x"}\n${U1}\n{"type":"custom","customType":"x","data":${"[".repeat(200_000)}${"]".repeat(200_000)}}\n`, /f\d+\.jsonl, line 3: the JSON nests deeper than 1000 levels/],
  ])("refuses %s with SessionImportError, creates nothing and leaves the file as it was", async (_name, text, message) => {
    const source = file(text);
    const repository = repo();
    const attempt = importPiSession(repository, source.path);
    await expect(attempt).rejects.toSatisfy(SessionImportError.isInstance);
    await expect(attempt).rejects.toThrow(message);
    expect(await repository.list()).toEqual([]);
    expectUntouched(source);
  });

  it("pi, by contrast, truncates a file with a corrupt header when it opens it (why we never open through pi)", async () => {
    const { SessionManager } = await import("@mariozechner/pi-coding-agent");
    const source = file(`{"type":"session","id":\n${U1}\n`);
    const copy = join(dir, "pi-copy.jsonl");
    copyFileSync(source.path, copy);
    SessionManager.open(copy, dir);
    expect(readFileSync(copy, "utf8")).not.toContain('"id":"u1"');
  });

  it("refuses a file with an invalid entry by default, and imports the rest with invalidEntries: skip", async () => {
    const bad = '{"type":"message","id":"b1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user"}}';
    const source = file([HEADER, U1, bad, A1].join("\n"));
    const repository = repo();
    await expect(importPiSession(repository, source.path)).rejects.toThrow(/Line 3 \(type "message"\): message/);
    expect(await repository.list()).toEqual([]);
    const { session, diagnostics } = await importPiSession(repository, source.path, { invalidEntries: "skip" });
    expect(diagnostics).toEqual([expect.objectContaining({ kind: "invalid_entry", line: 3 })]);
    expect(session.view.getEntries().map((entry) => entry.id)).toEqual(["u1", "a1"]);
    expectUntouched(source);
  });

  it("counts the lines that are not JSON in the refusal, beside the invalid entries", async () => {
    const bad = '{"type":"message","id":"b1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user"}}';
    const source = file([HEADER, U1, bad, "{not json", A1].join("\n"));
    await expect(importPiSession(repo(), source.path)).rejects.toThrow(/has 1 invalid entry \(and 1 line that is not JSON, which an import skips as pi does\); nothing was imported/);
    const { diagnostics } = await importPiSession(repo(), source.path, { invalidEntries: "skip" });
    expect(diagnostics.map((diagnostic) => diagnostic.kind).sort()).toEqual(["invalid_entry", "unparseable_line"]);
  });

  it("links the children of a skipped entry to its parent, so the conversation after it stays on the path", async () => {
    // A user message without content in the middle of the conversation: what follows it was its child.
    const bad = '{"type":"message","id":"b1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user"}}';
    const bad2 = '{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user"}}';
    const u2 = U1.replace('"id":"u1","parentId":null', '"id":"u2","parentId":"b2"').replace('"content":"hi"', '"content":"again"');
    const a2 = A1.replace('"id":"a1","parentId":"u1"', '"id":"a2","parentId":"u2"');
    const source = file([HEADER, U1, A1, bad, bad2, u2, a2].join("\n"));
    const { session, diagnostics } = await importPiSession(repo(), source.path, { invalidEntries: "skip" });
    expect(session.view.getEntries().map((entry) => [entry.id, entry.parentId])).toEqual([["u1", null], ["a1", "u1"], ["u2", "a1"], ["a2", "u2"]]);
    expect(session.view.buildContext().messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(diagnostics.map((diagnostic) => [diagnostic.kind, diagnostic.line])).toEqual([["invalid_entry", 4], ["invalid_entry", 5], ["relinked_entry", 6]]);
    expect(diagnostics[2].message).toMatch(/Line 6: entry u2's parent b2 was skipped \(invalid\); it now follows a1/);
    expectUntouched(source);
  });

  it("keeps unknown entry types verbatim, out of the context, and round-trips them through export", async () => {
    const odd = '{"type":"future_kind","id":"f1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","payload":{"deep":[1,{"x":null}]}}';
    const a2 = A1.replace('"id":"a1","parentId":"u1"', '"id":"a2","parentId":"f1"');
    const source = file([HEADER, U1, odd, a2].join("\n") + "\n");
    const { session } = await importPiSession(repo(), source.path);
    expect(session.view.getEntry("f1")).toEqual(JSON.parse(odd));
    const context = session.view.buildContext();
    expect(context.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(context.diagnostics.map((diagnostic) => diagnostic.kind)).toEqual(["unknown_entry"]);
    const exported = exportPiSession(session).trim().split("\n");
    expect(exported.slice(1)).toEqual([U1, odd, a2]);
  });

  it("migrates v2 hookMessage to custom and records where the session came from", async () => {
    const hook = '{"type":"message","id":"h1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"hookMessage","customType":"x","content":"note","display":true,"timestamp":3}}';
    const text = [HEADER.replace('"version":3', '"version":2'), U1, hook].join("\n");
    const source = file(text);
    const { session, fromVersion } = await importPiSession(repo(), source.path);
    expect(fromVersion).toBe(2);
    expect(session.view.info.source).toEqual({ kind: "pi-jsonl", path: source.path, version: 2, originalId: "0199-header" });
    const piEntries = parseSessionEntries(text);
    migrateSessionEntries(piEntries);
    const pi = buildSessionContext(piEntries.filter((entry) => entry.type !== "session") as never);
    expect(session.view.buildContext().messages).toEqual(pi.messages);
    expect(session.view.buildContext().messages[1].role).toBe("custom");
    expectUntouched(source);
  });

  it("migrates v1 compaction firstKeptEntryIndex to the id of that entry, as pi does", async () => {
    const v1 = [
      '{"type":"session","id":"v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
      '{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}',
      '{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"two","timestamp":2}}',
      '{"type":"compaction","timestamp":"2026-01-01T00:00:03.000Z","summary":"S","firstKeptEntryIndex":2,"tokensBefore":9}',
      '{"type":"message","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"three","timestamp":4}}',
    ].join("\n");
    const { session } = await importPiSession(repo(), file(v1).path);
    const entries = session.view.getEntries();
    expect(entries[2]).toMatchObject({ type: "compaction", firstKeptEntryId: entries[1].id });
    expect(entries[2]).not.toHaveProperty("firstKeptEntryIndex");
    const piEntries = parseSessionEntries(v1);
    migrateSessionEntries(piEntries);
    const pi = buildSessionContext(piEntries.filter((entry) => entry.type !== "session") as never);
    expect(session.view.buildContext().messages).toEqual(pi.messages);
  });

  it("gives the earlier entries of a repeated id fresh ids with a diagnostic; the last keeps it and its children follow it, as in pi", async () => {
    const second = A1.replace('"id":"a1"', '"id":"a1"').replace(/"text":"[^"]*"/, '"text":"second"');
    const child = U1.replace('"id":"u1","parentId":null', '"id":"c1","parentId":"a1"').replace('"content":"hi"', '"content":"child"');
    const text = [HEADER, U1, A1, second, child].join("\n") + "\n";
    const source = file(text);
    const { session, diagnostics } = await importPiSession(repo(), source.path);
    expect(diagnostics).toEqual([expect.objectContaining({ kind: "duplicate_id", line: 3, message: expect.stringContaining("is used again on line 4") })]);
    expect(new Set(session.view.getEntries().map((entry) => entry.id)).size).toBe(4);
    const piEntries = parseSessionEntries(text);
    migrateSessionEntries(piEntries);
    const pi = buildSessionContext(piEntries.filter((entry) => entry.type !== "session") as never);
    expect(session.view.buildContext().messages).toEqual(pi.messages);
    expect(JSON.stringify(session.view.buildContext().messages)).toContain("second");
  });

  it("relinks past a cycle of skipped entries, and past a skipped parent later in the file, with a diagnostic each", async () => {
    const skipped = (id: string, parentId: string) => `{"type":"message","id":"${id}","parentId":"${parentId}","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user"}}`;
    const kept = (id: string, parentId: string) => U1.replace('"id":"u1","parentId":null', `"id":"${id}","parentId":"${parentId}"`);
    // c1 follows x1, which follows x2, which follows x1 (a cycle of skipped entries); c2 follows x3, a skipped entry after it whose parent is u1;
    // x4 names itself as parent.
    const source = file([HEADER, U1, skipped("x1", "x2"), skipped("x2", "x1"), kept("c1", "x1"), kept("c2", "x3"), skipped("x3", "u1"), skipped("x4", "x4"), kept("c3", "x4")].join("\n"));
    const { session, diagnostics } = await importPiSession(repo(), source.path, { invalidEntries: "skip" });
    expect(session.view.getEntries().map((entry) => [entry.id, entry.parentId])).toEqual([["u1", null], ["c1", null], ["c2", "u1"], ["c3", null]]);
    expect(diagnostics.filter((diagnostic) => diagnostic.kind === "relinked_entry").map((diagnostic) => diagnostic.line)).toEqual([5, 6, 9]);
    expect(session.view.getEntries().every((entry) => entry.parentId === null || session.view.getEntry(entry.parentId) !== undefined)).toBe(true);
  });

  it("reports an unreadable file as SessionImportError", async () => {
    await expect(importPiSession(repo(), join(dir, "does-not-exist.jsonl"))).rejects.toSatisfy(SessionImportError.isInstance);
  });
});

describe("pi JSONL export to a file", () => {
  it("refuses to overwrite an existing file unless told, and replaces it whole when told", async () => {
    const { session } = await importPiSession(repo(), file([HEADER, U1, A1].join("\n")).path);
    const target = file("precious user data\n");
    const attempt = exportPiSessionToFile(session, target.path);
    await expect(attempt).rejects.toSatisfy((error: unknown) => ArborError.isInstance(error) && error.code === "FILE_EXISTS");
    expectUntouched(target);
    await exportPiSessionToFile(session, target.path, { overwrite: true });
    expect(readFileSync(target.path, "utf8")).toBe(exportPiSession(session));
    const fresh = join(dir, "fresh.jsonl");
    await exportPiSessionToFile(session, fresh);
    // pi opens it (SessionManager on a copy) on the same leaf.
    const { SessionManager } = await import("@mariozechner/pi-coding-agent");
    const copy = join(dir, "fresh-copy.jsonl");
    copyFileSync(fresh, copy);
    const manager = SessionManager.open(copy, dir);
    expect(manager.getLeafId()).toBe(session.view.leafId);
    expect(manager.buildSessionContext().messages).toEqual(session.view.buildContext().messages);
  });
});
