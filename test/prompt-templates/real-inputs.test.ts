/**
 * Prompt templates on every real file in ../shared/real-inputs/prompts/, with
 * differential checks against pi 0.73.1's loader and expansion.
 */
import { readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { expandSlashCommand, formatPromptTemplateInvocation, loadPromptTemplates } from "../../src/adapters/prompt-templates/index.ts";
import type { PromptTemplateDiagnosticCode } from "../../src/adapters/prompt-templates/index.ts";
import { sharedPath } from "../shared-dir.ts";

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = sharedPath("real-inputs/prompts");
const DIRS = [ROOT, join(ROOT, "claudesidian"), join(ROOT, "pi-mono"), join(ROOT, "wshobson-commands")];

type PiTemplate = { name: string; description: string; argumentHint?: unknown; content: string; filePath: string };
type PiTemplates = {
  loadPromptTemplates(options: { cwd: string; agentDir: string; promptPaths: string[]; includeDefaults: boolean }): PiTemplate[];
  expandPromptTemplate(text: string, templates: PiTemplate[]): string;
};
const piFile = resolve(here, "../../node_modules/@mariozechner/pi-coding-agent/dist/core/prompt-templates.js");
const pi = (await import(pathToFileURL(piFile).href)) as PiTemplates;

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

interface Expected {
  name: string;
  description: string;
  argumentHint?: string;
  warnings?: PromptTemplateDiagnosticCode[];
  placeholders: string[];
}

/** Every file under real-inputs/prompts and what loading it must give. */
const EXPECTED: Record<string, Expected> = {
  "README.md": { name: "README", description: "# Real prompt-template / slash-command files (third-party)", placeholders: ["$1", "$@", "$ARGUMENTS"] },
  "claudesidian/add-frontmatter.md": {
    name: "add-frontmatter",
    description: "Add or update YAML frontmatter properties to enhance note organization",
    argumentHint: "[file or folder path]",
    placeholders: ["${1}"],
  },
  "claudesidian/de-ai-ify.md": {
    name: "de-ai-ify",
    description: "Remove AI-generated jargon and restore human voice to text",
    argumentHint: "[file_path]",
    placeholders: ["$ARGUMENTS"],
  },
  "claudesidian/install-claudesidian-command.md": {
    name: "install-claudesidian-command",
    description: "Install claudesidian shell command to launch Claude Code from anywhere",
    argumentHint: "(optional shell: bash/zsh/fish)",
    warnings: ["frontmatter-invalid"],
    placeholders: ["$1"],
  },
  "pi-mono/implement.md": {
    name: "implement",
    description: "Full implementation workflow - scout gathers context, planner creates plan, worker implements",
    placeholders: ["$@"],
  },
  "pi-mono/is.md": { name: "is", description: "Analyze GitHub issues (bugs or feature requests)", placeholders: ["$ARGUMENTS"] },
  "pi-mono/pr.md": { name: "pr", description: "Review PRs from URLs with structured issue and code analysis", placeholders: ["$@"] },
  "wshobson-commands/ai-review.md": { name: "ai-review", description: "# AI/ML Code Review", placeholders: ["$ARGUMENTS"] },
};

describe("loadPromptTemplates on every real file", () => {
  const result = loadPromptTemplates(DIRS);

  it("has an expectation for every file in the folder", () => {
    expect(listFiles(ROOT).map((path) => relative(ROOT, path)).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [file, expected] of Object.entries(EXPECTED)) {
    it(`${file} loads as /${expected.name}`, () => {
      const template = result.templates.find((candidate) => candidate.filePath === join(ROOT, file));
      expect(template).toMatchObject({ name: expected.name, description: expected.description });
      expect(template?.argumentHint).toBe(expected.argumentHint);
      const diagnostics = result.diagnostics.filter((diagnostic) => diagnostic.path === join(ROOT, file));
      expect(diagnostics.map((diagnostic) => diagnostic.code)).toEqual(expected.warnings ?? []);
      expect(template!.content).not.toMatch(/^---/);
      for (const placeholder of expected.placeholders) expect(template!.content).toContain(placeholder);
      // Expanding with arguments leaves no placeholder of the kinds the file uses.
      const expanded = formatPromptTemplateInvocation(template!, "alpha 'beta gamma'");
      for (const placeholder of ["$ARGUMENTS", "$@", "$1", "${1}"]) expect(expanded).not.toContain(placeholder);
    });
  }

  it("keeps the body of a template whose frontmatter is invalid YAML, and says which fields were recovered", () => {
    const diagnostic = result.diagnostics.find((candidate) => candidate.code === "frontmatter-invalid")!;
    expect(diagnostic.severity).toBe("warning");
    expect(diagnostic.line).toBe(4);
    expect(diagnostic.message).toMatch(/line 4/);
    expect(diagnostic.message).toMatch(/allowed-tools, description, argument-hint/);
    const template = result.templates.find((candidate) => candidate.name === "install-claudesidian-command")!;
    expect(template.content.startsWith("# Install Claudesidian Command")).toBe(true);
    expect(template.frontmatter["allowed-tools"]).toEqual(["Read", "Write", "Bash"]);
  });

  it("substitutes $1 inside the fenced bash block too, as pi and Claude Code do", () => {
    const template = result.templates.find((candidate) => candidate.name === "install-claudesidian-command")!;
    const text = expandSlashCommand("/install-claudesidian-command zsh", { templates: result.templates }).text;
    expect(text).toContain('if [ -n "zsh" ]; then');
    expect(text).toContain('CONFIG_FILE="$HOME/.zshrc"');
    expect(template.content).toContain('if [ -n "$1" ]; then');
  });

  it("keeps {previous} and both $@ uses in implement.md", () => {
    const text = expandSlashCommand('/implement add "retry logic"', { templates: result.templates }).text;
    expect(text).toContain("find all code relevant to: add retry logic");
    expect(text).toContain('plan for "add retry logic"');
    expect(text).toContain("{previous}");
  });
});

describe("differential against pi 0.73.1 on the real files", () => {
  const ours = loadPromptTemplates(DIRS);
  const piTemplates = pi.loadPromptTemplates({ cwd: ROOT, agentDir: join(ROOT, "no-such-agent-dir"), promptPaths: DIRS, includeDefaults: false });

  it("loads the same templates with the same names, descriptions and (trimmed) content, plus the invalid-YAML one pi drops", () => {
    const piNames = piTemplates.map((template) => template.name).sort();
    expect(ours.templates.map((template) => template.name).sort()).toEqual([...piNames, "install-claudesidian-command"].sort());
    for (const template of piTemplates) {
      const mine = ours.templates.find((candidate) => candidate.name === template.name)!;
      expect(mine.content).toBe(template.content.trim());
      expect(mine.description).toBe(template.description);
      expect(mine.filePath).toBe(template.filePath);
    }
  });

  it("turns a YAML-list argument hint back into text (pi hands out the array)", () => {
    const piHint = piTemplates.find((template) => template.name === "de-ai-ify")!.argumentHint;
    expect(piHint).toEqual(["file_path"]);
    expect(ours.templates.find((template) => template.name === "de-ai-ify")!.argumentHint).toBe("[file_path]");
  });

  it("expands every real template like pi for plain arguments, except ${1} which pi leaves as text", () => {
    for (const template of piTemplates.filter((candidate) => !candidate.content.includes("${1}"))) {
      const input = `/${template.name} first "second arg" third`;
      expect(expandSlashCommand(input, { templates: ours.templates }).text).toBe(pi.expandPromptTemplate(input, piTemplates).trim());
    }
  });

  it("substitutes ${1} in add-frontmatter.md (pi 0.73.1 sends it to the model as is)", () => {
    const input = "/add-frontmatter notes/today.md";
    expect(expandSlashCommand(input, { templates: ours.templates }).text).toContain("- Path: notes/today.md (file or folder to process)");
    expect(pi.expandPromptTemplate(input, piTemplates)).toContain("- Path: ${1} (file or folder to process)");
  });

  it("differs on purpose when an argument holds $& or a placeholder (pi #9588)", () => {
    const input = "/is https://x.test/issues/1 $& $ARGUMENTS";
    const ourText = expandSlashCommand(input, { templates: ours.templates }).text;
    expect(ourText).toContain("Analyze GitHub issue(s): https://x.test/issues/1 $& $ARGUMENTS\n");
    expect(pi.expandPromptTemplate(input, piTemplates)).not.toContain("issues/1 $& $ARGUMENTS\n");
  });
});
