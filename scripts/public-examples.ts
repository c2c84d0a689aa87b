/**
 * Finds `@example` tags in src/ that are not on the public API: the declarations the package's
 * entry points export (with their members), and the entry modules' own headers. Examples belong to
 * what users call; internal modules get a short header instead (the examples test checks it).
 *
 * Usage: `node --import tsx scripts/public-examples.ts [--fix]` lists them, or removes them.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { entryProgram } from "./export-list.ts";

/** One `@example` outside the public API. */
export interface InternalExample {
  file: string;
  line: number;
  /** The comment's character range in the file. */
  start: number;
  end: number;
}

/** The package's entry files (src/…), from package.json `exports`. */
export function entryFiles(root = "."): string[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string | { default: string }> };
  return Object.values(pkg.exports)
    .filter((target): target is { default: string } => typeof target === "object")
    .map((target) => resolve(root, target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")));
}

/** Every `@example` in src/ whose comment is not on a public declaration (or a member of one). */
export function internalExamples(root = "."): InternalExample[] {
  const entries = entryFiles(root);
  const files = readdirSync(resolve(root, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => resolve(root, "src", file));
  const program = entryProgram([...new Set([...entries, ...files])]);
  const checker = program.getTypeChecker();
  const publicNodes = new Set<ts.Node>();
  for (const file of entries) {
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file)!);
    for (const exported of moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      for (const declaration of target.declarations ?? []) {
        publicNodes.add(declaration);
        // `export const x = …` documents the statement, not the declaration.
        if (ts.isVariableDeclaration(declaration)) publicNodes.add(declaration.parent.parent);
      }
    }
  }
  const isPublic = (node: ts.Node): boolean => {
    for (let current: ts.Node | undefined = node; current; current = current.parent) if (publicNodes.has(current)) return true;
    return false;
  };
  const found: InternalExample[] = [];
  const entrySet = new Set(entries);
  for (const file of files) {
    const source = program.getSourceFile(file)!;
    const seen = new Set<ts.Node>();
    const visit = (node: ts.Node): void => {
      for (const doc of ts.getJSDocCommentsAndTags(node)) {
        if (!ts.isJSDoc(doc) || seen.has(doc)) continue;
        seen.add(doc);
        if (!(doc.tags ?? []).some((tag) => tag.tagName.text === "example")) continue;
        const header = ts.isImportDeclaration(node) || ts.isExportDeclaration(node);
        if (header ? entrySet.has(file) : isPublic(node)) continue;
        found.push({ file, line: source.getLineAndCharacterOfPosition(doc.getStart()).line + 1, start: doc.getStart(), end: doc.getEnd() });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The comment without its `@example` blocks; `undefined` when nothing else is left in it. */
export function withoutExamples(comment: string): string | undefined {
  const lines = comment.split("\n");
  const kept: string[] = [];
  let inExample = false;
  for (const line of lines) {
    const tag = /^\s*(?:\/\*\*)?\s*\*?\s*@(\w+)/.exec(line)?.[1];
    if (tag !== undefined) inExample = tag === "example";
    if (inExample && !/\*\/\s*$/.test(line)) continue;
    if (inExample) {
      kept.push(line.replace(/^(\s*).*$/, "$1*/"));
      inExample = false;
      continue;
    }
    kept.push(line);
  }
  // Drop blank ` *` lines left just before the end.
  while (kept.length > 2 && /^\s*\*\s*$/.test(kept[kept.length - 2])) kept.splice(kept.length - 2, 1);
  const text = kept.join("\n");
  const body = text.replace(/^\s*\/\*\*/, "").replace(/\*\/\s*$/, "").replace(/^\s*\*/gm, "").trim();
  if (body === "") return undefined;
  const indent = /^\s*/.exec(kept[0])?.[0] ?? "";
  const single = `${indent}/** ${body} */`;
  if (kept.length === 2 || (kept.length === 3 && !body.includes("\n") && single.length <= 120)) return single.trimStart();
  return text;
}

/** Removes the internal examples from their files; returns how many comments changed. */
export function removeInternalExamples(root = "."): number {
  const byFile = new Map<string, InternalExample[]>();
  for (const example of internalExamples(root)) byFile.set(example.file, [...(byFile.get(example.file) ?? []), example]);
  for (const [file, examples] of byFile) {
    let text = readFileSync(file, "utf8");
    for (const example of examples.sort((a, b) => b.start - a.start)) {
      const replacement = withoutExamples(text.slice(example.start, example.end));
      if (replacement === undefined) {
        const lineStart = text.lastIndexOf("\n", example.start) + 1;
        const after = text.indexOf("\n", example.end);
        const whole = text.slice(lineStart, example.start).trim() === "" && text.slice(example.end, after).trim() === "";
        text = whole ? text.slice(0, lineStart) + text.slice(after + 1) : text.slice(0, example.start) + text.slice(example.end);
      } else text = text.slice(0, example.start) + replacement + text.slice(example.end);
    }
    writeFileSync(file, text);
  }
  return [...byFile.values()].reduce((sum, list) => sum + list.length, 0);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes("--fix")) console.log(`removed the @example of ${removeInternalExamples()} internal comments`);
  else for (const example of internalExamples()) console.log(`${example.file}:${example.line}`);
}
