/**
 * The agent of an idle session is built on first use (issue 17 P7, `src/machines/lazy-agent.ts`),
 * and behaves as the agent built at once: it is the session's actor (compaction and navigation
 * find it, no second slot), prompts and writes work on a real SQLite file, queues recorded by an
 * earlier agent are restored, and a session that needs start-up work (an unfinished run) is
 * recovered at creation as before.
 */
import { describe, expect, it } from "vitest";
import { createAgent } from "../../src/machines/agent.ts";
import type { AgentOptions } from "../../src/machines/agent-types.ts";
import { LazyAgent } from "../../src/machines/lazy-agent.ts";
import { sessionActorOf } from "../../src/machines/session-actor.ts";
import { appendUnfinishedRun, fakeModel, sessionEvents, sleepTool, sqliteSession } from "./helpers.ts";

describe("the agent of an idle session", () => {
  it("is the session's actor before its first use, and runs prompts and operations through one slot", async () => {
    const { log, session } = await sqliteSession();
    const agent = createAgent({ session, model: fakeModel([{ text: "one" }, { text: "two" }]) });
    expect(sessionActorOf(session)).toBe(agent);
    expect(agent.operation()).toBe("idle");
    await agent.whenReady();
    // An operation through the session's actor holds the agent's own slot.
    let seen: string | undefined;
    await sessionActorOf(session).operate("navigating", async () => {
      seen = agent.operation();
    });
    expect(seen).toBe("navigating");
    expect((await agent.prompt("hi")).status).toBe("done");
    expect(agent.getState()).toMatchObject({ status: "idle", operation: "idle", steeringQueue: [], followUpQueue: [] });
    expect((await agent.prompt("again")).lastAssistant?.content).toEqual([{ type: "text", text: "two" }]);
    const types = (await sessionEvents(log, session.id)).map((event) => event.type);
    expect(types.filter((type) => type === "run.ended")).toHaveLength(2);
    await agent.dispose();
    await log.close();
  });

  it("restores the queues an earlier agent recorded, without being built", async () => {
    const { log, repo, session } = await sqliteSession();
    const first = createAgent({ session, model: fakeModel([]) });
    first.followUp("later, please");
    await first.waitForIdle();
    await first.dispose();
    const reopened = await repo.open(session.id);
    const second = createAgent({ session: reopened, model: fakeModel([{ text: "done" }]) });
    expect(second.hasQueuedMessages()).toBe(true);
    expect(second.operation()).toBe("idle");
    expect(second.getState().followUpQueue.map((message) => (message as { content: unknown }).content)).toEqual([[{ type: "text", text: "later, please" }]]);
    const outcome = await second.continue();
    expect(outcome.status).toBe("done");
    expect(second.hasQueuedMessages()).toBe(false);
    await second.dispose();
    await log.close();
  });

  it("getState() answers from the log and its options without building the agent, as the built agent does", async () => {
    const { log, repo, session } = await sqliteSession();
    const tools = [sleepTool("a"), sleepTool("b")];
    const first = createAgent({ session, model: fakeModel([]), tools });
    await first.setThinkingLevel("high");
    await first.setTools(tools, ["b"]);
    first.followUp("later, please");
    await first.waitForIdle();
    await first.dispose();

    for (const options of [{}, { modelName: "main", thinkingLevel: "low" as const, activeToolNames: ["a", "b"] }]) {
      const reopened = await repo.open(session.id);
      let built = 0;
      // The build of createAgent's eager path (an inspect observer makes it eager), counted.
      const agent = new LazyAgent({ session: reopened, model: fakeModel([]), tools, ...options }, (real: AgentOptions) => (built++, createAgent({ ...real, inspect: () => undefined })));
      const lazy = agent.getState();
      expect(built).toBe(0);
      expect(lazy).toMatchObject(options.thinkingLevel ? { thinkingLevel: "low", activeToolNames: ["a", "b"], modelName: "main" } : { thinkingLevel: "high", activeToolNames: ["b"] });
      expect(lazy.followUpQueue).toHaveLength(1);
      void agent.writes; // builds it
      expect(built).toBe(1);
      expect(agent.getState()).toEqual(lazy);
      await agent.dispose();
    }
    await log.close();
  });

  it("is built and recovers at creation when the session has an unfinished run", async () => {
    const { log, repo, session } = await sqliteSession();
    const model = fakeModel([]);
    await appendUnfinishedRun(session, "r-crashed", { provider: model.provider, modelId: model.modelId, api: model.api });
    const reopened = await repo.open(session.id);
    const agent = createAgent({ session: reopened, model });
    await agent.whenReady();
    const events = await sessionEvents(log, session.id);
    expect(events.filter((event) => event.type === "run.ended").map((event) => (event.data as { runId: string }).runId)).toEqual(["r-crashed"]);
    await agent.dispose();
    await log.close();
  });
});
