import { describe, expect, it } from "vitest";
import { loadPromptTemplates } from "../../src/adapters/prompt-templates/load-prompt-templates.ts";
import { loadSkills } from "../../src/adapters/skills/load-skills.ts";
import { InvalidArgumentError } from "../../src/core/errors.ts";
import type { CustomMessage, UserMessage } from "../../src/core/messages.ts";
import { buildPromptMessages } from "../../src/harness/prompt-input.ts";
import { sharedPath } from "../shared-dir.ts";

const { skills } = loadSkills([sharedPath("real-inputs/skills/anthropics")]);
const { templates } = loadPromptTemplates([sharedPath("real-inputs/prompts/pi-mono")]);
const resources = { skills, templates };
const now = () => 42;

describe("buildPromptMessages", () => {
  it("expands a real template with its arguments", () => {
    const template = templates[0];
    const result = buildPromptMessages(`/${template.name} first "second arg"`, undefined, resources, [], now);
    expect(result.expansion?.kind).toBe("template");
    expect(result.messages).toEqual([{ role: "user", content: result.text, timestamp: 42 }]);
    expect(result.text).not.toMatch(new RegExp(`^/${template.name}`));
  });

  it("expands a real skill invocation, and leaves it alone when skill commands are off", () => {
    const skill = skills.find((candidate) => candidate.name === "webapp-testing")!;
    const expanded = buildPromptMessages("/skill:webapp-testing check the login page", undefined, resources);
    expect(expanded.text.startsWith(`<skill name="webapp-testing" location="${skill.filePath}">`)).toBe(true);
    expect(expanded.text.endsWith("\n\ncheck the login page")).toBe(true);
    expect(buildPromptMessages("/skill:webapp-testing x", undefined, { ...resources, enableSkillCommands: false }).text).toBe("/skill:webapp-testing x");
  });

  it("sends unknown commands unchanged", () => {
    expect(buildPromptMessages("/nope a b", undefined, resources).text).toBe("/nope a b");
  });

  it("puts images after the text and next-turn messages after the prompt", () => {
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    const held: CustomMessage = { role: "custom", customType: "note", content: "ctx", display: false, timestamp: 1 };
    const { messages } = buildPromptMessages("look", [image], resources, [held], now);
    expect((messages[0] as UserMessage).content).toEqual([{ type: "text", text: "look" }, image]);
    expect(messages[1]).toBe(held);
  });

  it("passes structured input through without expansion", () => {
    const message: UserMessage = { role: "user", content: "/skill:webapp-testing", timestamp: 1 };
    expect(buildPromptMessages(message, undefined, resources).messages).toEqual([message]);
  });

  it("rejects empty input with InvalidArgumentError", () => {
    expect(() => buildPromptMessages("   ", undefined, resources)).toThrow(InvalidArgumentError);
    expect(() => buildPromptMessages([], undefined, resources)).toThrow(/message list is empty/);
    expect(() => buildPromptMessages([{ content: "x" } as never], undefined, resources)).toThrow(/input\[0\]/);
  });
});
