import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { loadSkills } from "../../src/adapters/skills/load-skills.ts";
import { HarnessConfigError } from "../../src/core/errors.ts";
import { buildSystemPrompt, localDate } from "../../src/harness/system-prompt.ts";
import { sharedPath } from "../shared-dir.ts";

const SKILLS = sharedPath("real-inputs/skills/anthropics");
const piRoot = join(process.cwd(), "node_modules/@mariozechner/pi-coding-agent");

async function piBuildSystemPrompt(options: Record<string, unknown>): Promise<string> {
  const module = (await import(pathToFileURL(join(piRoot, "dist/core/system-prompt.js")).href)) as { buildSystemPrompt: (o: unknown) => string };
  return module.buildSystemPrompt(options);
}

describe("buildSystemPrompt", () => {
  const { skills } = loadSkills([SKILLS]);
  const read = { name: "read", description: "Read a file" };

  it("loads the real skills used below", () => {
    expect(skills.length).toBeGreaterThan(3);
  });

  it("matches pi 0.73.1 byte for byte for a custom string prompt with the read tool and real skills", async () => {
    const ours = buildSystemPrompt({ systemPrompt: "You are a reviewer.", tools: [read], skills, cwd: "/work/repo" });
    const theirs = await piBuildSystemPrompt({ customPrompt: "You are a reviewer.", selectedTools: ["read"], skills, cwd: "/work/repo", contextFiles: [] });
    expect(ours).toBe(theirs);
    expect(ours).toContain("<available_skills>");
  });

  it("matches pi without a read tool: no catalog", async () => {
    const ours = buildSystemPrompt({ systemPrompt: "Base.", tools: [{ name: "bash", description: "Run" }], skills, cwd: "/w" });
    const theirs = await piBuildSystemPrompt({ customPrompt: "Base.", selectedTools: ["bash"], skills, cwd: "/w", contextFiles: [] });
    expect(ours).toBe(theirs);
    expect(ours).not.toContain("<available_skills>");
  });

  it("uses Arbor's default listing the tools when no prompt is given", () => {
    const prompt = buildSystemPrompt({ tools: [read, { name: "grep", description: "Search files\nwith ripgrep" }], skills: [], cwd: "/w", now: new Date(2026, 10, 30) });
    expect(prompt).toContain("- read: Read a file\n- grep: Search files\n");
    expect(prompt.endsWith("\nCurrent date: 2026-11-30\nCurrent working directory: /w")).toBe(true);
  });

  it("hands a function the tools, model-invocable skills, cwd and date and uses its result verbatim", () => {
    const hidden = { ...skills[0], name: "hidden", disableModelInvocation: true };
    let seen: unknown;
    const prompt = buildSystemPrompt({
      systemPrompt: (context) => {
        seen = context;
        return "exactly this";
      },
      tools: [read],
      skills: [...skills, hidden],
      cwd: "/w",
      now: new Date(2026, 0, 2),
    });
    expect(prompt).toBe("exactly this");
    expect(seen).toMatchObject({ tools: [read], cwd: "/w", date: "2026-01-02" });
    expect((seen as { skills: { name: string }[] }).skills.map((s) => s.name)).not.toContain("hidden");
  });

  it("throws HarnessConfigError naming systemPrompt when the function misbehaves", () => {
    expect(() => buildSystemPrompt({ systemPrompt: () => 3 as never, tools: [], skills: [], cwd: "/" })).toThrow(HarnessConfigError);
    expect(() => buildSystemPrompt({ systemPrompt: () => { throw new Error("x"); }, tools: [], skills: [], cwd: "/" })).toThrow(/"systemPrompt"/);
  });

  it("formats local dates with zero padding", () => {
    expect(localDate(new Date(2026, 2, 5))).toBe("2026-03-05");
  });
});
