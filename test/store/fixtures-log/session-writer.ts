/**
 * Child-process session writer for the session index tests. Run as
 * `node --import tsx test/store/fixtures-log/session-writer.ts <path> <sessionId>`: opens the
 * session (created by the test), then appends turns (user, assistant, and every 7th turn a
 * leaf move back two entries and every 11th a compaction) forever, printing `turn <n>` after
 * each commit (the test kills it with SIGKILL mid-write).
 */
import { createSessionRepository } from "../../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../../src/store/sqlite/sqlite-event-log.ts";

const [path, sessionId] = process.argv.slice(2);
const repo = createSessionRepository({ log: createSqliteEventLog({ path, synchronous: "NORMAL" }) });
const session = await repo.open(sessionId);
const write = (line: string) => new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
for (let turn = 0; ; turn++) {
  const branch = session.view.getBranch();
  if (turn % 7 === 6 && branch.length > 2) await session.moveLeaf(branch[branch.length - 3].id);
  if (turn % 11 === 10 && branch.length > 4) await session.appendEntry({ type: "compaction", summary: `s${turn}`, firstKeptEntryId: branch[branch.length - 4].id, tokensBefore: 10 });
  await session.appendEntries([
    { type: "message", message: { role: "user", content: `u${turn}`, timestamp: turn } },
    { type: "message", message: { role: "assistant", content: [{ type: "text", text: `a${turn}` }], api: "a", provider: "p", model: `m${turn % 3}`, usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3 }, stopReason: "stop", timestamp: turn } },
  ]);
  await write(`turn ${turn}`);
}
