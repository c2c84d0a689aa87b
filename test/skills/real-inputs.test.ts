/**
 * Skills on the real third-party files in ../shared/real-inputs/skills/, and
 * differential checks against pi 0.73.1's loader and catalog.
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { AgentSession, formatSkillsForPrompt, loadSkills as piLoadSkills } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { formatSkillInvocation, formatSkillsForSystemPrompt, loadSkills } from "../../src/adapters/skills/index.ts";
import type { SkillDiagnosticCode } from "../../src/adapters/skills/index.ts";
import { sharedPath } from "../shared-dir.ts";

const ROOT = sharedPath("real-inputs/skills");

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

type Expected =
  | { loads: string; warnings?: SkillDiagnosticCode[]; disabled?: boolean }
  | { skipped: SkillDiagnosticCode; severity?: "error" | "info" }
  | { notASkill: true };

/** Every file under real-inputs/skills and what loading the root must do with it. */
const EXPECTED: Record<string, Expected> = {
  "README.md": { notASkill: true },
  "SPEC-NOTES.md": { notASkill: true },
  "anthropics/claude-api/SKILL.md": { loads: "claude-api", warnings: ["description-too-long"] },
  "anthropics/frontend-design/SKILL.md": { loads: "frontend-design" },
  "anthropics/internal-comms/SKILL.md": { loads: "internal-comms" },
  "anthropics/mcp-builder/SKILL.md": { loads: "mcp-builder" },
  "anthropics/skill-creator/SKILL.md": { loads: "skill-creator" },
  "anthropics/webapp-testing/SKILL.md": { loads: "webapp-testing" },
  "edge-cases/openclaw-skills/adaptive-suite/SKILL.md": { loads: "adaptive-suite" },
  "edge-cases/openclaw-skills/brainstorming-studio/SKILL.md": { skipped: "frontmatter-missing" },
  "edge-cases/openclaw-skills/host-ping-detect/SKILL.md": { skipped: "frontmatter-invalid" },
  "edge-cases/openclaw-skills/morning-briefing/SKILL.md": { skipped: "frontmatter-unclosed" },
  "edge-cases/openclaw-skills/parcel-package-tracking/SKILL.md": { loads: "parcel-package-tracking" },
  "edge-cases/pi-mono-test-fixtures/consecutive-hyphens/SKILL.md": { loads: "bad--name", warnings: ["name-mismatch", "name-consecutive-hyphens"] },
  "edge-cases/pi-mono-test-fixtures/disable-model-invocation/SKILL.md": { loads: "disable-model-invocation", disabled: true },
  "edge-cases/pi-mono-test-fixtures/invalid-name-chars/SKILL.md": { loads: "Invalid_Name", warnings: ["name-mismatch", "name-invalid-chars"] },
  "edge-cases/pi-mono-test-fixtures/invalid-yaml/SKILL.md": { skipped: "frontmatter-invalid" },
  "edge-cases/pi-mono-test-fixtures/long-name/SKILL.md": {
    loads: "this-is-a-very-long-skill-name-that-exceeds-the-sixty-four-character-limit-set-by-the-standard",
    warnings: ["name-mismatch", "name-too-long"],
  },
  "edge-cases/pi-mono-test-fixtures/missing-description/SKILL.md": { skipped: "description-missing" },
  "edge-cases/pi-mono-test-fixtures/multiline-description/SKILL.md": { loads: "multiline-description" },
  "edge-cases/pi-mono-test-fixtures/name-mismatch/SKILL.md": { loads: "different-name", warnings: ["name-mismatch"] },
  "edge-cases/pi-mono-test-fixtures/nested/child-skill/SKILL.md": { loads: "child-skill" },
  "edge-cases/pi-mono-test-fixtures/no-frontmatter/SKILL.md": { skipped: "frontmatter-missing" },
  "edge-cases/pi-mono-test-fixtures/root-skill-preferred/SKILL.md": { loads: "root-skill-preferred" },
  "edge-cases/pi-mono-test-fixtures/root-skill-preferred/nested-child/SKILL.md": { skipped: "nested-skill-ignored", severity: "info" },
  "edge-cases/pi-mono-test-fixtures/unknown-field/SKILL.md": { loads: "unknown-field" },
  "edge-cases/pi-mono-test-fixtures/valid-skill/SKILL.md": { loads: "valid-skill" },
};

describe("loadSkills on every real SKILL.md", () => {
  const result = loadSkills([ROOT]);
  const rel = (path: string) => relative(ROOT, path);

  it("has an expectation for every file in the folder (a new file must be classified)", () => {
    expect(listFiles(ROOT).map(rel).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [file, expected] of Object.entries(EXPECTED)) {
    it(`${file}: ${"loads" in expected ? `loads as ${expected.loads}` : "skipped" in expected ? `is skipped with ${expected.skipped}` : "is not a skill"}`, () => {
      const diagnostics = result.diagnostics.filter((diagnostic) => rel(diagnostic.path) === file);
      const skill = result.skills.find((candidate) => rel(candidate.filePath) === file);
      if ("notASkill" in expected) {
        expect(skill).toBeUndefined();
        expect(diagnostics).toEqual([]);
      } else if ("loads" in expected) {
        expect(skill?.name).toBe(expected.loads);
        expect(skill?.disableModelInvocation).toBe(expected.disabled ?? false);
        expect(skill?.description).not.toMatch(/\s{2,}|\n/);
        expect(diagnostics.map((diagnostic) => diagnostic.code)).toEqual(expected.warnings ?? []);
        expect(diagnostics.every((diagnostic) => diagnostic.severity === "warning")).toBe(true);
      } else {
        expect(skill).toBeUndefined();
        expect(diagnostics.map((diagnostic) => diagnostic.code)).toEqual([expected.skipped]);
        expect(diagnostics[0].severity).toBe(expected.severity ?? "error");
        expect(diagnostics[0].message.length).toBeGreaterThan(10);
      }
    });
  }

  it("names the file line of a YAML error", () => {
    const host = result.diagnostics.find((diagnostic) => diagnostic.path.endsWith("host-ping-detect/SKILL.md"));
    expect(host?.line).toBe(3);
    expect(host?.message).toMatch(/line 3/);
  });

  it("keeps the body without frontmatter and tolerates CRLF", () => {
    const adaptive = result.skills.find((skill) => skill.name === "adaptive-suite");
    expect(adaptive?.body).not.toContain("\r");
    expect(adaptive?.body.startsWith("---")).toBe(false);
    expect(adaptive?.frontmatter["user-invocable"]).toBe(true);
    expect(adaptive?.description.startsWith("A continuously adaptive skill suite")).toBe(true);
  });
});

describe("differential against pi 0.73.1", () => {
  // pi loads root-level *.md files in its own skill folders; compare with that opt-in.
  const ours = loadSkills([ROOT], { includeRootFiles: true });
  const pi = piLoadSkills({ cwd: ROOT, agentDir: join(ROOT, "no-such-agent-dir"), skillPaths: [ROOT], includeDefaults: false });

  it("loads the same skills with the same names, paths and flags", () => {
    const summary = (skills: { name: string; filePath: string; disableModelInvocation: boolean }[]) =>
      skills.map(({ name, filePath, disableModelInvocation }) => ({ name, filePath, disableModelInvocation })).sort((a, b) => a.filePath.localeCompare(b.filePath));
    expect(summary(ours.skills)).toEqual(summary(pi.skills));
  });

  it("has the same descriptions once whitespace is collapsed (ours are single-line on purpose)", () => {
    for (const skill of ours.skills) {
      const piSkill = pi.skills.find((candidate) => candidate.filePath === skill.filePath);
      expect(skill.description).toBe(piSkill?.description.replace(/\s+/g, " ").trim());
    }
    const multiline = pi.skills.find((skill) => skill.name === "multiline-description");
    expect(multiline?.description).toContain("\n");
  });

  it("reports a diagnostic for every file pi reports", () => {
    const ourPaths = new Set(ours.diagnostics.map((diagnostic) => diagnostic.path));
    for (const diagnostic of pi.diagnostics) expect(ourPaths.has(diagnostic.path ?? "(no path)")).toBe(true);
  });

  it("formats the same catalog as pi for single-line descriptions", () => {
    const singleLine = ours.skills.filter((skill) => !pi.skills.find((p) => p.filePath === skill.filePath)?.description.includes("\n"));
    const piSingleLine = pi.skills.filter((skill) => !skill.description.includes("\n"));
    expect(singleLine.length).toBeGreaterThan(10);
    expect(formatSkillsForSystemPrompt(singleLine)).toBe(formatSkillsForPrompt(piSingleLine));
    expect(formatSkillsForSystemPrompt(singleLine)).not.toContain("<name>disable-model-invocation</name>");
  });

  it("differs on purpose for block-scalar descriptions: ours stay on one line", () => {
    const name = "multiline-description";
    const oursText = formatSkillsForSystemPrompt(ours.skills.filter((skill) => skill.name === name));
    const piText = formatSkillsForPrompt(pi.skills.filter((skill) => skill.name === name));
    expect(oursText).toContain("<description>This is a multiline description. It spans multiple lines. And should be normalized.</description>");
    expect(piText).not.toBe(oursText);
  });

  it("expands /skill:name args to the same text as pi's AgentSession", () => {
    for (const name of ["valid-skill", "adaptive-suite", "claude-api"]) {
      const skill = ours.skills.find((candidate) => candidate.name === name)!;
      const piSkill = pi.skills.find((candidate) => candidate.name === name)!;
      const fakeSession = { resourceLoader: { getSkills: () => ({ skills: [piSkill] }) }, _extensionRunner: { emitError() {} } };
      const expand = (text: string) => (AgentSession.prototype as any)._expandSkillCommand.call(fakeSession, text) as string;
      expect(formatSkillInvocation(skill, "  do it now ")).toBe(expand(`/skill:${name}   do it now `));
      expect(formatSkillInvocation(skill)).toBe(expand(`/skill:${name}`));
    }
  });
});
