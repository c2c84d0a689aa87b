/**
 * Keeps a paste one message in a readline chat: on a terminal, bracketed paste (mode 2004, on at start, off at `stop()`) marks the paste, and
 * `take(line)` returns `undefined` for lines inside it, then the whole message joined with `\n`. Elsewhere every line passes as is.
 * @example
 * const paste = trackPastes(process.stdin.isTTY === true);
 * lines.on("line", (line) => { const message = paste.take(line); if (message !== undefined) send(message); });
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
