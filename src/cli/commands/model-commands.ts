/**
 * Commands that call a model: `arbor run`, `arbor chat`, `arbor checkout`, `arbor compact`.
 * (Being wired to the harness.)
 */
import type { Command } from "commander";

/** Registers the model commands on `program`. */
export function registerModelCommands(_program: Command, _globals: () => { db?: string }, _exit: { code: number }): void {}
