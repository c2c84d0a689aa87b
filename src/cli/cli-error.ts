/**
 * Errors the CLI prints as one clear line on stderr, with an exit code.
 *
 * Contract (ours): a `CliError` message names what is wrong and what to do;
 * `exitCode` is the process exit code (default 2 for usage errors).
 *
 * @example
 * ```ts
 * throw new CliError("No API key: set OPENAI_API_KEY or pass --api-key-env NAME.", 2);
 * ```
 */
import { ArborError } from "../core/errors.ts";

/** A user-facing CLI failure (code `CLI_USAGE`). */
export class CliError extends ArborError {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super("CLI_USAGE", message);
  }
}

/** The one line to print for any error thrown by a command. */
export function describeCliError(error: unknown): string {
  if (ArborError.isInstance(error)) return `arbor: ${error.message}`;
  if (error instanceof Error) return `arbor: ${error.message}`;
  return `arbor: ${String(error)}`;
}
