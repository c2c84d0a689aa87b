/**
 * `-r/--resume` on a line terminal: the newest `PICKER_ROWS` sessions, numbered; the number typed picks one; an empty line, end of input or no
 * sessions is a `CliError`.
 */
import { createInterface } from "node:readline/promises";
import { CliError } from "./cli-error.ts";
import { shortSessionId, type CliStore } from "./store-context.ts";

/** How many sessions the picker offers. */
export const PICKER_ROWS = 20;

/** Asks which session to resume; resolves with its id. */
export async function pickSession(store: Pick<CliStore, "listNewestFirst" | "dbPath">): Promise<string> {
  const sessions = (await store.listNewestFirst()).slice(0, PICKER_ROWS);
  if (sessions.length === 0) throw new CliError(`No sessions to resume in ${store.dbPath}.`, 1);
  const rows = sessions.map((session, index) => `${String(index + 1).padStart(2)}. ${shortSessionId(session.id)}  ${session.updatedAt}  ${(session.name ?? session.firstMessage).replace(/\s+/g, " ").slice(0, 60)}`);
  process.stderr.write(`${rows.join("\n")}\n`);
  const lines = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY === true });
  const closed = new Promise<string>((resolve) => lines.once("close", () => resolve("")));
  try {
    const answer = (await Promise.race([lines.question(`resume which session? (1-${sessions.length}, Enter cancels) `), closed])).trim();
    const chosen = /^\d+$/.test(answer) ? sessions[Number(answer) - 1] : undefined;
    if (!chosen) throw new CliError(answer === "" ? "No session picked; nothing was started." : `"${answer}" is not a number from 1 to ${sessions.length}; nothing was started.`, 1);
    return chosen.id;
  } finally {
    lines.close();
  }
}
