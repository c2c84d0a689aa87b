/**
 * pi's command line on top of Arbor's: without a command word after the root options, `chat` is inserted when stdin and stdout are terminals and no
 * `-p`/`--print` was given, else `run` (pi's print mode). Commands, help and version leave argv as it is.
 */

const ROOT_OPTIONS_WITH_VALUE = new Set(["--db", "--tenant", "--retention"]);
const LEAVE_ALONE = new Set(["-h", "--help", "-v", "--version", "help"]);

/** Rewrites a pi-style argv (see the module contract). */
export function piArgv(argv: readonly string[], commands: readonly string[], tty: { stdin: boolean; stdout: boolean }): string[] {
  const head = argv.slice(0, 2);
  const rest = argv.slice(2);
  let index = 0;
  while (index < rest.length) {
    const word = rest[index];
    if (ROOT_OPTIONS_WITH_VALUE.has(word)) index += 2;
    else if ([...ROOT_OPTIONS_WITH_VALUE].some((name) => word.startsWith(`${name}=`))) index += 1;
    else break;
  }
  const roots = rest.slice(0, index);
  const after = rest.slice(index);
  const interactive = tty.stdin && tty.stdout;
  if (after.length === 0) return interactive ? [...head, ...roots, "chat"] : [...argv];
  if (commands.includes(after[0]) || LEAVE_ALONE.has(after[0])) return [...argv];
  const print = after.includes("-p") || after.includes("--print");
  if (interactive && !print) return [...head, ...roots, "chat", ...after];
  return [...head, ...roots, "run", ...after.filter((word) => word !== "-p" && word !== "--print")];
}
