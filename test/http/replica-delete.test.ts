/**
 * A prompt to a session that another process deleted while this replica had it open: two real
 * `arbor serve` processes on one log (a PostgreSQL schema; one SQLite file). Replica B served the
 * session (it is open there); another process deletes it (`repository.delete`: the stream is
 * removed, a tombstone written). The next prompt to B for that id gets a fresh session that
 * works: `200`, a stream that ends with `finish`, and a log that holds a new `session.created`
 * with only the new prompt. It never hangs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { postPrompt, runEndings, sseChunks, startFleet, type Backend, type Fleet } from "./replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const schema = useTestSchemas("deleted");

describe.each([["PostgreSQL"], ["SQLite"]])("a prompt to a session another process deleted (%s)", (name) => {
  let model: OpenAIServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await model?.close();
  });

  it("gives a fresh session that works: 200, the stream finishes, the log holds only the new conversation", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("First answer."), textResponse("Second answer, in a fresh session."));
    const backend: Backend = name === "PostgreSQL" ? { kind: "pg", schema: schema() } : { kind: "sqlite" };
    fleet = await startFleet(backend, model.url);
    const [, b] = fleet.replicas;

    const first = await postPrompt(b.url, "doomed", "first question");
    expect((await sseChunks(first)).at(-1)).toMatchObject({ type: "finish" });
    await createSessionRepository({ log: fleet.log }).delete("doomed");

    const again = await postPrompt(b.url, "doomed", "second question", AbortSignal.timeout(60_000));
    expect(again.status).toBe(200);
    const chunks = await sseChunks(again);
    expect(chunks.at(-1)).toMatchObject({ type: "finish" });
    const events = await fleet.log.readStream("session-doomed");
    expect(events[0].type).toBe("session.created");
    const users = events.filter((event) => event.type === "entry.appended" && (event.data as { entry: { message?: { role: string } } }).entry.message?.role === "user");
    expect(users.map((event) => (event.data as { entry: { message: { content: unknown } } }).entry.message.content)).toEqual(["second question"]);
    expect(await runEndings(fleet.log, "doomed")).toEqual(["done"]);
  }, 120_000);
});
