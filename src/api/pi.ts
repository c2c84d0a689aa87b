/**
 * `arbor-agent/pi`: pi session files (JSONL v1-v3): parse, migrate, import and export.
 *
 * Contract (ours): an explicit list; an addition or removal is a deliberate change that the
 * export-list snapshot (`test/package/exports.test.ts`) shows. The root entry `arbor-agent` holds
 * what a user needs first; everything here is one import further.
 *
 * @example
 * ```ts
 * import { importPiSession } from "arbor-agent/pi";
 * ```
 */
export {
  piEntriesFromText,
  importPiSession,
  type ImportPiSessionOptions,
  type ImportPiSessionResult,
} from "../adapters/pi-jsonl/import.ts";
export {
  exportPiSession,
  exportPiSessionToFile,
} from "../adapters/pi-jsonl/export.ts";
export {
  parsePiJsonl,
  type ImportDiagnostic,
  type PiSessionHeader,
  type ParsedLine,
  type ParsedPiFile,
} from "../adapters/pi-jsonl/parse.ts";
export {
  piFileVersion,
  migratePiEntries,
  PI_SESSION_VERSION,
  type MigratedLine,
  type MigratedPiFile,
} from "../adapters/pi-jsonl/migrate.ts";
export { SessionImportError } from "../core/errors.ts";
