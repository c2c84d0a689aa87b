/**
 * Command arguments for prompt templates: {@link parseCommandArgs} splits on any whitespace with `'`/`"` quotes (a quoted empty string is an
 * argument); {@link substituteArgs} fills `$1`, `${N:-default}`, `$@`, `$ARGUMENTS`, `${@:N:L}` in ONE pass, so argument text is inserted verbatim
 * and never re-expanded. Both are pure and never throw.
 * @example
 * substituteArgs("Fix $1 in ${2:-main}: $@", parseCommandArgs('"bug 12" dev'));
 * // "Fix bug 12 in dev: bug 12 dev"
 */

/**
 * Splits a command's argument string into arguments, bash-style (see the module contract for quoting and whitespace rules).
 * @param argsString the text after the command name
 * @returns the arguments in order; `[]` for blank input
 * @example
 * parseCommandArgs(`one "two three"\nfour ''`); // ["one", "two three", "four", ""]
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
 * Replaces argument placeholders in a template in a single pass; inserted argument text is never re-scanned (see the module contract).
 * @param content the template text
 * @param args the arguments (`parseCommandArgs` output)
 * @returns the expanded text
 * @example
 * substituteArgs("A=$1 ALL=$@", ["$@", "x"]); // "A=$@ ALL=$@ x"
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
