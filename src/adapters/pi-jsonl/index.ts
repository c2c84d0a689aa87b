/** pi session JSONL interop: parse, migrate (v1/v2 → v3), import into a session, export to v3. See each module's contract. */
export * from "./parse.ts";
export * from "./migrate.ts";
export * from "./import.ts";
export * from "./export.ts";
