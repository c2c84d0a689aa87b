/**
 * Errors the CLI prints as one clear line on stderr, with an exit code.
 *
 * Contract (ours): a `CliError` message names what is wrong and what to do; `exitCode` is the process exit code (default 2 for usage errors).
 */
import { ArborError, DataKeyUnavailableError } from "../core/errors.ts";

/** A user-facing CLI failure (code `CLI_USAGE`). */
export class CliError extends ArborError {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super("CLI_USAGE", message);
  }
}

/**
 * Rethrows `error` as an exit-1 `CliError` that adds "Nothing was written." when it is one of `refusals` (the `ArborError` kinds a command's
 * write is refused with: an unknown or conflicting decision or answer); any other error as it is.
 */
export function rethrowRefusal(error: unknown, refusals: readonly { isInstance(error: unknown): error is ArborError }[]): never {
  if (refusals.some((refusal) => refusal.isInstance(error))) throw new CliError(`${(error as ArborError).message} Nothing was written.`, 1);
  throw error;
}

/** The one line to print for any error thrown by a command. */
export function describeCliError(error: unknown): string {
  // The library's wording names `encryption: { key }`; from the CLI the key is an environment variable.
  if (DataKeyUnavailableError.isInstance(error) && error.details.reason === "no_encryption") {
    const { streamId, version, operation } = error.details as { streamId?: string; version?: number; operation?: string };
    if (operation !== undefined) {
      return `arbor: This log is encrypted (stream "${String(streamId)}" is a sealed session's), and ARBOR_ENCRYPTION_KEY is not set: set it to the master key this log was written with. Nothing was written.`;
    }
    return `arbor: The stored event at stream "${String(streamId)}" version ${String(version)} is encrypted, and ARBOR_ENCRYPTION_KEY is not set: set it to the master key this log was written with.`;
  }
  if (ArborError.isInstance(error)) return `arbor: ${error.message}`;
  if (error instanceof Error) return `arbor: ${error.message}`;
  return `arbor: ${String(error)}`;
}
