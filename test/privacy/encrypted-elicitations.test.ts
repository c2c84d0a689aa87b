/**
 * An encrypted log seals a session's elicitations (`elicitation-<id>`: an MCP server's questions and the
 * user's answers) with the session's data key, like its own stream: on a SQLite file a tool asks through
 * the durable elicitation waiter and the answer comes from the log; the question's and the answer's marker
 * text is in no page of the file or its WAL, reads back in clear through the log, and a copy of the file
 * taken before the session's delete cannot be read for it once the key is destroyed.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/core/tools.ts";
import { answerElicitation, createElicitationWaiter, type ElicitationAnswer } from "../../src/harness/elicitations.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { elicitationStreamId } from "../../src/store/events/elicitation-events.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { fakeModel } from "../machines/helpers.ts";

const QUESTION = "QUESTION-MARKER-93c1e7";
const ANSWER = "ANSWER-MARKER-5d02aa";

const fileBytes = (path: string) =>
  ["", "-wal", "-shm", "-journal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1")).join("");

describe("an encrypted log's elicitations", () => {
  it("are sealed with the session's key at rest, read back in clear, and are shredded with the session", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-enc-elicit-"));
    const path = join(dir, "enc.db");
    const key = randomBytes(32);
    const log = createSqliteEventLog({ path, encryption: { key } });
    const repo = createSessionRepository({ log });
    const session = await repo.create({ cwd: "/tmp" });
    const answering: Promise<unknown>[] = [];
    const answer: ElicitationAnswer = { action: "accept", content: { name: ANSWER } };
    const waiter = createElicitationWaiter({
      log,
      locate: () => ({ sessionId: session.id }),
      onRequested: (record) => answering.push(answerElicitation(log, session.id, record.elicitationId, answer, "api")),
    });
    const ask = defineTool({
      name: "ask",
      description: "asks the user",
      parameters: z.object({}),
      async execute(_input, { toolCallId, signal }) {
        const got = await waiter({ server: "people", tool: "whoami", toolCallId, message: `Your name? ${QUESTION}`, requestedSchema: { type: "object", properties: { name: { type: "string" } } }, signal });
        return { content: [{ type: "text", text: got.action }] };
      },
    });
    const agent = createAgent({ session, model: fakeModel([{ text: "asking", toolCalls: [{ id: "call_ask", name: "ask", arguments: {} }] }, { text: "done" }]), tools: [ask] });
    expect((await agent.prompt("ask me")).status).toBe("done");
    await Promise.all(answering);
    await agent.dispose();

    // Read through the log: the question and the answer, in clear.
    const elicited = await log.readStream(elicitationStreamId(session.id));
    expect(elicited.map((event) => event.type)).toEqual(["elicitation.requested", "elicitation.answered"]);
    expect(JSON.stringify(elicited)).toContain(QUESTION);
    expect(JSON.stringify(elicited)).toContain(ANSWER);
    // At rest: in no page of the file or its WAL.
    expect(fileBytes(path)).not.toContain(QUESTION);
    expect(fileBytes(path)).not.toContain(ANSWER);

    // A copy taken before the delete: once the session's key is destroyed, its elicitations cannot be read from it.
    await log.close();
    const copy = join(dir, "backup.db");
    copyFileSync(path, copy);
    const reopened = createSqliteEventLog({ path, encryption: { key } });
    await createSessionRepository({ log: reopened }).delete(session.id);
    await reopened.close();
    const fromCopy = createSqliteEventLog({ path: copy, encryption: { key, keyFile: join(dir, "enc.keys.db") } });
    await expect(fromCopy.readStream(elicitationStreamId(session.id))).rejects.toMatchObject({ code: "DATA_KEY_UNAVAILABLE", details: { reason: "destroyed" } });
    await fromCopy.close();
  });
});
