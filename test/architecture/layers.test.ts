/**
 * The layer table of docs/architecture.md is the contract: every relative import in `src/` and
 * `web/` must go to the importer's own layer or to a layer its row lists under "depends on", and
 * every folder of `src/` and `web/` must belong to a row. An import of the package by its own
 * name (`arbor-agent`, `arbor-agent/http`) counts as an import of its entry points (`src/index.ts`,
 * `src/api/`). Imports are read with TypeScript's own pre-processor (static imports, re-exports,
 * `import type`, dynamic `import()`), in `.ts` and `.tsx` files. The table of the log's rooms
 * below it places the files of `src/store` the same way, for imports inside `src/store`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

interface Layer {
  name: string;
  folders: string[];
  dependsOn: string[] | "every";
}

/** The folders whose code the table places. */
const ROOTS = ["src", "web"];
const PACKAGE_NAME = (JSON.parse(readFileSync("package.json", "utf8")) as { name: string }).name;

/** The file an import names, relative to the repository, or undefined for another package. */
function targetOf(file: string, specifier: string): string | undefined {
  if (specifier.startsWith(".")) return normalize(join(dirname(file), specifier));
  if (specifier === PACKAGE_NAME) return "src/index.ts";
  if (specifier.startsWith(`${PACKAGE_NAME}/`)) return `src/api/${specifier.slice(PACKAGE_NAME.length + 1)}.ts`;
  return undefined;
}

function readLayerTable(markdown: string, header = "| layer | folder |"): Layer[] {
  const section = markdown.slice(markdown.indexOf(header));
  const rows = section.split("\n").filter((line) => line.startsWith("|")).slice(2);
  const layers = rows.map((row) => {
    const [name, folder, , depends] = row.split("|").slice(1, -1).map((cell) => cell.trim());
    const folders = [...folder.matchAll(/`([^`]+)`/g)].map((match) => match[1]).filter((path) => ROOTS.some((root) => path.startsWith(`${root}/`)));
    return { name, folders, depends };
  });
  const names = layers.map((layer) => layer.name);
  return layers.map(({ name, folders, depends }) => ({
    name,
    folders,
    dependsOn: depends === "every layer" ? "every" : names.filter((other) => other !== name && new RegExp(`(^|[ ,])${other}([ ,(]|$)`).test(depends.replace(/\([^)]*\)/g, ""))),
  }));
}

function layerOf(layers: Layer[], file: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const folder of layer.folders) {
      const inside = folder.endsWith(".ts") ? file === folder : file.startsWith(`${folder}/`);
      if (inside && folder.length > (best?.length ?? -1)) best = { layer, length: folder.length };
    }
  }
  return best?.layer;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Every forbidden or unplaced import of `files` (given as path → source text), among targets inside `scope`. */
function violations(layers: Layer[], files: Map<string, string>, scope = ROOTS): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    const from = layerOf(layers, file);
    if (!from) {
      found.push(`${file}: no row of the layer table lists its folder`);
      continue;
    }
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      const target = targetOf(file, fileName);
      if (target === undefined || !scope.some((root) => target.startsWith(`${root}/`))) continue;
      const to = layerOf(layers, target);
      if (!to) {
        found.push(`${file} imports ${target}, which no row of the layer table lists`);
      } else if (to !== from && from.dependsOn !== "every" && !from.dependsOn.includes(to.name)) {
        found.push(`${file} (${from.name}) imports ${target} (${to.name}); ${from.name} may depend on: ${from.dependsOn.join(", ") || "nothing"}`);
      }
    }
  }
  return found;
}

const architecture = readFileSync("docs/architecture.md", "utf8");
const layers = readLayerTable(architecture);
const rooms = readLayerTable(architecture, "| room | folder |");

describe("the layer table of docs/architecture.md", () => {
  it("is parsed into rows that each name folders and dependencies", () => {
    expect(layers.map((layer) => layer.name)).toEqual(expect.arrayContaining(["contracts", "log", "actors", "harness", "CLI"]));
    expect(layers.find((layer) => layer.name === "contracts")?.dependsOn).toEqual([]);
    expect(new Set(layers.find((layer) => layer.name === "actors")?.dependsOn)).toEqual(new Set(["log", "contracts"]));
  });

  it("flags an import that the table forbids, and a folder that it does not list", () => {
    const fake = new Map([
      ["src/core/fake.ts", 'import { createAgent } from "../machines/agent.ts";'],
      ["src/store/fake.ts", 'export type { X } from "../harness/options.ts";\nconst lazy = () => import("../cli/main.ts");'],
      ["src/nowhere/fake.ts", 'import { x } from "../core/errors.ts";'],
      ["src/machines/fine.ts", 'import { x } from "../store/event-log.ts";\nimport { y } from "./agent.ts";'],
    ]);
    const found = violations(layers, fake);
    expect(found).toHaveLength(4);
    expect(found[0]).toContain("src/core/fake.ts (contracts) imports src/machines/agent.ts (actors)");
    expect(found.filter((line) => line.startsWith("src/store/fake.ts"))).toHaveLength(2);
    expect(found[3]).toContain("src/nowhere/fake.ts: no row");
  });

  it("flags the inspector page importing src/, by path, as a type or by the package's name, and src/ importing the page", () => {
    const fake = new Map([
      ["web/inspector/fake.tsx", 'import type { MachineStateRecord } from "../../src/machines/machine-states.ts";\nimport { createChatHandler } from "arbor-agent/http";\nimport { useState } from "react";\nimport { getJson } from "./api.ts";'],
      ["src/http/fake.ts", 'import { getJson } from "../../web/inspector/api.ts";'],
      ["web/other/fake.ts", 'export const x = 1;'],
    ]);
    const found = violations(layers, fake);
    expect(found).toEqual([
      expect.stringContaining("web/inspector/fake.tsx (inspector page) imports src/machines/machine-states.ts (actors); inspector page may depend on: nothing"),
      expect.stringContaining("web/inspector/fake.tsx (inspector page) imports src/api/http.ts (entry points)"),
      expect.stringContaining("src/http/fake.ts (service) imports web/inspector/api.ts (inspector page)"),
      expect.stringContaining("web/other/fake.ts: no row"),
    ]);
  });

  it("holds for every import in src/", () => {
    const files = new Map(sourceFiles("src").map((file) => [relative(".", file), readFileSync(file, "utf8")]));
    expect(files.size).toBeGreaterThan(100);
    expect(violations(layers, files)).toEqual([]);
  });

  it("holds for every import in web/", () => {
    const files = new Map(sourceFiles("web").map((file) => [relative(".", file), readFileSync(file, "utf8")]));
    expect([...files.keys()]).toEqual(expect.arrayContaining(["web/inspector/main.tsx", "web/inspector/api.ts"]));
    expect(violations(layers, files)).toEqual([]);
  });
});

describe("the table of the log's rooms in docs/architecture.md", () => {
  it("names one room per backend, the log machinery and the projections", () => {
    const folders = new Map(rooms.map((room) => [room.name, room.folders]));
    expect(folders.get("SQLite")).toEqual(["src/store/sqlite"]);
    expect(folders.get("PostgreSQL")).toEqual(["src/store/postgres"]);
    expect(folders.get("in-memory")).toEqual(["src/store/in-memory"]);
    expect(folders.get("log machinery")).toEqual(["src/store/log"]);
    expect(folders.get("projections")).toEqual(["src/store/session"]);
    expect(new Set(rooms.find((room) => room.name === "projections")?.dependsOn)).toEqual(new Set(["entry", "catalogue"]));
  });

  it("flags a projection or a backend importing a backend", () => {
    const fake = new Map([
      ["src/store/session/fake.ts", 'import { x } from "../sqlite/sqlite-schema.ts";\nimport { y } from "../event-log.ts";'],
      ["src/store/postgres/fake.ts", 'import { x } from "../sqlite/sqlite-schema.ts";\nimport { y } from "../../core/errors.ts";'],
    ]);
    expect(violations(rooms, fake, ["src/store"])).toEqual([
      expect.stringContaining("src/store/session/fake.ts (projections) imports src/store/sqlite/sqlite-schema.ts (SQLite)"),
      expect.stringContaining("src/store/postgres/fake.ts (PostgreSQL) imports src/store/sqlite/sqlite-schema.ts (SQLite)"),
    ]);
  });

  it("holds for every import inside src/store, and the top of src/store keeps few modules", () => {
    const files = new Map(sourceFiles("src/store").map((file) => [relative(".", file), readFileSync(file, "utf8")]));
    expect(violations(rooms, files, ["src/store"])).toEqual([]);
    expect(readdirSync("src/store").filter((name) => name.endsWith(".ts")).length).toBeLessThanOrEqual(8);
  });
});
