import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadPromptTemplates } from "../../src/adapters/prompt-templates/load-prompt-templates.ts";
import { loadSkills } from "../../src/adapters/skills/load-skills.ts";
import { EntryNotFoundError, HarnessConfigError, InvalidArgumentError, ModelConfigError, SessionBusyError } from "../../src/core/errors.ts";
import type { CustomMessage } from "../../src/core/messages.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { HarnessSession } from "../../src/harness/harness-session.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { sharedPath } from "../shared-dir.ts";

const echoTool = (name: string) => ({
  name,
  description: `${name} tool`,
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text" as const, text: name }] }),
});

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function events(session: HarnessSession): Promise<StoredEvent[]> {
  const version = session.session.view.version;
  return firstValueFrom(session.events$.pipe(takeWhile((event) => event.version < version, true), toArray()));
}

function make(overrides: Partial<Parameters<typeof createHarness>[0]> = {}, log: EventLog = createMemoryEventLog()) {
  return createHarness({
    eventLog: log,
    cwd: "/w",
    models: {
      fast: scriptedModel([{ text: "one" }, { text: "two" }, { text: "three" }], { provider: "openai.chat", modelId: "fast-1" }),
      smart: scriptedModel([{ text: "smart" }], { provider: "openai.chat", modelId: "smart-1" }),
    },
    tools: [echoTool("read"), echoTool("grep")],
    ...overrides,
  });
}

describe("createHarness: configuration", () => {
  it("rejects a bad option with HarnessConfigError naming the field, before opening anything", async () => {
    await expect(createHarness({ models: { m: scriptedModel([]) }, streamOptions: { timeoutMs: 0 } })).rejects.toThrow(/"streamOptions\.timeoutMs"/);
    await expect(createHarness({ models: { m: scriptedModel([]) }, tools: [{ ...echoTool("x"), parameters: { type: "bogus" } }] })).rejects.toThrow(HarnessConfigError);
    await expect(createHarness({ models: { m: scriptedModel([]) }, tools: [{ ...echoTool("x"), parameters: { type: "bogus" } }] })).rejects.toThrow(/"tools\[0\]\.parameters"/);
  });

  it("refuses an eventLogPath that is not an Arbor log and leaves the file untouched; creates missing directories", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-harness-path-"));
    try {
      const notes = join(dir, "notes.txt");
      writeFileSync(notes, "my precious notes\n");
      await expect(createHarness({ models: { m: scriptedModel([]) }, eventLogPath: notes })).rejects.toThrow();
      expect(readFileSync(notes, "utf8")).toBe("my precious notes\n");
      harness = await createHarness({ models: { m: scriptedModel([]) }, eventLogPath: join(dir, "deep", "er", "arbor.db") });
      expect(existsSync(join(dir, "deep", "er", "arbor.db"))).toBe(true);
      await harness.close();
      harness = undefined;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("loads real skills and templates from paths and reports their diagnostics", async () => {
    harness = await make({ resources: { skillPaths: [sharedPath("real-inputs/skills")], promptTemplatePaths: [sharedPath("real-inputs/prompts/pi-mono")] } });
    const expected = loadSkills([sharedPath("real-inputs/skills")]);
    expect(harness.resourceDiagnostics.skills).toEqual(expected.diagnostics);
    expect(harness.resourceDiagnostics.skills.length).toBeGreaterThan(0);
    // The folder's README.md and SPEC-NOTES.md are not skills: no diagnostic names them (issue 12 item 7).
    expect(harness.resourceDiagnostics.skills.filter((diagnostic) => /README\.md$|SPEC-NOTES\.md$/.test(diagnostic.path))).toEqual([]);
    expect(harness.getState().systemPrompt).toContain("<available_skills>");
    expect(loadPromptTemplates([sharedPath("real-inputs/prompts/pi-mono")]).templates.length).toBeGreaterThan(0);
  });
});

describe("Session API", () => {
  it("prompt() resolves with the outcome and throws SessionBusyError synchronously while running", async () => {
    harness = await make();
    const running = harness.prompt("hi");
    expect(() => harness!.prompt("again")).toThrow(SessionBusyError);
    const outcome = await running;
    expect(outcome.status).toBe("done");
    expect(outcome.lastAssistant?.content).toEqual([{ type: "text", text: "one" }]);
    expect(harness.getState()).toMatchObject({ status: "idle", modelName: "fast", activeToolNames: ["read", "grep"], sessionName: undefined });
  });

  it("prompt() while calls await approval is refused naming the approval, not a running run", async () => {
    harness = await make({
      models: { fast: scriptedModel([{ toolCalls: [{ id: "c1", name: "read", arguments: {} }] }, { text: "after" }], { provider: "openai.chat", modelId: "fast-1" }) },
      requireApproval: ["read"],
    });
    const outcome = await harness.prompt("read it");
    expect(outcome.status).toBe("suspended");
    let refused: unknown;
    try {
      await harness.prompt("another question");
    } catch (error) {
      refused = error;
    }
    expect(SessionBusyError.isInstance(refused)).toBe(true);
    const busy = refused as InstanceType<typeof SessionBusyError>;
    expect(busy.details).toMatchObject({ busyWith: "awaiting-approval" });
    expect(busy.message).toMatch(/waiting for approval.*approve or deny/);
    expect(busy.message).not.toMatch(/A run is active/);
  });

  it("setModel, setThinkingLevel, setActiveTools and setResources log entries and raise their update hooks in order", async () => {
    const seen: unknown[] = [];
    harness = await make({
      hooks: {
        modelUpdate: (event) => void seen.push(["model", event]),
        thinkingLevelUpdate: (event) => void seen.push(["thinking", event]),
        toolsUpdate: (event) => void seen.push(["tools", event]),
        resourcesUpdate: (event) => void seen.push(["resources", event]),
      },
    });
    await harness.setModel("smart");
    await harness.setThinkingLevel("high");
    await harness.setActiveTools(["grep"]);
    await harness.setResources({ promptTemplates: loadPromptTemplates([sharedPath("real-inputs/prompts/pi-mono")]).templates });
    const entries = harness.session.view.getEntries();
    expect(entries.map((entry) => entry.type)).toEqual(["model_change", "thinking_level_change", "active_tools_change", "custom"]);
    expect(entries[0]).toMatchObject({ provider: "openai", modelId: "smart-1" });
    expect(entries[2]).toMatchObject({ toolNames: ["grep"] });
    expect(entries[3]).toMatchObject({ customType: "arbor.resources", data: { skills: [], promptTemplates: ["implement", "is", "pr"] } });
    expect(seen).toEqual([
      ["model", { model: "smart", provider: "openai", modelId: "smart-1", previous: { model: "fast", provider: "openai", modelId: "fast-1" } }],
      ["thinking", { thinkingLevel: "high", previous: "off" }],
      ["tools", { activeToolNames: ["grep"], previous: ["read", "grep"] }],
      ["resources", { skills: [], promptTemplates: ["implement", "is", "pr"] }],
    ]);
    const outcome = await harness.prompt("go");
    expect(outcome.lastAssistant?.content).toEqual([{ type: "text", text: "smart" }]);
    expect(harness.session.view.buildContext()).toMatchObject({ thinkingLevel: "high", activeToolNames: ["grep"], model: { provider: "openai", modelId: "smart-1" } });
  });

  it("the model name and the active tools have one owner, the session actor: a change made through the agent is what the session reports and uses", async () => {
    harness = await make();
    expect(harness.getState()).toMatchObject({ modelName: "fast", activeToolNames: ["read", "grep"] });
    expect(harness.agent.getState()).toMatchObject({ modelName: "fast", activeToolNames: ["read", "grep"] });
    // Straight to the session actor (as a tool holding the agent would): no harness closure to disagree.
    const asTool = (name: string) => defineTool({ name, description: `${name} tool`, parameters: z.object({}), execute: async () => ({ content: [{ type: "text", text: name }] }) });
    await harness.agent.setTools([asTool("read"), asTool("grep")], ["grep"]);
    await harness.agent.setModel(harness.registry.get("smart").client, { name: "smart" });
    expect(harness.getState()).toMatchObject({ modelName: "smart", activeToolNames: ["grep"] });
    expect(harness.getState().systemPrompt).toContain("grep");
    expect(harness.getState().systemPrompt).not.toMatch(/\bread\b/);
    const outcome = await harness.prompt("go");
    expect(outcome.lastAssistant?.content).toEqual([{ type: "text", text: "smart" }]);
  });

  it("rejects unknown models, levels and tools with typed errors, writing nothing", async () => {
    harness = await make();
    const version = harness.session.view.version;
    await expect(harness.setModel("nope")).rejects.toThrow(ModelConfigError);
    await expect(harness.setThinkingLevel("max" as never)).rejects.toThrow(InvalidArgumentError);
    await expect(harness.setActiveTools(["read", "bash"])).rejects.toThrow(/"bash"/);
    await expect(harness.label("nope", "x")).rejects.toThrow(EntryNotFoundError);
    expect(harness.session.view.version).toBe(version);
  });

  it("records a throwing observer as hook.failed and carries on", async () => {
    harness = await make({ hooks: { modelUpdate: () => { throw new Error("observer broke"); } } });
    await harness.setModel("smart");
    const failed = (await events(harness)).filter((event) => event.type === "hook.failed");
    expect(failed.map((event) => event.data)).toEqual([{ hook: "modelUpdate", error: "observer broke" }]);
  });

  it("a hook record the log refuses is reported: the call that raised it rejects with the refusal (issue 10: not swallowed)", async () => {
    const log = createMemoryEventLog();
    const { createSessionRepository } = await import("../../src/store/session-repository.ts");
    const another: { handle?: Awaited<ReturnType<ReturnType<typeof createSessionRepository>["open"]>> } = {};
    harness = await make({
      hooks: {
        modelUpdate: async () => {
          // Another writer appends first, so the hook.failed record's version-checked append is refused.
          await another.handle!.refresh!();
          await another.handle!.appendEntry({ type: "session_info", name: "someone else" });
          throw new Error("observer broke");
        },
      },
    }, log);
    another.handle = await createSessionRepository({ log }).open(harness.id);
    await expect(harness.setModel("smart")).rejects.toMatchObject({ code: "EXPECTED_VERSION_CONFLICT" });
    const stored = await log.readStream(`session-${harness.id}`);
    expect(stored.filter((event) => event.type === "hook.failed")).toEqual([]);
    // Reported once: the next call reloads and succeeds.
    await harness.reload();
    await harness.setThinkingLevel("high");
    expect(harness.getState().thinkingLevel).toBe("high");
  });

  it("custom entries, custom messages (now and next turn), labels, names and stats", async () => {
    harness = await make();
    const entry = await harness.appendCustomEntry("app.state", { step: 1 });
    expect(entry).toMatchObject({ type: "custom", customType: "app.state", data: { step: 1 } });
    await harness.appendCustomMessage("app.note", "visible note", { display: true, details: { k: 1 } });
    await harness.appendCustomMessage("app.later", "held for the next prompt", { deliverAs: "nextTurn", display: false });
    expect(harness.hasQueuedMessages()).toBe(true);
    const outcome = await harness.prompt("hello");
    expect(outcome.messages.map((message) => message.role)).toEqual(["user", "custom", "assistant"]);
    expect((outcome.messages[1] as CustomMessage).content).toBe("held for the next prompt");
    const context = harness.session.view.buildContext().messages;
    expect(context.map((message) => message.role)).toEqual(["custom", "user", "custom", "assistant"]);
    await harness.label(entry.id, "start");
    await harness.setName("demo session");
    expect(harness.session.view.getLabel(entry.id)).toBe("start");
    expect(harness.getState().sessionName).toBe("demo session");
    expect(harness.getStats().messages).toMatchObject({ user: 1, assistant: 1 });
  });

  it("moveTo with a hook summary, then fork at an entry into a new session with the same configuration", async () => {
    harness = await make({ hooks: { sessionBeforeTree: () => ({ summary: { summary: "explored greetings" } }) } });
    await harness.prompt("first");
    await harness.prompt("second");
    const assistants = harness.session.view.getEntries().filter((e) => e.type === "message" && (e as { message: { role: string } }).message.role === "assistant");
    expect(assistants).toHaveLength(2);
    const assistantId = assistants[0].id;
    const moved = await harness.moveTo(assistantId, { summarize: true });
    expect(moved.summaryEntry).toMatchObject({ type: "branch_summary", summary: "explored greetings", fromHook: true });
    expect(harness.session.view.buildContext().messages.map((message) => message.role)).toEqual(["user", "assistant", "branchSummary"]);
    const forked = await harness.fork(assistantId);
    expect(forked.id).not.toBe(harness.id);
    expect(forked.session.view.getEntries().map((e) => e.type)).toEqual(["model_change", "message", "message"]);
    expect(forked.getState().modelName).toBe("fast");
    await expect(harness.fork("nope")).rejects.toThrow(EntryNotFoundError);
  });

  it("reopening a session restores its logged model unless the options name one", async () => {
    const log = createMemoryEventLog();
    harness = await make({}, log);
    await harness.setModel("smart");
    const id = harness.id;
    await harness.close();
    harness = await make({ sessionId: id }, log);
    expect(harness.getState().modelName).toBe("smart");
    await harness.close();
    harness = await make({ sessionId: id, model: "fast" }, log);
    expect(harness.getState().modelName).toBe("fast");
  });
});

describe("Session API: moveTo and compact through the compaction module, with hooks", () => {
  async function twoTurns(overrides: Partial<Parameters<typeof createHarness>[0]> = {}, extraSteps: { text: string }[] = []) {
    const created = await createHarness({
      eventLog: createMemoryEventLog(),
      cwd: "/w",
      models: { fast: { model: scriptedModel([{ text: "one" }, { text: "two" }, ...extraSteps], { provider: "openai.chat", modelId: "fast-1" }), contextWindow: 100_000 } },
      ...overrides,
    });
    await created.prompt("first question");
    await created.prompt("second question");
    const messages = created.session.view.getEntries().filter((entry) => entry.type === "message");
    return { harness: created, firstAssistant: messages[1].id, secondUser: messages[2].id };
  }

  it("a sessionBeforeTree cancel writes nothing; the first cancel wins over later handlers", async () => {
    let later = false;
    const setup = await twoTurns({ hooks: { sessionBeforeTree: [() => ({ cancel: true }), () => { later = true; }] } });
    harness = setup.harness;
    const version = harness.session.view.version;
    const result = await harness.moveTo(setup.firstAssistant, { summarize: true });
    expect(result.cancelled).toBe(true);
    expect(later).toBe(false);
    await harness.waitForIdle();
    expect(harness.session.view.getEntries().length).toBe(5);
    expect(harness.session.view.leafId).not.toBe(setup.firstAssistant);
    expect((await events(harness)).filter((event) => event.type === "hook.applied").map((event) => event.data)).toEqual([{ hook: "sessionBeforeTree", changes: ["cancel"] }]);
    expect(harness.session.view.version).toBe(version + 1);
  });

  it("a hook-supplied summary and label land in one append; sessionTree observes it; a user target returns its text", async () => {
    const seen: unknown[] = [];
    const setup = await twoTurns({
      hooks: {
        sessionBeforeTree: ({ preparation }) => ({ summary: { summary: `abandoned ${preparation.entriesToSummarize.length} entries` }, label: "hooked" }),
        sessionTree: (event) => void seen.push(event),
      },
    });
    harness = setup.harness;
    const result = await harness.moveTo(setup.secondUser, { summarize: true });
    expect(result).toMatchObject({ newLeafId: setup.firstAssistant, editorText: "second question" });
    expect(result.summaryEntry).toMatchObject({ summary: "abandoned 1 entries", fromHook: true, parentId: setup.firstAssistant });
    expect(result.labelEntry).toMatchObject({ targetId: result.summaryEntry!.id, label: "hooked" });
    expect(seen).toEqual([expect.objectContaining({ newLeafId: setup.firstAssistant, fromHook: true })]);
  });

  it("without a hook summary the current model writes it", async () => {
    const setup = await twoTurns({}, [{ text: "MODEL-WRITTEN SUMMARY" }]);
    harness = setup.harness;
    const result = await harness.moveTo(setup.firstAssistant, { summarize: true });
    expect(result.summaryEntry?.summary).toContain("MODEL-WRITTEN SUMMARY");
    expect(result.summaryEntry).not.toHaveProperty("fromHook");
  });

  it("moveTo and compact refuse while a run is active", async () => {
    const setup = await twoTurns({}, [{ text: "three" }]);
    harness = setup.harness;
    const running = harness.prompt("third");
    await expect(harness.moveTo(setup.firstAssistant)).rejects.toThrow(SessionBusyError);
    await expect(harness.compact()).rejects.toThrow(SessionBusyError);
    await running;
  });

  it("compact(): sessionBeforeCompact supplies the summary (fromHook) and sessionCompact observes the entry", async () => {
    const seen: unknown[] = [];
    const setup = await twoTurns({
      compaction: { keepRecentTokens: 1 },
      hooks: {
        sessionBeforeCompact: ({ reason }) => ({ compaction: { summary: `hook summary (${reason})` } }),
        sessionCompact: ({ compactionEntry, fromHook, reason }) => void seen.push([compactionEntry.summary, fromHook, reason]),
      },
    });
    harness = setup.harness;
    const entry = await harness.compact("keep the questions");
    expect(entry).toMatchObject({ type: "compaction", summary: "hook summary (manual)", fromHook: true });
    expect(seen).toEqual([["hook summary (manual)", true, "manual"]]);
    expect(harness.session.view.buildContext().messages[0]).toMatchObject({ role: "compactionSummary", summary: "hook summary (manual)" });
  });

  it("compact(): a sessionBeforeCompact cancel refuses the compaction and writes no entry", async () => {
    const setup = await twoTurns({ compaction: { keepRecentTokens: 1 }, hooks: { sessionBeforeCompact: () => ({ cancel: true }) } });
    harness = setup.harness;
    const count = harness.session.view.getEntries().length;
    await expect(harness.compact()).rejects.toThrow(/cancel/i);
    expect(harness.session.view.getEntries().length).toBe(count);
  });
});

describe("Session API: tools through the agent loop", () => {
  it("toolCall mutates input, toolResult patches the result, toolContext is called per call, JSON-Schema arguments are validated before the hooks", async () => {
    const contexts: unknown[] = [];
    const executed: unknown[] = [];
    let hookCalls = 0;
    harness = await createHarness({
      eventLog: createMemoryEventLog(),
      models: {
        main: scriptedModel(
          [
            { toolCalls: [{ id: "c1", name: "lookup", arguments: { key: "alpha" } }, { id: "c2", name: "lookup", arguments: { key: 7 } }] },
            { text: "finished" },
          ],
          { provider: "openai.chat", modelId: "m" },
        ),
      },
      tools: [
        {
          name: "lookup",
          description: "Look a key up",
          parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
          execute: async (args: Record<string, unknown>, context: { context: unknown }) => {
            executed.push(args);
            contexts.push(context.context);
            return { content: [{ type: "text", text: `value of ${String(args.key)}` }], details: { raw: true } };
          },
        },
      ],
      toolContext: ({ toolCallId, toolName }: { toolCallId: string; toolName: string }) => ({ tenant: "acme", toolCallId, toolName }),
      hooks: {
        toolCall: ({ input }) => {
          hookCalls++;
          input.key = String(input.key).toUpperCase();
        },
        toolResult: [({ content }) => ({ content: [...content, { type: "text", text: " (cached)" }] }), ({ details }) => ({ details: { ...(details as object), audited: true } })],
      },
    });
    const outcome = await harness.prompt("look up alpha and 7");
    expect(outcome.status).toBe("done");
    expect(executed).toEqual([{ key: "ALPHA" }]);
    expect(hookCalls).toBe(1); // the invalid call c2 was refused by validation before any hook ran
    expect(contexts).toEqual([{ tenant: "acme", toolCallId: "c1", toolName: "lookup" }]);
    const results = outcome.messages.filter((message) => message.role === "toolResult");
    expect(results[0]).toMatchObject({ toolCallId: "c1", isError: false, details: { raw: true, audited: true }, content: [{ type: "text", text: "value of ALPHA" }, { type: "text", text: " (cached)" }] });
    expect(results[1]).toMatchObject({ toolCallId: "c2", isError: true });
    expect(JSON.stringify(results[1])).toContain("key: must be string");
    const applied = (await events(harness)).filter((event) => event.type === "hook.applied").map((event) => event.data);
    expect(applied).toContainEqual({ hook: "beforeToolCall", changes: ["args"] });
    expect(applied).toContainEqual({ hook: "afterToolCall", changes: ["content", "details"] });
    expect(JSON.stringify(applied)).not.toContain("ALPHA");
  });
});

describe("Session API: a malformed toolResult patch", () => {
  it("becomes an error result and the session stays writable (nothing refused by the log)", async () => {
    harness = await createHarness({
      eventLog: createMemoryEventLog(),
      models: { main: scriptedModel([{ toolCalls: [{ id: "c1", name: "echo", arguments: {} }] }, { text: "after" }, { text: "again" }], { provider: "openai.chat", modelId: "m" }) },
      tools: [{ name: "echo", description: "echo", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [{ type: "text", text: "ok" }] }) }],
      hooks: { toolResult: () => ({ content: "not an array" as never }) },
    });
    const outcome = await harness.prompt("go");
    expect(outcome.status).toBe("done");
    const result = outcome.messages.find((message) => message.role === "toolResult");
    expect(result).toMatchObject({ toolCallId: "c1", isError: true });
    expect(JSON.stringify(result)).toContain("invalid patch");
    expect((await harness.prompt("more")).status).toBe("done");
  });
});

describe("Session API: abort while the prompt is being prepared", () => {
  it("an abort during beforeAgentStart ends the run as aborted", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    harness = await make({ hooks: { beforeAgentStart: () => gate } });
    const running = harness.prompt("hello");
    harness.abort("user pressed escape");
    release();
    const outcome = await running;
    expect(outcome.status).toBe("aborted");
    expect(harness.getState().status).toBe("idle");
  });
});

describe("Session API: automatic compaction between turns", () => {
  it("compacts at the threshold mid-run, through sessionBeforeCompact (reason threshold) and sessionCompact", async () => {
    const seen: string[] = [];
    harness = await createHarness({
      eventLog: createMemoryEventLog(),
      models: {
        main: {
          model: scriptedModel(
            [
              { text: "early reply", usage: { input: 100, output: 10 } },
              { toolCalls: [{ id: "c1", name: "noop", arguments: {} }], usage: { input: 5000, output: 10 } },
              { text: "after compaction", usage: { input: 300, output: 10 } },
            ],
            { provider: "openai.chat", modelId: "m" },
          ),
          contextWindow: 4000,
        },
      },
      tools: [echoTool("noop")],
      compaction: { reserveTokens: 1000, keepRecentTokens: 1 },
      hooks: {
        sessionBeforeCompact: ({ reason }) => {
          seen.push(`before:${reason}`);
          return { compaction: { summary: "summary from the hook" } };
        },
        sessionCompact: ({ reason, fromHook }) => void seen.push(`after:${reason}:${fromHook}`),
      },
    });
    await harness.prompt("warm up");
    const outcome = await harness.prompt("use the tool");
    expect(outcome.status).toBe("done");
    expect(outcome.lastAssistant?.content).toEqual([{ type: "text", text: "after compaction" }]);
    expect(seen).toEqual(["before:threshold", "after:threshold:true"]);
    const compaction = harness.session.view.getEntries().find((entry) => entry.type === "compaction");
    expect(compaction).toMatchObject({ summary: "summary from the hook", fromHook: true });
  });
});

describe("harness.on", () => {
  it("applies to the primary session and to sessions opened later; its remover removes it everywhere", async () => {
    const seen: string[] = [];
    harness = await make();
    const remove = harness.on("thinkingLevelUpdate", ({ thinkingLevel }) => void seen.push(thinkingLevel));
    const other = await harness.createSession();
    const ownOnly = await harness.createSession();
    ownOnly.on("thinkingLevelUpdate", () => void seen.push("own"));
    await harness.setThinkingLevel("low");
    await other.setThinkingLevel("medium");
    await ownOnly.setThinkingLevel("high");
    expect(seen).toEqual(["low", "medium", "high", "own"]);
    remove();
    await other.setThinkingLevel("off");
    expect(seen).toHaveLength(4);
  });
});

describe("appendCustomMessage while a run is active", () => {
  it("deliverAs steer joins the run after the tool batch; followUp after the run would stop", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    harness = await createHarness({
      eventLog: createMemoryEventLog(),
      models: {
        main: scriptedModel(
          [{ toolCalls: [{ id: "c1", name: "wait", arguments: {} }] }, { text: "saw the steer" }, { text: "saw the follow-up" }],
          { provider: "openai.chat", modelId: "m" },
        ),
      },
      tools: [
        {
          name: "wait",
          description: "Waits",
          parameters: { type: "object", properties: {} },
          execute: async () => {
            started();
            await gate;
            return { content: [{ type: "text" as const, text: "waited" }] };
          },
        },
      ],
    });
    const running = harness.prompt("go");
    await toolStarted;
    await harness.appendCustomMessage("monitor", "disk almost full", { deliverAs: "steer" });
    await harness.appendCustomMessage("monitor", "also: rotate logs", { deliverAs: "followUp" });
    expect(harness.hasQueuedMessages()).toBe(true);
    release();
    const outcome = await running;
    expect(outcome.messages.map((message) => (message.role === "custom" ? `custom:${message.content}` : message.role))).toEqual([
      "user",
      "assistant",
      "toolResult",
      "custom:disk almost full",
      "assistant",
      "custom:also: rotate logs",
      "assistant",
    ]);
    expect(harness.hasQueuedMessages()).toBe(false);
  });
});

describe("a harness that lost a write race (issue 19 item 7)", () => {
  it("is not stuck: the refused prompt says so, and the next prompt reloads the session and runs", async () => {
    const log = createMemoryEventLog();
    harness = await make({}, log);
    const { createSessionRepository } = await import("../../src/store/session-repository.ts");
    const other = await createSessionRepository({ log }).open(harness.id);
    await other.appendEntry({ type: "session_info", name: "named by another writer" });
    const lost = await harness.prompt("first");
    expect(lost).toMatchObject({ status: "failed", code: "EXPECTED_VERSION_CONFLICT" });
    expect(lost.error).toMatch(/reload\(\)/);
    const next = await harness.prompt("second");
    expect(next.status).toBe("done");
    expect(harness.getState().sessionName).toBe("named by another writer");
    await other.refresh!();
    await other.appendEntry({ type: "session_info", name: "again" });
    await harness.reload();
    expect(harness.getState().sessionName).toBe("again");
  });
});
