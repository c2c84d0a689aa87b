/**
 * Whether tables exist in a SQLite file (ours): the modules that create their tables only when writable ask this on a read-only open, or before
 * their table's first use. The probe statement is prepared once per connection and set of names.
 */
import type Database from "better-sqlite3";

const probes = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/** True when every one of `names` is a table of `db`. */
export function hasTables(db: Database.Database, ...names: string[]): boolean {
  let byNames = probes.get(db);
  if (byNames === undefined) probes.set(db, (byNames = new Map()));
  const key = names.join("\0");
  let probe = byNames.get(key);
  if (probe === undefined) {
    probe = db.prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (${names.map(() => "?").join(", ")})`).pluck();
    byNames.set(key, probe);
  }
  return probe.get(...names) === names.length;
}
