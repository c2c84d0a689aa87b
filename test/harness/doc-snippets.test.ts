/**
 * The ```ts blocks of docs/testing.md, docs/approval.md and docs/workflows.md compile under the repo's strict
 * settings as a user would write them: imports from the package's public entry points
 * (`arbor-agent`, `arbor-agent/<entry>`, mapped to the sources as package.json `exports` maps
 * them to dist), nothing used that is not imported or defined. A block whose first line is
 * `// name.ts` is a module named so; the others may import from it (`./name.ts`).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const DOCS = ["docs/testing.md", "docs/approval.md", "docs/workflows.md"];
const root = resolve(".");
const virtualDir = resolve(root, ".doc-snippets");

function snippets(doc: string): Map<string, string> {
  const files = new Map<string, string>();
  const base = doc.replace(/^docs\//, "").replace(/\.md$/, "");
  let index = 0;
  for (const match of readFileSync(doc, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)) {
    const code = match[1];
    const named = /^\/\/ ([\w-]+\.ts)\n/.exec(code)?.[1];
    files.set(resolve(virtualDir, base, named ?? `block-${++index}.ts`), code);
  }
  return files;
}

function diagnostics(files: Map<string, string>): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts"],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    esModuleInterop: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    types: ["node"],
    baseUrl: root,
    paths: { "arbor-agent": ["src/index.ts"], "arbor-agent/testing": ["src/testing/index.ts"], "arbor-agent/*": ["src/api/*.ts"] },
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => files.has(resolve(name)) || fileExists.call(host, name);
  host.directoryExists = (name) => resolve(name).startsWith(virtualDir) || ts.sys.directoryExists(name);
  host.readFile = (name) => files.get(resolve(name)) ?? readFile.call(host, name);
  host.getSourceFile = (name, version, ...rest) => {
    const text = files.get(resolve(name));
    return text !== undefined ? ts.createSourceFile(name, text, version, true) : getSourceFile.call(host, name, version, ...rest);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return [...files.keys()].flatMap((name) => {
    const source = program.getSourceFile(name)!;
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((item) => {
      const { line } = source.getLineAndCharacterOfPosition(item.start ?? 0);
      return `${name.slice(virtualDir.length + 1)}:${line + 1} TS${item.code}: ${ts.flattenDiagnosticMessageText(item.messageText, "\n")}`;
    });
  });
}

describe("docs snippets", () => {
  it("every ```ts block of docs/testing.md, docs/approval.md and docs/workflows.md type-checks under strict tsc against the public entry points", () => {
    const files = new Map(DOCS.flatMap((doc) => [...snippets(doc)]));
    expect(files.size).toBeGreaterThanOrEqual(6);
    expect(diagnostics(files)).toEqual([]);
  }, 120_000);
});
