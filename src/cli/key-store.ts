/** The key store (key file, or `<schema>_keys` table) of the log the CLI's flags name, found without opening the log (ours; `docs/privacy.md`). */
import { existsSync } from "node:fs";
import type pg from "pg";
import { lazyRequire } from "../core/lazy-require.ts";
import { KEY_CHECK_ID } from "../store/crypto/session-keys.ts";
import { keyFileBeside } from "../store/crypto/sqlite-data-keys.ts";
import { isPostgresUrl, resolveDbPath } from "./config.ts";

const loadPg = lazyRequire<typeof pg>("pg");

/** The key table of an encrypted PostgreSQL log (`schema` + `_keys`) and how many data keys it holds (the key check row aside), when it exists. */
export async function pgKeyTable(connectionString: string, schema: string): Promise<{ table: string; dataKeys: number } | undefined> {
  const client = new (loadPg().Client)({ connectionString });
  await client.connect();
  try {
    const table = `"${schema}_keys".data_keys`;
    const { rows } = await client.query<{ found: string | null }>("SELECT to_regclass($1) AS found", [table]);
    if (rows[0]?.found == null) return undefined;
    const counted = await client.query<{ keys: number }>(`SELECT count(*)::int AS keys FROM ${table} WHERE key_id <> $1`, [KEY_CHECK_ID]);
    return { table, dataKeys: counted.rows[0]?.keys ?? 0 };
  } finally {
    await client.end();
  }
}

/** Where the key store of a log is, and whether it exists. */
export interface CliKeyStore {
  /** The key file's path, or the key table's name. */
  readonly name: string;
  readonly exists: boolean;
}

/**
 * The key store of the log `--db`/`ARBOR_DB`/the default names (PostgreSQL: schema `ARBOR_DB_SCHEMA`, default `arbor`); undefined for a SQLite log
 * file that does not exist (opening it says so). A bad path is a `CliError`.
 */
export async function findKeyStore(flags: { db?: string }): Promise<CliKeyStore | undefined> {
  const target = resolveDbPath(flags.db, process.env, process.cwd(), { create: false });
  if (isPostgresUrl(target)) {
    const schema = process.env.ARBOR_DB_SCHEMA ?? "arbor";
    const table = await pgKeyTable(target, schema);
    return { name: table?.table ?? `"${schema}_keys".data_keys`, exists: table !== undefined };
  }
  if (!existsSync(target)) return undefined;
  const file = keyFileBeside(target);
  return { name: file, exists: existsSync(file) };
}
