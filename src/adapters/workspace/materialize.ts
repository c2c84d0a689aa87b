/**
 * Writing a recorded tree to disk in {@link diffManifests} order: each file via a temporary name and rename (never half a file), symlinks as
 * recorded, folder modes after their contents; `skipped` nodes are left alone. A recorded path that could leave the root is refused before
 * anything is written.
 */
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import type { WorkspaceChange } from "../../core/workspace-manifest.ts";
import { PathEscapeError } from "../../core/errors.ts";

/** Refuses a recorded path that could leave the root. */
export function checkRecordedPath(path: string): void {
  const parts = path.split("/");
  if (path === "" || path.startsWith("/") || path.includes("\\") || path.includes("\0") || parts.some((part) => part === "" || part === "." || part === "..")) {
    throw new PathEscapeError(`Recorded workspace path ${JSON.stringify(path)} is not a plain relative path; nothing was written.`, { details: { path } });
  }
}

/** Removes whatever is at `absolute` (a folder with its contents). */
function removeAt(absolute: string): void {
  fs.rmSync(absolute, { recursive: true, force: true });
}

function isRealDirectory(absolute: string): boolean {
  try {
    return fs.lstatSync(absolute).isDirectory();
  } catch {
    return false;
  }
}

/** Applies `changes` under `root`, reading file bytes with `read` (see the module contract). Returns the number of paths changed. */
export async function applyToDisk(root: string, changes: readonly WorkspaceChange[], read: (hash: string) => Promise<Buffer>): Promise<number> {
  for (const change of changes) checkRecordedPath(change.path);
  // Every blob first: a missing blob fails the restore before the tree is touched.
  const bytes = new Map<string, Buffer>();
  for (const change of changes) if (change.node?.kind === "file" && !bytes.has(change.node.blob)) bytes.set(change.node.blob, await read(change.node.blob));
  const parentIsDirectory = (path: string) => {
    // A parent that is a symlink would send the write elsewhere: every parent must be a real folder.
    const parts = path.split("/");
    for (let depth = 1; depth < parts.length; depth++) {
      const parent = join(root, ...parts.slice(0, depth));
      if (!isRealDirectory(parent)) fs.mkdirSync(parent, { recursive: false });
    }
  };
  const folderModes: { absolute: string; mode: number }[] = [];
  let changed = 0;
  for (const change of changes) {
    const absolute = join(root, change.path);
    const node = change.node;
    if (node === null) {
      removeAt(absolute);
      changed++;
      continue;
    }
    if (node.kind === "skipped") continue;
    parentIsDirectory(change.path);
    if (node.kind === "dir") {
      if (!isRealDirectory(absolute)) {
        removeAt(absolute);
        fs.mkdirSync(absolute);
      }
      folderModes.push({ absolute, mode: node.mode });
    } else if (node.kind === "symlink") {
      removeAt(absolute);
      fs.symlinkSync(node.target, absolute);
    } else {
      if (isRealDirectory(absolute)) removeAt(absolute);
      const temporary = join(dirname(absolute), `.arbor-restore-${randomBytes(6).toString("hex")}`);
      try {
        fs.writeFileSync(temporary, bytes.get(node.blob)!, { mode: 0o600 });
        fs.chmodSync(temporary, node.mode);
        fs.renameSync(temporary, absolute);
      } catch (error) {
        fs.rmSync(temporary, { force: true });
        throw error;
      }
    }
    changed++;
  }
  folderModes.sort((a, b) => b.absolute.length - a.absolute.length);
  for (const { absolute, mode } of folderModes) fs.chmodSync(absolute, mode);
  return changed;
}
