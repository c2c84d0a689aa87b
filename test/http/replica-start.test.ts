/**
 * Starting processes creates no session: two real `arbor serve` processes (with a model) on one
 * log (a PostgreSQL schema; one SQLite file) are started, one of them restarted, and the log
 * still holds no session stream, and `GET /api/sessions` lists none on either.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { call, startFleet, type Backend, type Fleet } from "./replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const schema = useTestSchemas("start");

describe.each([["PostgreSQL"], ["SQLite"]])("starting replicas (%s)", (name) => {
  let model: OpenAIServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await model?.close();
  });

  it("creates no session: the log has no session stream after three starts", async () => {
    model = await startOpenAIServer();
    const backend: Backend = name === "PostgreSQL" ? { kind: "pg", schema: schema() } : { kind: "sqlite" };
    fleet = await startFleet(backend, model.url, 3);
    for (const replica of fleet.replicas) {
      const listed = await call(replica.url, "/api/sessions");
      expect(listed.status).toBe(200);
      expect(await listed.json()).toEqual({ sessions: [] });
    }
    const streams = await fleet.log.listStreams();
    expect(streams.filter((stream) => stream.streamId.startsWith("session-"))).toEqual([]);
  }, 120_000);
});
