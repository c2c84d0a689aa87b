/**
 * `harness.sessions.events$`: one harness-wide, tenant-scoped stream of every session's events,
 * whichever process runs them. A real `arbor serve` child process runs chats on a log (a
 * PostgreSQL schema; a SQLite file) while harnesses in this process on the same log watch: an
 * unscoped one sees both chats' runs (its own `events$` is its own session's only), one scoped to
 * the chats' tenant sees them too, one scoped to another tenant sees none of them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { firstValueFrom, take, takeWhile, toArray } from "rxjs";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { ofType, type ArborEvent } from "../../src/store/events/catalogue.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { postPrompt, sseChunks, startFleet, type Backend, type Fleet } from "./replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";

const schema = useTestSchemas("sessev");

describe.each([["PostgreSQL"], ["SQLite"]])("harness.sessions.events$ (%s)", (name) => {
  let model: OpenAIServer | undefined;
  let fleet: Fleet | undefined;
  const harnesses: AgentHarness[] = [];
  afterEach(async () => {
    for (const harness of harnesses.splice(0)) await harness.close();
    await fleet?.close();
    await model?.close();
  });

  it("shows every session's events of the harness's tenant, run by another process", async () => {
    model = await startOpenAIServer();
    model.script(textResponse("One."), textResponse("Two."));
    const backend: Backend = name === "PostgreSQL" ? { kind: "pg", schema: schema() } : { kind: "sqlite" };
    fleet = await startFleet(backend, model.url, 1);
    const [replica] = fleet.replicas;
    const watch = async (tenant: string | undefined) => {
      const harness = await createHarness({ eventLog: fleet!.log, models: { main: scriptedModel([]) }, ...(tenant !== undefined ? { tenant } : {}) });
      harnesses.push(harness);
      return harness;
    };
    const everyone = await watch(undefined);
    const same = await watch("default");
    const other = await watch("acme");
    const head = await fleet.log.headPosition();
    const runEnds = (harness: AgentHarness) => firstValueFrom(harness.sessions.events({ fromPosition: head }).pipe(ofType("run.ended"), take(2), toArray()));
    const seen = [runEnds(everyone), runEnds(same)];
    const own: ArborEvent[] = [];
    everyone.events$.subscribe((event) => own.push(event));
    const otherSeen = firstValueFrom(other.sessions.events({ fromPosition: head }).pipe(takeWhile((event) => event.type !== "session.created", true), toArray()));

    for (const id of ["chat-one", "chat-two"]) expect((await sseChunks(await postPrompt(replica.url, id, `hello ${id}`))).at(-1)).toMatchObject({ type: "finish" });
    for (const ended of await Promise.all(seen)) {
      expect(ended.map((event) => [event.streamId, event.data.status])).toEqual([
        ["session-chat-one", "done"],
        ["session-chat-two", "done"],
      ]);
    }
    // The harness's own events$ is its own session only; another tenant's harness sees none of the chats.
    expect(own.filter((event) => event.streamId !== `session-${everyone.id}`)).toEqual([]);
    // A session of the other tenant, made after the chats, is the first thing that harness sees.
    const acme = await other.createSession();
    expect((await otherSeen).map((event) => [event.streamId, event.type])).toEqual([[`session-${acme.id}`, "session.created"]]);
    expect(() => other.sessions.events({ tenant: "default" })).toThrow(/tenant/);
  }, 120_000);
});
