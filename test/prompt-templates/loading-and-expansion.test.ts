/**
 * Template loading rules on crafted files, and expandSlashCommand for
 * templates and skills.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expandSlashCommand, loadPromptTemplates } from "../../src/adapters/prompt-templates/index.ts";
import { loadSkills } from "../../src/adapters/skills/index.ts";

const here = dirname(fileURLToPath(import.meta.url));
const piFile = resolve(here, "../../node_modules/@mariozechner/pi-coding-agent/dist/core/prompt-templates.js");
const pi = (await import(pathToFileURL(piFile).href)) as { expandPromptTemplate(text: string, templates: { name: string; content: string }[]): string };

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "arbor-templates-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function write(path: string, text: string): string {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
  return full;
}

describe("loadPromptTemplates rules", () => {
  it("skips a template whose frontmatter is never closed, because its body's start is unknown", () => {
    const path = write("p/open.md", "---\ndescription: never closed\nDo the thing with $1\n");
    const { templates, diagnostics } = loadPromptTemplates([join(root, "p")]);
    expect(templates).toEqual([]);
    expect(diagnostics).toEqual([expect.objectContaining({ severity: "error", code: "frontmatter-unclosed", path, line: 1 })]);
  });

  it("loads the seed's JSON frontmatter, BOM and CRLF", () => {
    write("p/json.md", '\uFEFF{"description": "From JSON", "argument-hint": "<file>"}\r\n---\r\nReview $1\r\n');
    const { templates, diagnostics } = loadPromptTemplates([join(root, "p")]);
    expect(diagnostics).toEqual([]);
    expect(templates).toMatchObject([{ name: "json", description: "From JSON", argumentHint: "<file>", content: "Review $1" }]);
  });

  it("uses the first body line (60 chars + ...) when the description is missing or not a string", () => {
    const long = "x".repeat(70);
    write("p/a.md", `\n\n${long}\nmore`);
    write("p/b.md", "---\ndescription: [not, text]\n---\nFirst line\n");
    const { templates, diagnostics } = loadPromptTemplates([join(root, "p")]);
    expect(templates.map((template) => template.description)).toEqual([`${"x".repeat(60)}...`, "First line"]);
    expect(diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.severity])).toEqual([["description-invalid", "warning"]]);
  });

  it("is not recursive, reports collisions (first wins), unusable names and missing paths", () => {
    write("one/fix.md", "first fix");
    write("one/nested/deep.md", "not loaded");
    const loser = write("two/fix.md", "second fix");
    const spaced = write("two/my command.md", "unusable");
    write("two/notes.txt", "not markdown");
    const { templates, diagnostics } = loadPromptTemplates([join(root, "one"), join(root, "two"), join(root, "missing")]);
    expect(templates.map((template) => [template.name, template.content])).toEqual([["fix", "first fix"]]);
    expect(diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.path])).toEqual([
      ["name-collision", loser],
      ["name-invalid", spaced],
      ["path-missing", join(root, "missing")],
    ]);
  });

  it("recovers fields line by line from invalid frontmatter without choking on hostile YAML", () => {
    const bomb = `a: [&x [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], ${Array.from({ length: 30 }, () => "[*x, *x, *x, *x, *x, *x, *x, *x, *x, *x]").join(", ")}]`;
    write("p/hostile.md", `---\ndescription: Still described\nargument-hint: (x: y)\n${bomb}\n---\nBody $1\n`);
    const { templates, diagnostics } = loadPromptTemplates([join(root, "p")]);
    expect(templates).toMatchObject([{ name: "hostile", description: "Still described", argumentHint: "(x: y)", content: "Body $1" }]);
    expect(diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["frontmatter-invalid"]);
  });

  it("refuses a template that is not UTF-8 text", () => {
    const path = join(root, "p", "bin.md");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, Buffer.from([0x2f, 0xff, 0xfe, 0xfd]));
    const { templates, diagnostics } = loadPromptTemplates([join(root, "p")]);
    expect(templates).toEqual([]);
    expect(diagnostics).toEqual([expect.objectContaining({ severity: "error", code: "encoding-invalid", path })]);
  });

  it("loads a single .md file path and refuses other files", () => {
    const file = write("solo.md", "solo $@");
    const other = write("solo.txt", "x");
    const { templates, diagnostics } = loadPromptTemplates([file, other]);
    expect(templates.map((template) => template.name)).toEqual(["solo"]);
    expect(diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["path-unsupported"]);
  });
});

describe("expandSlashCommand", () => {
  function resources() {
    write("prompts/review.md", "---\ndescription: Review\n---\nReview $1 focusing on ${2:-bugs}. All: $ARGUMENTS");
    write("skills/debug/SKILL.md", "---\nname: debug\ndescription: Debugging.\n---\n# Debug\nSteps.");
    write("skills/manual/SKILL.md", "---\nname: manual\ndescription: Manual only.\ndisable-model-invocation: true\n---\nManual body.");
    return { templates: loadPromptTemplates([join(root, "prompts")]).templates, skills: loadSkills([join(root, "skills")]).skills };
  }

  it("expands a template with quoted arguments", () => {
    const result = expandSlashCommand('/review "src/app.ts" perf', resources());
    expect(result).toMatchObject({ kind: "template", args: ["src/app.ts", "perf"], text: "Review src/app.ts focusing on perf. All: src/app.ts perf" });
  });

  it("ends the command name at a newline too (pi needs a space)", () => {
    const { templates } = resources();
    const result = expandSlashCommand("/review\napp.ts", { templates });
    expect(result.text).toBe("Review app.ts focusing on bugs. All: app.ts");
    expect(pi.expandPromptTemplate("/review\napp.ts", templates)).toBe("/review\napp.ts");
  });

  it("expands /skill:name, including a skill hidden from the model", () => {
    const { skills } = resources();
    const debug = expandSlashCommand("/skill:debug  why does it crash? ", { skills });
    expect(debug.kind).toBe("skill");
    expect(debug.text).toBe(`<skill name="debug" location="${join(root, "skills/debug/SKILL.md")}">\nReferences are relative to ${join(root, "skills/debug")}.\n\n# Debug\nSteps.\n</skill>\n\nwhy does it crash?`);
    expect(expandSlashCommand("/skill:manual", { skills }).text).toContain("Manual body.\n</skill>");
  });

  it("passes unknown commands and plain text through unchanged", () => {
    const all = resources();
    for (const text of ["/unknown a b", "/skill:nope x", "/", "hello /review x", " /review x", ""]) {
      expect(expandSlashCommand(text, all)).toEqual({ kind: "none", text });
    }
  });
});
