/**
 * Lists the exported names of each package entry point, as the TypeScript checker sees them
 * (values and types), for the export-list snapshot test and for reviewing the API tiers.
 *
 * Usage: `node --import tsx scripts/export-list.ts [entry.ts ...]` prints `name kind` lines.
 */
import ts from "typescript";

/** One exported name of an entry point: `value` when it exists at run time, else `type`. */
export interface ExportedName {
  name: string;
  kind: "value" | "type";
}

/** A TypeScript program over the entry files, as the package's sources are compiled (also used by the TSDoc test). */
export function entryProgram(entryFiles: string[]): ts.Program {
  return ts.createProgram(entryFiles, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
  });
}

/** The exported names of each entry file (absolute or relative paths), sorted by name. */
export function listExports(entryFiles: string[]): Map<string, ExportedName[]> {
  const program = entryProgram(entryFiles);
  const checker = program.getTypeChecker();
  const result = new Map<string, ExportedName[]>();
  for (const file of entryFiles) {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`export-list: cannot read ${file}`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`export-list: ${file} is not a module`);
    const names = checker.getExportsOfModule(moduleSymbol).map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const isValue = (target.flags & ts.SymbolFlags.Value) !== 0 && !isTypeOnlyExport(symbol);
      return { name: symbol.getName(), kind: isValue ? "value" : "type" } satisfies ExportedName;
    });
    result.set(file, names.sort((a, b) => a.name.localeCompare(b.name)));
  }
  return result;
}

function isTypeOnlyExport(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some((declaration) => ts.isTypeOnlyExportDeclaration(declaration));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = process.argv.slice(2);
  for (const [file, names] of listExports(files.length > 0 ? files : ["src/index.ts"])) {
    console.log(`# ${file}: ${names.length} names, ${names.filter((n) => n.kind === "value").length} values`);
    for (const entry of names) console.log(`${entry.name} ${entry.kind}`);
  }
}
