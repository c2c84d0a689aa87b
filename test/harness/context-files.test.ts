/**
 * Project context files (issue 12 item 2), differential against pi 0.73.1: the same AGENTS.md /
 * CLAUDE.md files are found (global folder, then every ancestor down to the working folder) and
 * the system prompt is byte-identical to pi's `buildSystemPrompt` with `contextFiles`. Then end to
 * end: the CLI puts them into the system prompt it sends (real CLI process, loopback OpenAI-wire
 * server), `ARBOR_AGENT_DIR` names the global folder, and `--no-context-files` leaves them out.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSkills } from "../../src/adapters/skills/load-skills.ts";
import { defaultAgentDir, formatContextFiles, loadContextFiles } from "../../src/harness/context-files.ts";
import { buildSystemPrompt } from "../../src/harness/system-prompt.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor } from "../cli/cli-helpers.ts";
import { sharedPath } from "../shared-dir.ts";

const piRoot = join(process.cwd(), "node_modules/@mariozechner/pi-coding-agent");
type PiFile = { path: string; content: string };

async function pi() {
  const prompt = (await import(pathToFileURL(join(piRoot, "dist/core/system-prompt.js")).href)) as { buildSystemPrompt: (options: unknown) => string };
  const loader = (await import(pathToFileURL(join(piRoot, "dist/core/resource-loader.js")).href)) as { loadProjectContextFiles: (options: { cwd: string; agentDir: string }) => PiFile[] };
  return { buildSystemPrompt: prompt.buildSystemPrompt, loadProjectContextFiles: loader.loadProjectContextFiles };
}

/** A tree: agent/AGENTS.md, root/CLAUDE.md, root/a/AGENTS.md and CLAUDE.md (AGENTS wins), root/a/b (none), root/a/b/c/CLAUDE.md (cwd). */
function makeTree() {
  const base = mkdtempSync(join(tmpdir(), "arbor-context-"));
  const agentDir = join(base, "agent");
  const root = join(base, "root");
  const cwd = join(root, "a", "b", "c");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(agentDir, "AGENTS.md"), "Global rule: answer in English.\n");
  writeFileSync(join(root, "CLAUDE.md"), "Root rule: run the tests.");
  writeFileSync(join(root, "a", "AGENTS.md"), "A rule: use pnpm.\n\n## Details\n- tabs, not spaces\n");
  writeFileSync(join(root, "a", "CLAUDE.md"), "never read: AGENTS.md wins in this folder\n");
  writeFileSync(join(cwd, "CLAUDE.md"), "C rule: é ü ☃\n");
  return { base, agentDir, root, cwd };
}

describe("context files (pi differential)", () => {
  it("finds the same files in the same order as pi's loadProjectContextFiles", async () => {
    const { agentDir, cwd } = makeTree();
    const ours = loadContextFiles({ cwd, agentDir });
    const theirs = (await pi()).loadProjectContextFiles({ cwd, agentDir });
    expect(ours).toEqual(theirs);
    expect(ours.map((file) => file.content.split("\n")[0])).toEqual(["Global rule: answer in English.", "Root rule: run the tests.", "A rule: use pnpm.", "C rule: é ü ☃"]);
  });

  it("takes the global folder's file once when the working folder is the global folder", async () => {
    const { agentDir } = makeTree();
    const ours = loadContextFiles({ cwd: agentDir, agentDir });
    expect(ours).toEqual((await pi()).loadProjectContextFiles({ cwd: agentDir, agentDir }));
    expect(ours.filter((file) => file.path === join(agentDir, "AGENTS.md"))).toHaveLength(1);
  });

  it("builds the system prompt byte for byte as pi's buildSystemPrompt with contextFiles (with and without read and skills)", async () => {
    const { agentDir, cwd } = makeTree();
    const contextFiles = loadContextFiles({ cwd, agentDir });
    const { skills } = loadSkills([sharedPath("real-inputs/skills/anthropics")]);
    const piBuild = (await pi()).buildSystemPrompt;
    for (const [tools, withSkills] of [[["read"], true], [["bash"], true], [["read"], false]] as const) {
      const ours = buildSystemPrompt({ systemPrompt: "You are a reviewer.", tools: tools.map((name) => ({ name, description: name })), skills: withSkills ? skills : [], cwd, contextFiles });
      const theirs = piBuild({ customPrompt: "You are a reviewer.", selectedTools: [...tools], skills: withSkills ? skills : [], cwd, contextFiles });
      expect(ours).toBe(theirs);
      expect(ours).toContain("\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n");
    }
    expect(formatContextFiles([])).toBe("");
    expect(buildSystemPrompt({ systemPrompt: "X", tools: [], skills: [], cwd, contextFiles: [] })).toBe(piBuild({ customPrompt: "X", selectedTools: [], skills: [], cwd, contextFiles: [] }));
  });

  it("the global folder is $ARBOR_AGENT_DIR (with ~), else ~/.arbor/agent", () => {
    expect(defaultAgentDir({ ARBOR_AGENT_DIR: "/opt/agent" })).toBe("/opt/agent");
    expect(defaultAgentDir({ ARBOR_AGENT_DIR: "~/agents" }).endsWith("/agents")).toBe(true);
    expect(defaultAgentDir({}).endsWith("/.arbor/agent")).toBe(true);
  });
});

describe("context files in the CLI", { timeout: 120_000 }, () => {
  let server: OpenAIServer;
  beforeEach(async () => {
    server = await startOpenAIServer();
  });
  afterEach(async () => {
    await server.close();
  });

  const systemOf = (index: number) => {
    const messages = (server.requests[index].body as { messages: { role: string; content: unknown }[] }).messages;
    return String(messages.find((message) => message.role === "system" || message.role === "developer")?.content ?? "");
  };

  it("arbor run sends the global and ancestor files under # Project Context; --no-context-files leaves them out", async () => {
    const { base, agentDir, root, cwd } = makeTree();
    const db = join(base, "arbor.db");
    const env = { OPENAI_API_KEY: "k", ARBOR_AGENT_DIR: agentDir };
    server.script(textResponse("ok"), textResponse("ok again"));
    const first = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", cwd, "hello"], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`context: ${join(agentDir, "AGENTS.md")}, ${join(root, "CLAUDE.md")}, ${join(root, "a", "AGENTS.md")}, ${join(cwd, "CLAUDE.md")}`);
    const system = systemOf(0);
    expect(system).toContain(formatContextFiles(loadContextFiles({ cwd, agentDir })));
    expect(system).not.toContain("never read");
    const second = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--continue", "--no-context-files", "again"], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(systemOf(1)).not.toContain("# Project Context");
    expect(second.stderr).not.toContain("context:");
  });
});
