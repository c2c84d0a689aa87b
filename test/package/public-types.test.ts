/**
 * The package's public declarations never load xstate's: xstate 5's own `.d.ts` files do not
 * type-check under `exactOptionalPropertyTypes` with `skipLibCheck: false` (setup.d.ts, TS2344),
 * so a user with the strictest settings could not compile a project that imports an entry point
 * whose types reach them. The consumer test (`npm run test:package`) checks the same on the packed
 * tarball; this test finds the offending declaration in seconds, naming the chain that reaches it.
 *
 * It emits the declarations of every entry point of `package.json` in memory and walks their
 * imports from the entry files.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { exports: Record<string, string | { default: string }> };
const entries = Object.values(pkg.exports)
  .filter((target): target is { default: string } => typeof target === "object")
  .map((target) => resolve(target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")));

/**
 * Packages whose declarations a user's project must not load: xstate's fail under
 * exactOptionalPropertyTypes; better-sqlite3 has no types of its own (`@types/better-sqlite3` is
 * only a devDependency of Arbor).
 */
const FORBIDDEN = ["xstate", "better-sqlite3"];

/** Declarations of every file the entry points reach, keyed by the source file's absolute path. */
function emitDeclarations(): Map<string, string> {
  const program = ts.createProgram(entries, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    allowImportingTsExtensions: true,
    rewriteRelativeImportExtensions: true,
    declaration: true,
    emitDeclarationOnly: true,
    strict: true,
    skipLibCheck: true,
    outDir: resolve("dist-public-types"),
    rootDir: resolve("src"),
  });
  const out = new Map<string, string>();
  program.emit(
    undefined,
    (fileName, text) => {
      out.set(resolve("src", fileName.slice(resolve("dist-public-types").length + 1)).replace(/\.d\.ts$/, ".ts"), text);
    },
    undefined,
    true,
  );
  return out;
}

describe("public declarations", () => {
  it("reach no xstate or better-sqlite3 declarations from any entry point", () => {
    const declarations = emitDeclarations();
    expect(declarations.size).toBeGreaterThan(entries.length);
    const via = new Map<string, string | undefined>(entries.map((entry) => [entry, undefined]));
    const queue = [...entries];
    const offenders: string[] = [];
    while (queue.length > 0) {
      const file = queue.shift()!;
      const text = declarations.get(file);
      if (text === undefined) continue;
      const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((imported) => imported.fileName);
      for (const specifier of specifiers) {
        if (FORBIDDEN.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
          const chain: string[] = [];
          for (let at: string | undefined = file; at !== undefined; at = via.get(at)) chain.unshift(at.slice(resolve(".").length + 1));
          const line = `${chain.join(" -> ")} imports "${specifier}"`;
          if (!offenders.includes(line)) offenders.push(line);
          continue;
        }
        if (!specifier.startsWith(".")) continue;
        const target = resolve(dirname(file), specifier.replace(/\.js$/, ".ts"));
        if (via.has(target)) continue;
        via.set(target, file);
        queue.push(target);
      }
    }
    expect(offenders).toEqual([]);
  }, 600_000);
});
