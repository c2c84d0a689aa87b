/**
 * Stored text shown on a terminal (ours): control characters (C0 but tab and line feed, DEL, C1) are written as `\xNN`, so a prompt or a model's
 * reply listed by `arbor sessions` or `arbor tree` cannot retitle the terminal, clear lines or hide text.
 */

/** `text` with its control characters (but `\t` and `\n`) written as `\xNN`. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
