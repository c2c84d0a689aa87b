/**
 * `npm run typecheck` type-checks the inspector page (`web/inspector`, browser code) with its own
 * `tsconfig.json`: DOM lib, React's types (`@types/react`, `@types/react-dom`), vite's client
 * types. The page compiles without a diagnostic, every source file of it is in the program, and a
 * type error put into it (in memory: no file is changed) is reported.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const CONFIG = resolve("web/inspector/tsconfig.json");

/** The page's program, with `overrides` (absolute path → text) in place of those files. */
function program(overrides: Map<string, string> = new Map()): ts.Program {
  const parsed = ts.getParsedCommandLineOfConfigFile(CONFIG, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => { throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")); } });
  if (!parsed) throw new Error(`cannot read ${CONFIG}`);
  expect(parsed.errors).toEqual([]);
  const host = ts.createCompilerHost(parsed.options);
  const read = host.readFile.bind(host);
  host.readFile = (file) => overrides.get(resolve(file)) ?? read(file);
  return ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host });
}

const diagnosticsOf = (built: ts.Program) => ts.getPreEmitDiagnostics(built).map((diagnostic) => `${diagnostic.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`);

describe("the inspector page's type check", () => {
  it("is part of npm run typecheck", () => {
    const scripts = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts;
    expect(scripts.typecheck).toContain("tsc -p web/inspector/tsconfig.json");
  });

  it("covers every source file of web/inspector and compiles without a diagnostic", () => {
    const built = program();
    const sources = readdirSync("web/inspector").filter((name) => /\.tsx?$/.test(name) && name !== "vite.config.ts");
    expect(sources.length).toBeGreaterThan(5);
    const inProgram = new Set(built.getRootFileNames().map((file) => resolve(file)));
    for (const name of sources) expect(inProgram.has(resolve("web/inspector", name))).toBe(true);
    expect(diagnosticsOf(built)).toEqual([]);
  });

  it("reports a type error in the page's React code", () => {
    const main = resolve("web/inspector/main.tsx");
    const text = readFileSync(main, "utf8");
    const broken = `${text}\nexport function Broken() {\n  const [count] = useState<number>("not a number");\n  return <div title={count}>{count.toUpperCase()}</div>;\n}\n`;
    const found = diagnosticsOf(program(new Map([[main, broken]])));
    expect(found.some((line) => line.startsWith(join(resolve("web/inspector"), "main.tsx")) && /not assignable to parameter of type 'number/.test(line))).toBe(true);
    expect(found.some((line) => /toUpperCase/.test(line))).toBe(true);
  });
});
