/**
 * stored-bytes (goal P6): bytes Arbor stores per turn once a run has ended, against pi's JSONL
 * of the same turns (`exportPiSession` of the same session, what pi writes for them).
 *
 * Arbor: `createAgent` on a fresh SQLite file (the CLI's defaults: FULL, WAL), TURNS prompts, each
 * one tool turn and a final answer: the model streams the first reply's text (TEXT_DELTAS deltas
 * of ~5 characters, one per tick, as a network stream does), a tool call, then the final text
 * (the same number of deltas). Each prompt's run has ended before the next. Measured after a
 * `wal_checkpoint(TRUNCATE)`: the pages in use (`page_count - freelist_count`) × page size, i.e.
 * the file as it stays (indexes, run and message events, deltas), per turn. Three retentions:
 * `endedMessageDeltas: "delete"` (the CLI's and the harness's default, `--retention
 * delete-deltas`: a kept message's delta rows are deleted when it ends), `keep` (the library
 * logs' default: every delta stays) and `"drop"` (`drop-deltas`: their text is emptied, the rows
 * stay). Baseline: the JSONL file's bytes per turn. Also printed: the bytes per turn by table and
 * index (`dbstat`), and the growth per turn from TURNS to 2 × TURNS turns (without the file's
 * fixed pages: every table and index takes a page or more however short the session).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { exportPiSession } from "../src/adapters/pi-jsonl/export.ts";
import { defineTool } from "../src/core/tools.ts";
import type { AssistantMessage } from "../src/core/messages.ts";
import type { ModelClient, ModelStreamEvent } from "../src/core/model-stream.ts";
import { createAgent } from "../src/machines/agent.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { printGoal } from "./goal.ts";

const TURNS = 20;
const TEXT_DELTAS = 60;

const lookup = defineTool({
  name: "lookup",
  description: "looks a word up",
  parameters: z.object({ word: z.string() }),
  async execute({ word }) {
    return { content: [{ type: "text", text: `${word}: ${"a definition of the word, as a tool would return it. ".repeat(8)}` }] };
  },
});

/** A model that, per prompt, streams a text and a tool call, then (after the result) a final text. */
function turnModel(): ModelClient {
  let call = 0;
  return {
    provider: "mock",
    modelId: "mock-model",
    api: "mock",
    async *stream(): AsyncGenerator<ModelStreamEvent> {
      const withTool = call % 2 === 0;
      call += 1;
      const block = { type: "text" as const, text: "" };
      const partial: AssistantMessage = {
        role: "assistant",
        content: [block],
        api: "mock",
        provider: "mock",
        model: "mock-model",
        usage: { input: 100, output: TEXT_DELTAS, cacheRead: 0, cacheWrite: 0, totalTokens: 100 + TEXT_DELTAS },
        stopReason: withTool ? "toolUse" : "stop",
        timestamp: Date.now(),
      };
      yield { type: "start", partial };
      yield { type: "text-start", contentIndex: 0, partial };
      for (let index = 0; index < TEXT_DELTAS; index++) {
        block.text += "word ";
        yield { type: "text-delta", contentIndex: 0, delta: "word ", partial };
        await new Promise((resolve) => setImmediate(resolve));
      }
      yield { type: "text-end", contentIndex: 0, partial };
      const content: AssistantMessage["content"] = [{ ...block }];
      if (withTool) content.push({ type: "toolCall", id: `call-${call}`, name: "lookup", arguments: { word: `w${call}` } });
      yield { type: "done", message: { ...partial, content } };
    },
  };
}

async function measure(retention: "keep" | "drop" | "delete", turns = TURNS): Promise<{ arborPerTurn: number; piPerTurn: number; deltaEvents: number; tables: Record<string, number> }> {
  const dir = mkdtempSync(join(process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir()), "arbor-bytes-bench-"));
  const path = join(dir, "arbor.db");
  try {
    const log = createSqliteEventLog({ path, ...(retention === "keep" ? {} : { retention: { endedMessageDeltas: retention } }) });
    const session = await createSessionRepository({ log }).create({ cwd: dir });
    const agent = createAgent({ session, model: turnModel(), tools: [lookup] });
    for (let turn = 0; turn < turns; turn++) {
      const outcome = await agent.prompt(`look up word number ${turn}, please`);
      if (outcome.status !== "done") throw new Error(`turn ${turn}: ${outcome.status} ${outcome.error ?? ""}`);
    }
    await agent.dispose();
    const jsonl = exportPiSession(session);
    const deltaEvents = (await log.readStream(`session-${session.id}`)).filter((event) => event.type === "message.delta").length;
    await log.close();
    const db = new Database(path);
    db.pragma("wal_checkpoint(TRUNCATE)");
    const used = ((db.pragma("page_count", { simple: true }) as number) - (db.pragma("freelist_count", { simple: true }) as number)) * (db.pragma("page_size", { simple: true }) as number);
    const tables = Object.fromEntries((db.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC").all() as { name: string; bytes: number }[]).map((row) => [row.name, Math.round(row.bytes / turns)]));
    db.close();
    return { arborPerTurn: used / turns, piPerTurn: Buffer.byteLength(jsonl) / turns, deltaEvents, tables };
  } finally {
    if (process.env.ARBOR_BENCH_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

export default async function storedBytesBench(): Promise<void> {
  const keep = await measure("keep");
  const drop = await measure("drop");
  const deleted = await measure("delete");
  console.log("bytes per turn by table or index (dbstat), delete-deltas:", deleted.tables);
  // The growth per turn without the file's fixed pages (one page or more per table and index): twice the turns, the difference.
  const longer = await measure("delete", 2 * TURNS);
  const growth = (longer.arborPerTurn * 2 * TURNS - deleted.arborPerTurn * TURNS) / TURNS;
  const piGrowth = (longer.piPerTurn * 2 * TURNS - deleted.piPerTurn * TURNS) / TURNS;
  console.log(`delete-deltas, growth per turn from ${TURNS} to ${2 * TURNS} turns: ${Math.round(growth)} bytes vs pi ${Math.round(piGrowth)} (${(growth / piGrowth).toFixed(2)}x)`);
  console.table([
    { retention: "keep", "Arbor bytes/turn": Math.round(keep.arborPerTurn), "pi JSONL bytes/turn": Math.round(keep.piPerTurn), ratio: (keep.arborPerTurn / keep.piPerTurn).toFixed(2), "delta events": keep.deltaEvents },
    { retention: "drop-deltas", "Arbor bytes/turn": Math.round(drop.arborPerTurn), "pi JSONL bytes/turn": Math.round(drop.piPerTurn), ratio: (drop.arborPerTurn / drop.piPerTurn).toFixed(2), "delta events": drop.deltaEvents },
    { retention: "delete-deltas (CLI, harness default)", "Arbor bytes/turn": Math.round(deleted.arborPerTurn), "pi JSONL bytes/turn": Math.round(deleted.piPerTurn), ratio: (deleted.arborPerTurn / deleted.piPerTurn).toFixed(2), "delta events": deleted.deltaEvents },
  ]);
  printGoal({ bench: "P6 stored bytes per turn / pi JSONL (CLI and harness default: retention delete-deltas)", arbor: deleted.arborPerTurn, baseline: deleted.piPerTurn, unit: "bytes per turn after the runs ended (SQLite pages in use vs JSONL)", ratio: deleted.arborPerTurn / deleted.piPerTurn, goal: "<= 3" });
  printGoal({ bench: "P6 stored bytes per turn / pi JSONL (retention keep, the library logs' default)", arbor: keep.arborPerTurn, baseline: keep.piPerTurn, unit: "bytes per turn after the runs ended (SQLite pages in use vs JSONL)", ratio: keep.arborPerTurn / keep.piPerTurn, goal: "<= 3" });
  printGoal({ bench: "P6 stored bytes per turn / pi JSONL (retention drop-deltas)", arbor: drop.arborPerTurn, baseline: drop.piPerTurn, unit: "bytes per turn after the runs ended (SQLite pages in use vs JSONL)", ratio: drop.arborPerTurn / drop.piPerTurn, goal: "<= 3" });
}
