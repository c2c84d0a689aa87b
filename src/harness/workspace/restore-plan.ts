/**
 * What a workspace restore may change on disk (`docs/workspace.md`): the scan-to-recording difference, less every path the log has not seen, which
 * is never written or deleted and is listed with why: ignored on disk now, too large to record, or ignored by the target entry's `.gitignore`.
 */
import fs from "node:fs";
import { join } from "node:path";
import type createIgnore from "ignore";
import type { Ignore } from "ignore";
import { diffManifests, type WorkspaceChange, type WorkspaceManifest } from "../../core/workspace-manifest.ts";
import { lazyRequire } from "../../core/lazy-require.ts";
import { GitignoreFilter } from "../../adapters/tools/gitignore-filter.ts";

const ignore = lazyRequire<typeof createIgnore>("ignore");

/**
 * Why a restore left a path as it is: `ignored` (by the `.gitignore` files on disk now, or not recordable), `too_large` (on disk now or recorded),
 * `ignored_at_entry` (by the restored entry's `.gitignore`), `not_empty` (a folder that still holds files left alone).
 */
export type LeftAloneReason = "ignored" | "too_large" | "ignored_at_entry" | "not_empty";

/** A path a restore did not touch, and why. */
export interface LeftAlonePath {
  path: string;
  reason: LeftAloneReason;
}

/** The changes a restore applies, and the paths it leaves as they are. */
export interface RestorePlan {
  changes: WorkspaceChange[];
  leftAlone: LeftAlonePath[];
}

/**
 * True when something is at `path` under `root` itself: false when a parent is not a real folder (a file, a symlink, which the scan records as a
 * link and never follows, or a symlink loop), so a recorded path under a folder that became a link is restored, not taken for one already there.
 */
export function existsOnDisk(root: string, path: string): boolean {
  const parts = path.split("/");
  try {
    for (let depth = 1; depth < parts.length; depth++) {
      if (fs.lstatSync(join(root, ...parts.slice(0, depth)), { throwIfNoEntry: false })?.isDirectory() !== true) return false;
    }
    return fs.lstatSync(join(root, path), { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR" || code === "ELOOP") return false;
    throw error;
  }
}

/** Ignore rules of a recorded tree: its own `.gitignore` files, read from the blobs on first use per folder. */
class RecordedIgnore {
  private readonly rules = new Map<string, Ignore | null>();

  constructor(
    private readonly tree: WorkspaceManifest,
    private readonly read: (hash: string) => Promise<Buffer>,
  ) {}

  private async rulesOf(base: string): Promise<Ignore | null> {
    let rules = this.rules.get(base);
    if (rules === undefined) {
      const node = this.tree.get(base === "" ? ".gitignore" : `${base}/.gitignore`);
      rules = node?.kind === "file" ? ignore()({ allowRelativePaths: true }).add((await this.read(node.blob)).toString("utf8")) : null;
      this.rules.set(base, rules);
    }
    return rules;
  }

  /** True when `path` or a folder above it is ignored by the tree's rules. */
  async ignores(path: string, isDirectory: boolean): Promise<boolean> {
    const parts = path.split("/");
    for (let depth = 1; depth <= parts.length; depth++) {
      const asDirectory = depth < parts.length || isDirectory;
      if (parts[depth - 1] === ".git") return true;
      let ignored = false;
      for (let base = 0; base < depth; base++) {
        const rules = await this.rulesOf(parts.slice(0, base).join("/"));
        if (!rules) continue;
        const relative = parts.slice(base, depth).join("/");
        const result = rules.test(asDirectory ? `${relative}/` : relative);
        if (result.ignored) ignored = true;
        else if (result.unignored) ignored = false;
      }
      if (ignored) return true;
    }
    return false;
  }
}

/** Drops paths under a folder listed for the same reason (a whole ignored folder is one line). */
function collapse(leftAlone: LeftAlonePath[]): LeftAlonePath[] {
  const sorted = [...leftAlone].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const kept: LeftAlonePath[] = [];
  for (const item of sorted) {
    if (kept.some((outer) => outer.reason === item.reason && item.path.startsWith(`${outer.path}/`))) continue;
    kept.push(item);
  }
  return kept;
}

/**
 * The restore of `root` from `disk` (the folder as scanned now, under its current `.gitignore` files) to `target` (a recorded tree). Decided before
 * anything is written, so a `.gitignore` the restore changes does not change what it touches.
 */
export async function planRestore(root: string, disk: WorkspaceManifest, target: WorkspaceManifest, read: (hash: string) => Promise<Buffer>): Promise<RestorePlan> {
  const filter = new GitignoreFilter(root);
  const recordedRules = new RecordedIgnore(target, read);
  const changes: WorkspaceChange[] = [];
  const leftAlone: LeftAlonePath[] = [];
  for (const change of diffManifests(disk, target)) {
    const now = disk.get(change.path);
    if (now?.kind === "skipped" || change.node?.kind === "skipped") {
      leftAlone.push({ path: change.path, reason: "too_large" });
      continue;
    }
    if (now === undefined) {
      const absolute = join(root, change.path);
      if (existsOnDisk(root, change.path) || filter.isIgnoredDeep(absolute, change.node?.kind === "dir")) {
        leftAlone.push({ path: change.path, reason: "ignored" });
        continue;
      }
    } else if (change.node === null && (await recordedRules.ignores(change.path, now.kind === "dir"))) {
      leftAlone.push({ path: change.path, reason: "ignored_at_entry" });
      continue;
    }
    changes.push(change);
  }
  return { changes, leftAlone: collapse(leftAlone) };
}
