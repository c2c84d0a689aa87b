/**
 * A prompt to a session that another replica is running: two real `arbor serve` processes on one
 * log (a PostgreSQL schema; one SQLite file). The second replica answers `409 SESSION_BUSY` as
 * JSON before any `200` header, tells the client nothing of the owning process (no pid, no host),
 * logs that detail on its own stderr, writes no prompt, and the run on the first replica ends
 * `done` as if nothing happened.
 */
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { postPrompt, runEndings, sseChunks, startFleet, waitForSessionEvent, type Backend, type Fleet } from "./replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const REPLY = "One replica writes this reply while the other one is asked to run the same session.";
const schema = useTestSchemas("busy");

describe.each([["PostgreSQL"], ["SQLite"]])("a prompt to a session busy on another replica (%s)", (name) => {
  let gated: GatedModelServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await gated?.close();
  });

  it("answers 409 JSON with no owner detail, logs the detail on the server, and the run ends done", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: REPLY, chunkSize: 8 });
    const backend: Backend = name === "PostgreSQL" ? { kind: "pg", schema: schema() } : { kind: "sqlite" };
    fleet = await startFleet(backend, gated.url);
    const [a, b] = fleet.replicas;

    const first = postPrompt(a.url, "shared", "write the reply");
    await gated.waitForRequests(1);
    gated.release(0, 3);
    await waitForSessionEvent(fleet.log, "shared", (event) => event.type === "message.delta");

    const busy = await postPrompt(b.url, "shared", "a second prompt");
    const text = await busy.text();
    expect(busy.status).toBe(409);
    expect(busy.headers.get("content-type")).toMatch(/^application\/json/);
    const body = JSON.parse(text) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("SESSION_BUSY");
    expect(body.error.message).toContain("shared");
    expect(text).not.toContain(String(a.child.pid));
    expect(text).not.toContain(hostname());
    // The owner's detail is in the refusing replica's own log.
    expect(b.stderr()).toContain(String(a.child.pid));

    gated.release(0);
    const response = await first;
    expect(response.status).toBe(200);
    const chunks = await sseChunks(response);
    expect(chunks.at(-1)).toMatchObject({ type: "finish" });
    expect(await runEndings(fleet.log, "shared")).toEqual(["done"]);
    const prompts = (await fleet.log.readStream("session-shared")).filter((event) => event.type === "entry.appended" && (event.data as { entry: { message?: { role: string } } }).entry.message?.role === "user");
    expect(prompts).toHaveLength(1);
  }, 120_000);
});
