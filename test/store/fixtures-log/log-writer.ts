/**
 * Child-process writer for the SQLite event log tests. Run as
 * `node --import tsx test/store/fixtures-log/log-writer.ts <mode> <path> [args]`.
 *
 * Modes:
 * - `race <path> <writer>`: prints `ready`, waits for a stdin line, appends 3 events
 *   to stream "race" with expectedVersion "no_stream", prints one JSON outcome line;
 * - `contend <path> <writer> <rounds>`: appends one event per round to stream
 *   "shared" with the version it just read, retrying on conflict; prints
 *   `{"conflicts":n}`;
 * - `batches <path> <batches> <size>`: prints `ready`, appends batches to stream
 *   "child" 20 ms apart, then exits;
 * - `loop <path> <size>`: appends batches of `size` events to stream "loop" forever,
 *   printing `committed <batch>` after each commit (the test kills it with SIGKILL);
 * - `create <path> <count>`: prints `ready`, waits for a stdin line, then creates the new logs
 *   `<path>.1` … `<path>.<count>` one after another (open, then close) and prints `created`.
 */
import { createInterface } from "node:readline";
import { z } from "zod";
import { ExpectedVersionConflictError } from "../../../src/core/errors.ts";
import { createDefaultEventRegistry } from "../../../src/store/events/index.ts";
import { createSqliteEventLog } from "../../../src/store/sqlite/sqlite-event-log.ts";

const [mode, path, ...args] = process.argv.slice(2);
const registry = createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string(), n: z.number().optional() }));
const log = createSqliteEventLog({ path, registry });
const write = (line: string) => new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()));

if (mode === "race") {
  const writer = args[0];
  const lines = createInterface({ input: process.stdin });
  await write("ready");
  for await (const _line of lines) break;
  try {
    const result = await log.append("race", [0, 1, 2].map((n) => ({ type: "note.added", data: { text: writer, n } })), {
      expectedVersion: "no_stream",
    });
    await write(JSON.stringify({ ok: true, positions: result.events.map((event) => event.globalPosition) }));
  } catch (error) {
    await write(JSON.stringify({ ok: false, code: (error as { code?: string }).code, message: (error as Error).message }));
  }
  lines.close();
} else if (mode === "contend") {
  const [writer, rounds] = [args[0], Number(args[1])];
  let conflicts = 0;
  for (let round = 0; round < rounds; ) {
    const version = await log.streamVersion("shared");
    try {
      await log.append("shared", [{ type: "note.added", data: { text: `${writer}-${round}`, n: round } }], { expectedVersion: version });
      round++;
    } catch (error) {
      if (!ExpectedVersionConflictError.isInstance(error)) throw error;
      conflicts++;
    }
  }
  await write(JSON.stringify({ conflicts }));
} else if (mode === "batches") {
  const [batches, size] = [Number(args[0]), Number(args[1])];
  await write("ready");
  for (let batch = 0; batch < batches; batch++) {
    await log.append("child", Array.from({ length: size }, (_, n) => ({ type: "note.added", data: { text: `b${batch}`, n } })));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
} else if (mode === "loop") {
  const size = Number(args[0]);
  const padding = "x".repeat(300);
  for (let batch = 0; ; batch++) {
    await log.append("loop", Array.from({ length: size }, (_, n) => ({ type: "note.added", data: { text: `${batch}:${padding}`, n } })));
    await write(`committed ${batch}`);
  }
} else if (mode === "create") {
  const lines = createInterface({ input: process.stdin });
  await write("ready");
  for await (const _line of lines) break;
  lines.close();
  for (let n = 1; n <= Number(args[0]); n++) await createSqliteEventLog({ path: `${path}.${n}`, registry }).close();
  await write("created");
} else {
  throw new Error(`unknown mode ${mode}`);
}
await log.close();
