/**
 * `arbor-agent/pi`: pi session files (JSONL v1-v3, pi 0.x and 1.x): parse, migrate, import and export.
 * @example
 * import { importPiSession } from "arbor-agent/pi";
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
  piExportWarnings,
  PI_EXPORT_FORMATS,
  type PiExportFormat,
  type PiExportOptions,
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
