/** A folder as plain data for byte-exact comparisons: path → kind, mode, bytes (base64) or link target. */
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

export type SnapshotNode = { kind: "file"; mode: number; data: string } | { kind: "dir"; mode: number } | { kind: "symlink"; target: string };

export function snapshotTree(root: string, options: { skip?: (path: string) => boolean } = {}): Record<string, SnapshotNode> {
  const out: Record<string, SnapshotNode> = {};
  const walk = (directory: string, prefix: string) => {
    for (const name of readdirSync(directory).sort()) {
      if (name === ".git") continue;
      const path = prefix ? `${prefix}/${name}` : name;
      if (options.skip?.(path)) continue;
      const absolute = join(directory, name);
      const stat = lstatSync(absolute);
      if (stat.isSymbolicLink()) out[path] = { kind: "symlink", target: readlinkSync(absolute) };
      else if (stat.isDirectory()) {
        out[path] = { kind: "dir", mode: stat.mode & 0o7777 };
        walk(absolute, path);
      } else out[path] = { kind: "file", mode: stat.mode & 0o7777, data: readFileSync(absolute).toString("base64") };
    }
  };
  walk(root, "");
  return out;
}
