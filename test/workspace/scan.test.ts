/**
 * The workspace scanner keeps each folder's compiled `.gitignore` between scans: a changed,
 * added or removed `.gitignore` is seen by the next scan (also when rewritten within the same
 * timestamp tick with the same size), and the in-place fold of checkpoints removes a deleted
 * folder's whole subtree.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WorkspaceScanner } from "../../src/adapters/workspace/scan.ts";
import { applyChanges, applyChangesTo, type WorkspaceManifest, type WorkspaceNode } from "../../src/core/workspace-manifest.ts";

function tree() {
  const root = mkdtempSync(join(tmpdir(), "arbor-scan-"));
  mkdirSync(join(root, "pkg", "build"), { recursive: true });
  writeFileSync(join(root, "a.log"), "log\n");
  writeFileSync(join(root, "a.txt"), "text\n");
  writeFileSync(join(root, "pkg", "b.txt"), "b\n");
  writeFileSync(join(root, "pkg", "build", "out.js"), "out\n");
  return root;
}

const paths = (scanner: WorkspaceScanner) => [...scanner.scan().keys()].sort();

describe("WorkspaceScanner", () => {
  it("applies a .gitignore changed, added or removed since the last scan", () => {
    const root = tree();
    const scanner = new WorkspaceScanner(root);
    expect(paths(scanner)).toEqual(["a.log", "a.txt", "pkg", "pkg/b.txt", "pkg/build", "pkg/build/out.js"]);
    writeFileSync(join(root, ".gitignore"), "*.log\n");
    expect(paths(scanner)).toEqual([".gitignore", "a.txt", "pkg", "pkg/b.txt", "pkg/build", "pkg/build/out.js"]);
    // Rewritten at once with the same size: the rules still change.
    writeFileSync(join(root, ".gitignore"), "*.txt\n");
    expect(paths(scanner)).toEqual([".gitignore", "a.log", "pkg", "pkg/build", "pkg/build/out.js"]);
    writeFileSync(join(root, "pkg", ".gitignore"), "build/\n");
    expect(paths(scanner)).toEqual([".gitignore", "a.log", "pkg", "pkg/.gitignore"]);
    rmSync(join(root, "pkg", ".gitignore"));
    expect(paths(scanner)).toEqual([".gitignore", "a.log", "pkg", "pkg/build", "pkg/build/out.js"]);
    rmSync(join(root, ".gitignore"));
    expect(paths(scanner)).toEqual(["a.log", "a.txt", "pkg", "pkg/b.txt", "pkg/build", "pkg/build/out.js"]);
  });
});

describe("applyChangesTo", () => {
  it("folds in place, and deleting a folder removes everything under it (and only that)", () => {
    const file = (blob: string) => ({ kind: "file" as const, blob, size: 1, mode: 0o644 });
    const start: WorkspaceManifest = new Map<string, WorkspaceNode>([
      ["d", { kind: "dir", mode: 0o755 }],
      ["d/x", file("1")],
      ["d/e", { kind: "dir", mode: 0o755 }],
      ["d/e/y", file("2")],
      ["dd", file("3")],
    ]);
    const copy = applyChanges(start, [{ path: "d", node: null }]);
    expect([...copy.keys()]).toEqual(["dd"]);
    expect(start.size).toBe(5);
    const same = applyChangesTo(start, [{ path: "d", node: file("4") }, { path: "n", node: file("5") }]);
    expect(same).toBe(start);
    expect([...start.keys()].sort()).toEqual(["d", "dd", "n"]);
  });
});
