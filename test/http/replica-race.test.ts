/**
 * Two prompts for one session sent at the same moment to two real `arbor serve` processes on one PostgreSQL log, round after round (a new
 * session, then one that exists): exactly one gets `200` and streams its own run; the other gets `409 SESSION_BUSY` as JSON, and the log holds
 * only the accepted prompt. The model answers only after both responses are in, so the winner's run is still going when the loser asks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { postPrompt, sseChunks, startFleet, type Fleet } from "./replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const ROUNDS = 24;
const schema = useTestSchemas("race");

describe("two prompts racing for one session on two replicas (PostgreSQL)", () => {
  let gated: GatedModelServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await gated?.close();
  });

  it("accepts exactly one with 200 and refuses the other with 409 JSON before any 200, and logs only the accepted prompt", async () => {
    gated = await startGatedModelServer();
    fleet = await startFleet({ kind: "pg", schema: schema() }, gated.url);
    const [a, b] = fleet.replicas;
    for (let round = 0; round < ROUNDS; round++) {
      const id = round % 2 === 0 ? `new-${round}` : "existing";
      const before = await fleet.log.streamVersion(`session-${id}`);
      gated.script({ text: `answer ${round}` });
      const texts = [`prompt ${round} to A`, `prompt ${round} to B`];
      const responses = await Promise.all([postPrompt(a.url, id, texts[0]), postPrompt(b.url, id, texts[1])]);
      expect(responses.map((response) => response.status).sort(), `round ${round}`).toEqual([200, 409]);
      const winner = responses.findIndex((response) => response.status === 200);
      const loser = responses[1 - winner];
      expect(loser.headers.get("content-type")).toMatch(/^application\/json/);
      expect(((await loser.json()) as { error: { code: string } }).error.code).toBe("SESSION_BUSY");

      await gated.waitForRequests(round + 1);
      gated.release(round);
      const chunks = await sseChunks(responses[winner]);
      expect(chunks.at(-1)).toMatchObject({ type: "finish" });
      const events = await fleet.log.readStream(`session-${id}`, { fromVersion: before + 1 });
      const prompts = events
        .filter((event) => event.type === "entry.appended")
        .map((event) => (event.data as { entry: { message?: { role: string } } }).entry.message)
        .filter((message) => message?.role === "user")
        .map((message) => JSON.stringify(message));
      expect(prompts, `round ${round}`).toHaveLength(1);
      expect(prompts[0]).toContain(texts[winner]);
      expect(events.filter((event) => event.type === "run.started")).toHaveLength(1);
    }
  }, 180_000);
});
