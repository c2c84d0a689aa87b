/**
 * A delete of a session that another replica is running: two real `arbor serve` processes on one
 * log (a PostgreSQL schema; one SQLite file). Replica B answers `409 SESSION_BUSY` with no owner
 * detail (no pid, no host), deletes nothing, and the run on replica A ends `done`.
 */
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { call, postPrompt, runEndings, sseChunks, startFleet, waitForSessionEvent, type Backend, type Fleet } from "./replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const REPLY = "One replica writes this reply while the other one is asked to delete the session.";
const schema = useTestSchemas("delbusy");

describe.each([["PostgreSQL"], ["SQLite"]])("a delete of a session running on another replica (%s)", (name) => {
  let gated: GatedModelServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await gated?.close();
  });

  it("answers 409 SESSION_BUSY with no owner detail, keeps the events, and the run ends done", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: REPLY, chunkSize: 8 });
    const backend: Backend = name === "PostgreSQL" ? { kind: "pg", schema: schema() } : { kind: "sqlite" };
    fleet = await startFleet(backend, gated.url);
    const [a, b] = fleet.replicas;

    const first = postPrompt(a.url, "running", "write the reply");
    await gated.waitForRequests(1);
    gated.release(0, 3);
    await waitForSessionEvent(fleet.log, "running", (event) => event.type === "message.delta");

    const refused = await call(b.url, "/api/sessions/running", { method: "DELETE" });
    const text = await refused.text();
    expect(refused.status).toBe(409);
    expect((JSON.parse(text) as { error: { code: string } }).error.code).toBe("SESSION_BUSY");
    expect(text).not.toContain(String(a.child.pid));
    expect(text).not.toContain(hostname());
    expect((await fleet.log.readStream("session-running"))[0].type).toBe("session.created");

    gated.release(0);
    const response = await first;
    expect(response.status).toBe(200);
    expect((await sseChunks(response)).at(-1)).toMatchObject({ type: "finish" });
    expect(await runEndings(fleet.log, "running")).toEqual(["done"]);
  }, 120_000);
});
