// The child process of bench/idle.bench.ts (goal P7), plain JavaScript over the compiled build
// (dist/), as an installed Arbor runs: `prepare` creates `count` empty sessions in a SQLite log;
// `none` / `views` / `agents` opens that log, then opens every session (and holds nothing, the
// session handles and views, or an agent per session), waits for the agents' start-up recovery,
// collects garbage and prints one JSON line of memory figures in MiB.
// Usage: node --expose-gc bench/idle-child.mjs <dist dir> <log path> <count> <prepare|none|views|agents>
const [dist, path, countText, what] = process.argv.slice(2);
const count = Number(countText);
const { createSqliteEventLog } = await import(`${dist}/api/log.js`);
const { createSessionRepository } = await import(`${dist}/api/session.js`);
const { createAgent } = await import(`${dist}/api/agent.js`);
const settle = async () => {
  for (let round = 0; round < 3; round++) {
    await new Promise((resolve) => setImmediate(resolve));
    globalThis.gc?.();
  }
};
if (what === "prepare") {
  const log = createSqliteEventLog({ path, synchronous: "OFF" });
  const repo = createSessionRepository({ log });
  for (let start = 0; start < count; start += 500) {
    await Promise.all(Array.from({ length: Math.min(500, count - start) }, (_, k) => repo.create({ id: `idle-${start + k}`, cwd: "/bench" })));
  }
  await log.close();
} else {
  // A model client that is never called: the agents stay idle.
  const model = { provider: "bench", modelId: "idle", api: "bench", stream: () => { throw new Error("an idle agent is never called"); } };
  const log = createSqliteEventLog({ path });
  const repo = createSessionRepository({ log });
  await settle();
  const before = process.memoryUsage();
  const held = [];
  for (let index = 0; index < count; index++) {
    const session = await repo.open(`idle-${index}`);
    if (what === "agents") held.push(createAgent({ session, model }));
    else if (what === "views") held.push(session);
  }
  if (what === "agents") await Promise.all(held.map((agent) => agent.whenReady()));
  await settle();
  const after = process.memoryUsage();
  const mib = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;
  console.log(JSON.stringify({ what, count, held: held.length, rss: mib(after.rss), heap: mib(after.heapUsed), rssBefore: mib(before.rss), heapBefore: mib(before.heapUsed) }));
  await log.close();
}
