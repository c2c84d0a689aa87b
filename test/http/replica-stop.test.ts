/**
 * `POST /api/chat/:id/stop` on a replica that does not run the session: two real `arbor serve`
 * processes on one log (a PostgreSQL schema; one SQLite file). The stop is a control request in
 * the log; the replica that runs the session follows it and aborts the run: the run ends
 * `aborted` (not `done`), the client streaming from the owner gets `abort`, and the control
 * stream holds the request and the owner's `control.ended { applied }`. The latency figure is in
 * `bench/replica-stop.bench.ts`, not here.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { call, postPrompt, runEndings, sseChunks, startFleet, waitForSessionEvent, type Backend, type Fleet } from "./replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const REPLY = "A long answer that the other replica is asked to stop before it is finished.";
const schema = useTestSchemas("stop");

describe.each([["PostgreSQL"], ["SQLite"]])("stop from another replica (%s)", (name) => {
  let gated: GatedModelServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    if (process.env.DEBUG_REPLICAS) for (const replica of fleet?.replicas ?? []) console.log(replica.url, replica.stderr());
    await fleet?.close();
    await gated?.close();
  });

  it("aborts the run on the owning replica: run.ended aborted, the owner's stream ends with abort", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: REPLY, chunkSize: 8 });
    const backend: Backend = name === "PostgreSQL" ? { kind: "pg", schema: schema() } : { kind: "sqlite" };
    fleet = await startFleet(backend, gated.url);
    const [a, b] = fleet.replicas;

    const streaming = postPrompt(a.url, "stoppable", "write a long answer");
    await gated.waitForRequests(1);
    gated.release(0, 3);
    await waitForSessionEvent(fleet.log, "stoppable", (event) => event.type === "message.delta");

    const stop = await call(b.url, "/api/chat/stoppable/stop", { method: "POST" });
    expect(stop.status).toBe(200);
    expect(await stop.json()).toEqual({ stopped: true });
    expect(await runEndings(fleet.log, "stoppable")).toEqual(["aborted"]);

    const chunks = await sseChunks(await streaming);
    expect(chunks.at(-1)).toMatchObject({ type: "abort" });
    const control = await fleet.log.readStream("control-stoppable");
    expect(control.map((event) => [event.type, (event.data as { action: string }).action])).toEqual([
      ["control.requested", "stop"],
      ["control.ended", "stop"],
    ]);
    expect(control[1].data).toMatchObject({ status: "applied", requestId: control[0].eventId });
    // The session works again from either replica.
    gated.script({ text: "Fresh." });
    const again = postPrompt(b.url, "stoppable", "again");
    await gated.waitForRequests(2);
    gated.release(1);
    expect((await again).status).toBe(200);
    expect((await sseChunks(await again)).at(-1)).toMatchObject({ type: "finish" });
  }, 120_000);
});
