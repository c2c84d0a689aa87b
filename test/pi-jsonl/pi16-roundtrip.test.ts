/**
 * Round trips through pi 1.6 itself (`@earendil-works/pi-coding-agent` 1.6.0's SessionManager):
 * Arbor exports `--format pi-1`, pi 1.6 opens a copy of the file on Arbor's leaf with Arbor's
 * context, labels and name, pi appends to it through its own API every entry type it writes
 * (messages of each role, context_edits, usage, model and thinking changes, a compaction with its
 * system checkpoint, a branch with a summary, extension entries and messages, a label, a name),
 * and Arbor imports what pi wrote: pi's leaf and contexts, and the original leaf's context kept.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSessionContext, convertToLlm, migrateSessionEntries, parseSessionEntries, SessionManager } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { exportPiSession, exportPiSessionToFile, importPiSession, piExportWarnings } from "../../src/adapters/pi-jsonl/index.ts";
import type { SessionEntry } from "../../src/core/entries.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import type { SessionView } from "../../src/store/session-types.ts";
import { runArbor } from "../cli/cli-helpers.ts";
import { sharedPath } from "../shared-dir.ts";
import { json, piOracle } from "./pi-oracle.ts";
import { buildTree, ops1xArbitrary, toJsonl } from "./tree-arbitrary.ts";

const pi16 = piOracle({ parseSessionEntries, migrateSessionEntries, buildSessionContext, convertToLlm } as never);
const dir = mkdtempSync(join(tmpdir(), "arbor-pi16-rt-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const withoutSynthetic = (view: SessionView, leafId?: string | null) => view.buildContext(leafId === undefined ? {} : { leafId }).messages.filter((message) => !pi16.isSynthetic(message as never));

/** pi 1.6 opens `file` (a copy: pi may write to what it opens) and sees Arbor's session as Arbor does. */
function openInPi(view: SessionView, file: string, name: string): SessionManager {
  const copy = join(dir, `${name}-copy.jsonl`);
  copyFileSync(file, copy);
  const pi = SessionManager.open(copy, join(dir, `${name}-sessions`));
  expect(pi.getSessionId()).toBe(view.sessionId);
  expect(pi.getLeafId()).toBe(view.leafId);
  expect(pi.getEntries().map((entry) => entry.id).sort()).toEqual(view.getEntries().map((entry) => entry.id).sort());
  const context = pi.buildSessionContext();
  const arbor = view.buildContext();
  expect(json(withoutSynthetic(view))).toEqual(json(context.messages));
  expect(context.thinkingLevel).toBe(arbor.thinkingLevel);
  expect(json(context.model)).toEqual(json(arbor.model));
  // Labels and the name are read in file order; the warned-about case is a leaf that is an overridden label or session_info.
  const warnings = piExportWarnings(view);
  const overridden = warnings.some((warning) => /^The leaf .* a later (label|one) replaces/.test(warning));
  const leaf = view.getEntries().find((entry) => entry.id === view.leafId) as (SessionEntry & { targetId?: string; label?: string; name?: string }) | undefined;
  for (const entry of view.getEntries()) {
    const expected = overridden && leaf?.type === "label" && leaf.targetId === entry.id ? leaf.label : view.getLabel(entry.id);
    expect(pi.getLabel(entry.id)).toBe(expected);
  }
  expect(pi.getSessionName()).toBe(overridden && leaf?.type === "session_info" ? leaf.name?.trim() || undefined : view.name);
  return pi;
}

/** What pi 1.6 appends in an ordinary session, through its own API. */
function continueInPi(pi: SessionManager, round: number): void {
  const path = pi.getBranch();
  const userOnPath = path.filter((entry) => entry.type === "message" && entry.message.role === "user");
  pi.appendThinkingLevelChange("medium");
  pi.appendMessage({ role: "system", content: "", sections: { round: `round ${round}` }, timestamp: Date.now() } as never);
  pi.appendMessage({ role: "user", content: `continue ${round}`, timestamp: Date.now() });
  pi.appendMessage({
    role: "assistant",
    content: [{ type: "text", text: `done ${round}` }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: { input: 5, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 7, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: Date.now(),
  } as never);
  if (userOnPath.length > 0) pi.appendContextEdit(userOnPath[round % userOnPath.length].id, { content: `edited in pi ${round}` });
  pi.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", { input: 0, output: 0, cacheRead: 100, cacheWrite: 0, totalTokens: 100, cost: { input: 0, output: 0, cacheRead: 0.0003, cacheWrite: 0, total: 0.0003 } });
  if (round % 3 === 0) {
    const cut = pi.getBranch().filter((entry) => entry.type === "message" && entry.message.role === "user").at(-1)!;
    pi.appendCompaction(`compacted in pi ${round}`, cut.id, 1234);
    pi.appendMessage({ role: "user", content: `after compaction ${round}`, timestamp: Date.now() });
  }
  // The rest of what pi 1.6's SessionManager writes: a model change, extension state and message, a shell command, a label, a name.
  pi.appendModelChange("openai", "gpt-5");
  pi.appendCustomEntry("pi.virtual-model-state", { provider: "openai", modelId: "gpt-5", state: { round } });
  const note = pi.appendCustomMessageEntry("ext", [{ type: "text", text: `note ${round}` }], round % 2 === 0, { round });
  pi.appendMessage({ role: "bashExecution", command: "ls", output: "a\nb", exitCode: 0, cancelled: false, truncated: false, timestamp: Date.now() } as never);
  pi.appendContextEdit(note, round % 2 === 0 ? null : { content: `note ${round}, edited` });
  pi.appendLabelChange(pi.getBranch()[0].id, `pi ${round}`);
  pi.appendSessionInfo(`pi round ${round}`);
  if (round % 2 === 1 && path.length > 1) pi.branchWithSummary(path[0].id, `branch summary ${round}`);
}

/** Every entry type of pi 1.6's `SessionEntry` union. */
const PI16_ENTRY_TYPES = ["message", "thinking_level_change", "model_change", "usage", "compaction", "branch_summary", "custom", "custom_message", "context_edit", "label", "session_info"];

/** Arbor imports what pi wrote: pi's leaf, pi 1.6's context at every leaf, and `keptLeaf`'s context as before. */
async function importFromPi(pi: SessionManager, before: SessionView, keptLeaf: string | null): Promise<void> {
  const file = pi.getSessionFile()!;
  const { session } = await importPiSession(createSessionRepository({ log: createMemoryEventLog() }), file);
  expect(session.view.leafId).toBe(pi.getLeafId());
  expect(json(withoutSynthetic(session.view))).toEqual(json(pi.buildSessionContext().messages));
  pi16.compareEveryLeaf(session.view, pi16.entriesOf(readFileSync(file, "utf8")));
  // And once more out of Arbor: pi 1.6 parses the second export to the same contexts, its default leaf Arbor's.
  pi16.compareExport(session.view);
  if (keptLeaf !== null) expect(json(session.view.buildContext({ leafId: keptLeaf }))).toEqual(json(before.buildContext({ leafId: keptLeaf })));
  // Every line Arbor wrote comes back as it was (pi never rewrites a current-version file).
  const exported = new Set(exportPiSession(before).trim().split("\n").slice(1));
  const lines = readFileSync(file, "utf8").trim().split("\n").slice(1);
  expect(lines.filter((line) => exported.has(line))).toHaveLength(exported.size);
}

describe("round trip through pi 1.6", () => {
  it("Arbor → pi 1.6 → Arbor keeps the leaf and the context, on 60 generated pi 1.x sessions with Arbor's own entries added", async () => {
    let round = 0;
    let warned = 0;
    const written = new Set<string>();
    await fc.assert(
      fc.asyncProperty(ops1xArbitrary, fc.nat(1000), async (ops, leafPick) => {
        round += 1;
        const { entries, boundaries } = buildTree(ops, round);
        const source = join(dir, `gen-${round}.jsonl`);
        writeFileSync(source, toJsonl(entries, `019b7a00-0000-7000-8000-${String(round).padStart(12, "0")}`));
        const { session } = await importPiSession(createSessionRepository({ log: createMemoryEventLog() }), source);
        if (boundaries.length > 0) await session.moveLeaf(boundaries[leafPick % boundaries.length]);
        // Arbor's own entries: a tool set change (pi ignores it), a label and a name, an assistant whose usage Arbor did not get.
        await session.appendEntry({ type: "active_tools_change", toolNames: ["read"] } as never);
        if (entries.length > 0) await session.appendEntry({ type: "label", targetId: entries[leafPick % entries.length].id, label: `arbor ${round}` } as never);
        await session.appendEntry({ type: "session_info", name: `round ${round}` } as never);
        await session.appendEntry({
          type: "message",
          message: { role: "user", content: `arbor asks ${round}`, timestamp: 1_800_000_000_000 + round },
        } as never);
        await session.appendEntry({
          type: "message",
          message: {
            role: "assistant",
            content: [{ type: "text", text: "arbor answers" }],
            api: "openai-chat",
            provider: "openai",
            model: "gpt-5",
            usage: { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null },
            stopReason: "stop",
            timestamp: 1_800_000_000_001 + round,
          },
        } as never);
        // Sometimes the leaf goes back into the tree: it is written last and pi opens on it.
        if (round % 2 === 0 && boundaries.length > 0) await session.moveLeaf(boundaries[(leafPick + 7) % boundaries.length]);
        const file = join(dir, `gen-${round}.pi1.jsonl`);
        await exportPiSessionToFile(session, file, { format: "pi-1" });
        const warnings = piExportWarnings(session);
        // Arbor's tool set change is written and named as ignored by pi; unknown kinds too.
        const toolChanges = entries.filter((entry) => entry.type === "active_tools_change").length + 1;
        expect(warnings).toContainEqual(expect.stringMatching(new RegExp(`^${toolChanges} active_tools_change entr(y is|ies are) written, but pi has no such entry and ignores`)));
        if (entries.some((entry) => entry.type === "future_kind")) expect(warnings).toContainEqual(expect.stringMatching(/of kind "future_kind", unknown to Arbor, (is|are) written as imported; pi ignores/));
        if (warnings.some((warning) => warning.startsWith("The leaf"))) warned += 1;
        const pi = openInPi(session.view, file, `gen-${round}`);
        const keptLeaf = session.view.leafId;
        continueInPi(pi, round);
        for (const entry of pi.getEntries()) written.add(entry.type);
        await importFromPi(pi, session.view, keptLeaf);
      }),
      { numRuns: 60, seed: 20261209 },
    );
    expect(warned).toBeLessThan(10);
    // pi 1.6 wrote every entry type it has, and Arbor imported each.
    for (const type of PI16_ENTRY_TYPES) expect(written.has(type), type).toBe(true);
  });

  it("a null leaf is a warning: pi opens the file on its last entry", async () => {
    const { session } = await importPiSession(createSessionRepository({ log: createMemoryEventLog() }), sharedPath("oracle/sample-session.jsonl"));
    await session.moveLeaf(null);
    expect(piExportWarnings(session)).toEqual([expect.stringMatching(/leaf is before its first entry.*opens the file on its last entry/)]);
    await session.moveLeaf(session.view.getEntries().at(-1)!.id);
    expect(piExportWarnings(session)).toEqual([]);
    await session.moveLeaf(null);
    const file = join(dir, "null-leaf.jsonl");
    await exportPiSessionToFile(session, file);
    const pi = SessionManager.open(file, join(dir, "null-leaf-sessions"));
    expect(pi.getLeafId()).toBe((session.view.getEntries().at(-1) as SessionEntry).id);
    expect(() => exportPiSession(session, { format: "pi-0" as never })).toThrow(/Unknown pi export format "pi-0": Arbor writes pi-1/);
  });

  it("arbor export --format pi-1 writes a file pi 1.6 opens on the same leaf; an unknown format is refused and writes nothing", { timeout: 90_000 }, async () => {
    const db = join(dir, "cli.db");
    const sample = sharedPath("oracle/sample-session.jsonl");
    const imported = await runArbor(["--db", db, "import", sample]);
    expect(imported.code, imported.stderr).toBe(0);
    const id = imported.stdout.trim();
    const out = join(dir, "cli-export.jsonl");
    const exported = await runArbor(["--db", db, "export", id, "--format", "pi-1", "-o", out]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/\(pi-1\)/);
    const { session } = await importPiSession(createSessionRepository({ log: createMemoryEventLog() }), sample);
    const pi = SessionManager.open(out, join(dir, "cli-sessions"));
    expect(pi.getLeafId()).toBe("i0000001");
    expect(json(pi.buildSessionContext().messages)).toEqual(json(withoutSynthetic(session.view)));
    const refused = await runArbor(["--db", db, "export", id, "--format", "pi-0", "-o", join(dir, "never.jsonl")]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--format pi-0: unknown format; arbor export writes pi-1/);
    expect(existsSync(join(dir, "never.jsonl"))).toBe(false);
  });
});
