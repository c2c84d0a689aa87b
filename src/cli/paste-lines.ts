/**
 * Keeps a paste one message in a readline chat: bracketed paste (terminal mode 2004) marks where
 * a paste starts and ends, and the lines ended inside it are held until the line that ends after
 * it (Enter), then handed on as one text joined with `\n`.
 *
 * Contract (ours):
 * - only on a terminal (`terminal: true`): mode 2004 is switched on at start and off at `stop()`;
 *   elsewhere `take` returns every line as it is;
 * - `take(line)` returns `undefined` while the line belongs to a paste still being entered, else
 *   the whole message (held lines and this one);
 * - Node's keypress parser names the markers `paste-start` and `paste-end`.
 *
 * @example
 * ```ts
 * const paste = trackPastes(process.stdin.isTTY === true);
 * lines.on("line", (line) => { const message = paste.take(line); if (message !== undefined) send(message); });
 * ```
 */
/** See the module contract. */
export interface PasteTracker {
  take(line: string): string | undefined;
  stop(): void;
}

/** Starts tracking pastes typed into `process.stdin` (read by a readline interface in terminal mode). */
export function trackPastes(terminal: boolean): PasteTracker {
  if (!terminal) return { take: (line) => line, stop: () => undefined };
  let pasting = false;
  let held: string[] = [];
  const onKey = (_text: string | undefined, key: { name?: string } | undefined) => {
    if (key?.name === "paste-start") pasting = true;
    else if (key?.name === "paste-end") pasting = false;
  };
  process.stdin.on("keypress", onKey);
  process.stdout.write("\x1b[?2004h");
  return {
    take(line) {
      if (pasting) {
        held.push(line);
        return undefined;
      }
      if (held.length === 0) return line;
      const message = [...held, line].join("\n");
      held = [];
      return message;
    },
    stop() {
      process.stdin.off("keypress", onKey);
      process.stdout.write("\x1b[?2004l");
    },
  };
}
