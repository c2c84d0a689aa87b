/**
 * Command arguments for prompt templates: splitting an argument string and
 * substituting placeholders.
 *
 * Contract (source: pi 0.73.1 `core/prompt-templates.ts`,
 * `docs/pi-parity.md`; differences are ours, on purpose):
 * - {@link parseCommandArgs}: `'` and `"` quote (quotes removed, no escapes, a
 *   backslash is literal, an unterminated quote runs to the end), a quote may
 *   sit inside a word (`a"b c"d` is `ab cd`). Ours: **any** whitespace
 *   (`\s`: space, tab, newline, CR, Unicode spaces) separates arguments (pi
 *   splits only on space and tab, so `"a\n\nb c"` gave `$1` = `"a\n\nb"`,
 *   pi #4553), and a quoted empty string is an empty argument, as in bash (pi
 *   drops it, shifting later positions);
 * - {@link substituteArgs}: `$1`…`$N` (1-based; missing or `$0` → ""),
 *   `${N}`, `${N:-default}` (default when the argument is missing or empty, as
 *   bash's `:-`; the default is literal text), `$@`, `${@}` and `$ARGUMENTS`
 *   (all arguments joined by single spaces), `${@:N}` and `${@:N:L}` (from the
 *   N-th, 1-based, 0 treated as 1; at most L of them). Ours: **one pass** over
 *   the template; argument text is inserted verbatim, so placeholders inside
 *   arguments are never expanded and `$&`, `` $` ``, `$'` are never
 *   interpreted (pi re-expands and interprets them, pi #9588). Placeholders in
 *   fenced code blocks are substituted too (pi and Claude Code do the same);
 * - both are pure and never throw.
 *
 * @example
 * ```ts
 * substituteArgs("Fix $1 in ${2:-main}: $@", parseCommandArgs('"bug 12" dev'));
 * // "Fix bug 12 in dev: bug 12 dev"
 * ```
 */

/**
 * Splits a command's argument string into arguments, bash-style (see the
 * module contract for quoting and whitespace rules).
 *
 * @param argsString the text after the command name
 * @returns the arguments in order; `[]` for blank input
 * @example
 * ```ts
 * parseCommandArgs(`one "two three"\nfour ''`); // ["one", "two three", "four", ""]
 * ```
 */
export function parseCommandArgs(argsString: string): string[] {
  const args: string[] = [];
  let current = "";
  let inToken = false;
  let quote: string | null = null;
  for (const char of argsString) {
    if (quote !== null) {
      if (char === quote) quote = null;
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      inToken = true;
    } else if (/\s/.test(char)) {
      if (inToken) args.push(current);
      current = "";
      inToken = false;
    } else {
      current += char;
      inToken = true;
    }
  }
  if (inToken) args.push(current);
  return args;
}

const PLACEHOLDER = /\$\{@:(\d+)(?::(\d+))?\}|\$\{(\d+)(?::-([^}]*))?\}|\$\{@\}|\$ARGUMENTS|\$@|\$(\d+)/g;

/**
 * Replaces argument placeholders in a template in a single pass; inserted
 * argument text is never re-scanned (see the module contract).
 *
 * @param content the template text
 * @param args the arguments (`parseCommandArgs` output)
 * @returns the expanded text
 * @example
 * ```ts
 * substituteArgs("A=$1 ALL=$@", ["$@", "x"]); // "A=$@ ALL=$@ x"
 * ```
 */
export function substituteArgs(content: string, args: readonly string[]): string {
  const all = args.join(" ");
  return content.replace(
    PLACEHOLDER,
    (_match, sliceStart?: string, sliceLength?: string, braced?: string, fallback?: string, positional?: string) => {
      if (sliceStart !== undefined) {
        const start = Math.max(Number.parseInt(sliceStart, 10) - 1, 0);
        const end = sliceLength === undefined ? undefined : start + Number.parseInt(sliceLength, 10);
        return args.slice(start, end).join(" ");
      }
      if (braced !== undefined) {
        const value = args[Number.parseInt(braced, 10) - 1];
        if (fallback !== undefined && (value === undefined || value === "")) return fallback;
        return value ?? "";
      }
      if (positional !== undefined) return args[Number.parseInt(positional, 10) - 1] ?? "";
      // $@, ${@} and $ARGUMENTS
      return all;
    },
  );
}
