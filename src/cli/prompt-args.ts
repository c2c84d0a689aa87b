/**
 * The first prompt from the command line, as pi builds it: piped stdin, then `@file` arguments as `<file name="…">` blocks (missing, folder or
 * binary files are a `CliError`), then the message words, joined by blank lines and trimmed.
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { CliError } from "./cli-error.ts";

/** One `@file` argument as pi's block. */
export function fileBlock(word: string, baseDir: string): string {
  const path = resolve(baseDir, word.slice(1));
  let stats;
  try {
    stats = statSync(path);
  } catch {
    throw new CliError(`${word}: no such file (${path}); an @ argument names a file whose text joins the prompt.`);
  }
  if (!stats.isFile()) throw new CliError(`${word}: ${path} is not a file; an @ argument names a file whose text joins the prompt.`);
  const data = readFileSync(path);
  if (data.includes(0)) throw new CliError(`${word}: ${path} is binary; only text files can join the prompt (attaching images is not supported yet).`);
  return `<file name="${path}">\n${data.toString("utf8")}\n</file>`;
}

/** Builds the first prompt (see the module contract). */
export function promptFromArgs(words: readonly string[], stdinText: string, baseDir: string): string {
  const files = words.filter((word) => word.startsWith("@") && word.length > 1).map((word) => fileBlock(word, baseDir));
  const message = words.filter((word) => !(word.startsWith("@") && word.length > 1)).join(" ");
  return [stdinText.trim(), ...files, message.trim()].filter((part) => part !== "").join("\n\n").trim();
}
