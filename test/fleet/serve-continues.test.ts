/**
 * `arbor serve` continues a dead replica's run by itself: two real `arbor serve` processes on one
 * log (a PostgreSQL schema; one SQLite file), a prompt to replica a whose run calls a tool and then
 * streams its answer, a SIGKILL of a mid-answer, and NO request after that. The survivor's worker
 * finds the run whose owner is gone and continues it to `done`: one `run.resumed` naming the dead
 * owner and the survivor, the completed tool call kept (not run again), the partial reply closed
 * and the model asked again, every call paired, no entry twice. Before serve continued runs, such a
 * run stayed open ("running") until someone asked for its session.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { hangResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { postPrompt, startFleet, waitForSessionEvent, type Backend, type Fleet } from "../http/replicas.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";
import { expectRunIntact } from "./fixtures/run-checks.ts";

const ANSWER = "The notes say the deploy is on Tuesday, and the survivor finished this answer.";
const schema = useTestSchemas("servecont");

describe.each([["PostgreSQL"], ["SQLite"]])("a replica killed mid-run (%s)", (name) => {
  let model: OpenAIServer | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    if (process.env.DEBUG_REPLICAS) for (const replica of fleet?.replicas ?? []) console.log(replica.url, replica.stderr());
    await fleet?.close();
    await model?.close();
  });

  it("is continued to done by the other replica with no request", async () => {
    model = await startOpenAIServer();
    model.script(
      toolCallResponse([{ id: "call_notes", name: "read", arguments: { path: "notes.txt" } }]),
      // The owner's second model call streams half the answer, then nothing: it is killed there.
      hangResponse(ANSWER.slice(0, 30)),
      textResponse(ANSWER),
    );
    const backend: Backend = name === "PostgreSQL" ? { kind: "pg", schema: schema() } : { kind: "sqlite" };
    fleet = await startFleet(backend, model.url);
    writeFileSync(join(fleet.dir, "notes.txt"), "deploy: Tuesday\n");
    const [a, b] = fleet.replicas;

    const id = "killed-owner";
    const streaming = postPrompt(a.url, id, "what do the notes say?").then((response) => response.text()).catch((error: unknown) => error);
    await waitForSessionEvent(fleet.log, id, (event) => event.type === "message.delta" && (event.data as { kind: string }).kind === "text");
    a.child.kill("SIGKILL");
    expect((await a.exited).signal).toBe("SIGKILL");
    await streaming; // its connection broke with its process

    // Nobody asks for the session again: the survivor's worker continues the run.
    const ended = await waitForSessionEvent(fleet.log, id, (event) => event.type === "run.ended");
    expect(ended.data).toMatchObject({ status: "done" });
    const events: StoredEvent[] = await fleet.log.readStream(`session-${id}`);
    const resumed = events.filter((event) => event.type === "run.resumed");
    expect(resumed).toHaveLength(1);
    expect(resumed[0].data).toMatchObject({ previousOwner: { pid: a.child.pid }, reason: expect.stringMatching(/stopped before it ended|process gone/) });
    expect((resumed[0].metadata.owner as { pid: number }).pid).toBe(b.child.pid);
    expectRunIntact(events);
    // The tool ran once (its result was logged before the kill); the model was asked again once.
    expect(events.filter((event) => event.type === "tool.started")).toHaveLength(1);
    expect(model.requests).toHaveLength(3);
    const final = events.filter((event) => event.type === "entry.appended").map((event) => (event.data as { entry: { message?: { role: string; stopReason?: string; content: unknown } } }).entry.message).at(-1);
    expect(final).toMatchObject({ role: "assistant", stopReason: "stop", content: [{ type: "text", text: ANSWER }] });
  }, 120_000);
});
