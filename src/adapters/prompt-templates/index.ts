/**
 * Prompt templates: loading `/name` command files, argument parsing and substitution, and slash-command expansion (templates and `/skill:name`). See
 * each module's contract and docs/skills-and-templates.md.
 */
export * from "./types.ts";
export * from "./arguments.ts";
export * from "./load-prompt-templates.ts";
export * from "./expand.ts";
