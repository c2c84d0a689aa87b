/**
 * Writing a recorded tree to disk in {@link diffManifests} order: each file via a temporary name and rename (never half a file), symlinks as
 * recorded, folder modes after their contents; `skipped` nodes are left alone. A folder is removed (or replaced) only once it is empty: one that
 * still holds something the changes did not remove (files a restore leaves alone) stays, and is returned. A recorded path that could leave the root
 * is refused before anything is written.
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

/** Removes whatever is at `absolute`; a folder only when empty. False when a folder that still holds something was left. */
function removeAt(absolute: string): boolean {
  try {
    if (fs.lstatSync(absolute).isDirectory()) fs.rmdirSync(absolute);
    else fs.rmSync(absolute, { force: true });
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return true;
    if (code === "ENOTEMPTY" || code === "EEXIST") return false;
    throw error;
  }
}

/** What {@link applyToDisk} did: paths changed, and folders it left because they still held files it was not to touch. */
export interface AppliedChanges {
  changed: number;
  notEmpty: string[];
}

function isRealDirectory(absolute: string): boolean {
  try {
    return fs.lstatSync(absolute).isDirectory();
  } catch {
    return false;
  }
}

/** Applies `changes` under `root`, reading file bytes with `read` (see the module contract). */
export async function applyToDisk(root: string, changes: readonly WorkspaceChange[], read: (hash: string) => Promise<Buffer>): Promise<AppliedChanges> {
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
  const notEmpty: string[] = [];
  for (const change of changes) {
    const absolute = join(root, change.path);
    const node = change.node;
    if (node === null) {
      if (removeAt(absolute)) changed++;
      else notEmpty.push(change.path);
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
      if (!removeAt(absolute)) {
        notEmpty.push(change.path);
        continue;
      }
      fs.symlinkSync(node.target, absolute);
    } else {
      if (isRealDirectory(absolute) && !removeAt(absolute)) {
        notEmpty.push(change.path);
        continue;
      }
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
  return { changed, notEmpty };
}
