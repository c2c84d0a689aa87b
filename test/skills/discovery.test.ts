/**
 * Skill discovery and frontmatter rules on crafted directories in a temp dir.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatSkillInvocation, formatSkillsForSystemPrompt, loadSkills } from "../../src/adapters/skills/index.ts";
import { sharedPath } from "../shared-dir.ts";

const REAL = sharedPath("real-inputs/skills");

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "arbor-skills-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function write(path: string, text: string | Buffer): string {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
  return full;
}

function skillFile(name: string, description = `Does ${name} things.`, extra = ""): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# ${name}\n\nBody of ${name}.\n`;
}

describe("frontmatter variants", () => {
  it("loads a file with a BOM before valid frontmatter (derived from anthropics/mcp-builder)", () => {
    const original = readFileSync(join(REAL, "anthropics/mcp-builder/SKILL.md"));
    write("mcp-builder/SKILL.md", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), original]));
    const { skills, diagnostics } = loadSkills([root]);
    expect(diagnostics).toEqual([]);
    expect(skills[0].name).toBe("mcp-builder");
    expect(skills[0].body.startsWith("# MCP Server Development Guide")).toBe(true);
  });

  it("loads BOM + CRLF frontmatter and keeps LF line endings in the body", () => {
    write("crlf/SKILL.md", "\uFEFF---\r\nname: crlf\r\ndescription: Windows file\r\n---\r\nline one\r\nline two\r\n");
    const { skills } = loadSkills([root]);
    expect(skills[0]).toMatchObject({ name: "crlf", description: "Windows file", body: "line one\nline two" });
  });

  it("accepts the seed's JSON-object frontmatter followed by ---", () => {
    write("json-skill/SKILL.md", '{\n  "name": "json-skill",\n  "description": "From JSON",\n  "disable-model-invocation": true\n}\n---\n# Body\n');
    const { skills, diagnostics } = loadSkills([root]);
    expect(diagnostics).toEqual([]);
    expect(skills[0]).toMatchObject({ name: "json-skill", description: "From JSON", disableModelInvocation: true, body: "# Body" });
  });

  it("reports invalid JSON frontmatter and skips the skill", () => {
    write("bad-json/SKILL.md", '{ "name": "bad-json", "description": }\n---\nbody\n');
    const { skills, diagnostics } = loadSkills([root]);
    expect(skills).toEqual([]);
    expect(diagnostics).toMatchObject([{ severity: "error", code: "frontmatter-invalid" }]);
    expect(diagnostics[0].message).toMatch(/JSON/);
  });

  it("skips non-string and blank descriptions, warns on non-string names and non-boolean flags", () => {
    write("list-desc/SKILL.md", "---\nname: list-desc\ndescription: [a, b]\n---\nx\n");
    write("blank-desc/SKILL.md", "---\nname: blank-desc\ndescription: '   '\n---\nx\n");
    write("num-name/SKILL.md", "---\nname: 42\ndescription: numeric name\ndisable-model-invocation: 'true'\n---\nx\n");
    const { skills, diagnostics } = loadSkills([root]);
    expect(skills.map((skill) => skill.name)).toEqual(["num-name"]);
    expect(skills[0].disableModelInvocation).toBe(false);
    expect(diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.severity])).toEqual([
      ["description-missing", "error"],
      ["description-invalid", "error"],
      ["name-invalid", "warning"],
      ["disable-model-invocation-invalid", "warning"],
    ]);
  });

  it("reports a name with leading/trailing hyphens", () => {
    write("-edge-/SKILL.md", skillFile("-edge-"));
    const { diagnostics } = loadSkills([root]);
    expect(diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["name-hyphen-edge"]);
  });
});

describe("discovery", () => {
  it("does not recurse into a skill directory, but recurses elsewhere in name order", () => {
    write("b-group/beta/SKILL.md", skillFile("beta"));
    write("a-group/deep/er/alpha/SKILL.md", skillFile("alpha"));
    write("parent/SKILL.md", skillFile("parent"));
    write("parent/scripts/helper.md", "not a skill");
    const { skills, diagnostics } = loadSkills([root]);
    expect(skills.map((skill) => skill.name)).toEqual(["alpha", "beta", "parent"]);
    expect(diagnostics).toEqual([]);
  });

  it("skips dot directories and node_modules", () => {
    write(".hidden/secret/SKILL.md", skillFile("secret"));
    write("node_modules/pkg/SKILL.md", skillFile("pkg"));
    write("shown/SKILL.md", skillFile("shown"));
    expect(loadSkills([root]).skills.map((skill) => skill.name)).toEqual(["shown"]);
  });

  it("honours .gitignore with git semantics, including nested files and re-includes", () => {
    write(".gitignore", "drafts/\n*.wip\n");
    write("drafts/one/SKILL.md", skillFile("one"));
    write("team/.gitignore", "scratch\n!keep-me\n");
    write("team/sub/scratch/SKILL.md", skillFile("scratch"));
    write("team/sub/ok/SKILL.md", skillFile("ok"));
    write("notes.wip/two/SKILL.md", skillFile("two"));
    write(".ignore", "ignored-too/\n");
    write("ignored-too/three/SKILL.md", skillFile("three"));
    const { skills } = loadSkills([root]);
    // "scratch" has no slash, so it matches at any depth below team/ (pi's prefixing would miss team/sub/scratch).
    expect(skills.map((skill) => skill.name)).toEqual(["ok"]);
  });

  it("lets a !pattern re-include what an earlier pattern excluded", () => {
    write(".gitignore", "drafts/*\n!drafts/keep\n");
    write("drafts/keep/SKILL.md", skillFile("keep"));
    write("drafts/wip/SKILL.md", skillFile("wip"));
    expect(loadSkills([root]).skills.map((skill) => skill.name)).toEqual(["keep"]);
  });

  it("refuses files over 1 MiB and files that are not UTF-8, without reading them into a skill", () => {
    const big = write("big/SKILL.md", skillFile("big") + "x".repeat(1024 * 1024));
    const binary = write("binary/SKILL.md", Buffer.concat([Buffer.from(skillFile("binary")), Buffer.from([0xff, 0xfe, 0x00, 0xc3])]));
    const { skills, diagnostics } = loadSkills([root]);
    expect(skills).toEqual([]);
    expect(diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.path])).toEqual([
      ["file-too-large", big],
      ["encoding-invalid", binary],
    ]);
  });

  it("follows symlinks, loads one real file once, and survives a symlink cycle", () => {
    write("real/linked/SKILL.md", skillFile("linked"));
    symlinkSync(join(root, "real"), join(root, "alias"));
    symlinkSync(root, join(root, "real", "loop"));
    const { skills, diagnostics } = loadSkills([root]);
    expect(skills.map((skill) => skill.name)).toEqual(["linked"]);
    expect(diagnostics).toEqual([]);
  });

  it("reports a name collision and keeps the first skill found", () => {
    const first = write("one/tool/SKILL.md", skillFile("tool", "First."));
    const second = write("two/tool/SKILL.md", skillFile("tool", "Second."));
    const { skills, diagnostics } = loadSkills([join(root, "one"), join(root, "two")]);
    expect(skills.map((skill) => skill.description)).toEqual(["First."]);
    expect(diagnostics).toEqual([
      expect.objectContaining({ code: "name-collision", severity: "error", path: second, collision: { name: "tool", winnerPath: first, loserPath: second } }),
    ]);
  });

  it("loads root-level .md files named after the file only with includeRootFiles", () => {
    write("quick.md", "---\ndescription: A single-file skill.\n---\nDo the quick thing.\n");
    const loaded = loadSkills([root], { includeRootFiles: true });
    expect(loaded.skills).toMatchObject([{ name: "quick", body: "Do the quick thing." }]);
    expect(loaded.diagnostics).toEqual([]);
    expect(loadSkills([root]).skills).toEqual([]);
    // Given explicitly, a single .md file is a skill.
    expect(loadSkills([join(root, "quick.md")]).skills).toMatchObject([{ name: "quick" }]);
  });

  it("a README.md beside skill folders is not a skill and gives no diagnostic (issue 12 item 7)", () => {
    write("README.md", "# My skills\n\nNotes for people.\n");
    write("notes.md", "Some notes, no frontmatter.\n");
    write("greeter/SKILL.md", skillFile("greeter"));
    const { skills, diagnostics } = loadSkills([root]);
    expect(skills.map((skill) => skill.name)).toEqual(["greeter"]);
    expect(diagnostics).toEqual([]);
  });

  it("accepts a SKILL.md path or a directory that is itself a skill", () => {
    const file = write("solo/SKILL.md", skillFile("solo"));
    expect(loadSkills([file]).skills.map((skill) => skill.name)).toEqual(["solo"]);
    expect(loadSkills([join(root, "solo")]).skills.map((skill) => skill.name)).toEqual(["solo"]);
  });

  it("reports missing and unsupported paths without throwing", () => {
    const text = write("data.txt", "x");
    const { diagnostics } = loadSkills([join(root, "nope"), text]);
    expect(diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["path-missing", "path-unsupported"]);
  });
});

describe("formatting", () => {
  it("escapes XML in the catalog and in invocation attributes, and omits disabled skills", () => {
    write("amp/SKILL.md", `---\nname: amp\ndescription: "Use <b> & 'quotes' \\"here\\""\n---\nBody\n`);
    write("hidden/SKILL.md", skillFile("hidden", "Hidden.", "disable-model-invocation: true\n"));
    const { skills } = loadSkills([root]);
    const catalog = formatSkillsForSystemPrompt(skills);
    expect(catalog).toContain("<description>Use &lt;b&gt; &amp; &apos;quotes&apos; &quot;here&quot;</description>");
    expect(catalog).not.toContain("hidden");
    expect(formatSkillsForSystemPrompt(skills.filter((skill) => skill.disableModelInvocation))).toBe("");
    const hidden = skills.find((skill) => skill.name === "hidden")!;
    expect(formatSkillInvocation(hidden, "go")).toBe(
      `<skill name="hidden" location="${hidden.filePath}">\nReferences are relative to ${hidden.baseDir}.\n\n# hidden\n\nBody of hidden.\n</skill>\n\ngo`,
    );
  });
});
