/**
 * The chat editor's completion: `@path` fuzzy file completion under the session's folder, honouring `.gitignore` (`searchFiles`, no `fd` needed;
 * cached for `WALK_TTL_MS`, capped at `MAX_WALKED`), and pi-tui's provider for everything else.
 */
import { CombinedAutocompleteProvider, fuzzyFilter, type AutocompleteItem, type AutocompleteProvider, type AutocompleteSuggestions, type SlashCommand } from "@earendil-works/pi-tui";
import { searchFiles } from "../../adapters/tools/file-search.ts";

const MAX_SUGGESTIONS = 20;
const MAX_WALKED = 20_000;
const WALK_TTL_MS = 5_000;

/** The `@…` token that ends `text`, if any (after a space or at the start). */
function atToken(text: string): string | undefined {
  const match = /(?:^|[\s(])(@(?:"[^"]*|[^\s"]*))$/.exec(text);
  return match?.[1];
}

/** Builds the provider for a chat rooted at `root`. */
export function chatCompletion(commands: SlashCommand[], root: string): AutocompleteProvider {
  const base = new CombinedAutocompleteProvider(commands, root);
  let walked: { at: number; paths: Promise<string[]> } | undefined;
  const paths = (signal: AbortSignal) => {
    if (!walked || Date.now() - walked.at > WALK_TTL_MS) {
      walked = { at: Date.now(), paths: searchFiles({ directory: root, top: root, pattern: "**", onlyFiles: false, signal }).then((all) => all.slice(0, MAX_WALKED)) };
      // A cancelled walk is not kept: the next keystroke walks again.
      walked.paths.catch(() => (walked = undefined));
    }
    return walked.paths;
  };
  return {
    triggerCharacters: ["@"],
    async getSuggestions(lines, cursorLine, cursorCol, options): Promise<AutocompleteSuggestions | null> {
      const token = atToken((lines[cursorLine] ?? "").slice(0, cursorCol));
      if (token === undefined) return base.getSuggestions(lines, cursorLine, cursorCol, options);
      const query = token.replace(/^@"?/, "");
      let all: string[];
      try {
        all = await paths(options.signal);
      } catch (error) {
        // An aborted walk (the user typed on) offers nothing; any other failure too, said once here.
        if (!options.signal.aborted) process.emitWarning(`@ completion could not list files: ${String(error)}`);
        return null;
      }
      const depth = (path: string) => path.split("/").filter(Boolean).length;
      const matches = query === "" ? [...all].sort((a, b) => depth(a) - depth(b) || a.localeCompare(b)) : fuzzyFilter(all, query, (path) => path);
      const items: AutocompleteItem[] = matches.slice(0, MAX_SUGGESTIONS).map((path) => {
        const quoted = /\s/.test(path) || token.startsWith('@"');
        const name = path.replace(/\/$/, "").split("/").at(-1) ?? path;
        return { value: quoted ? `@"${path}"` : `@${path}`, label: path.endsWith("/") ? `${name}/` : name, description: path };
      });
      return items.length > 0 ? { items, prefix: token } : null;
    },
    applyCompletion: (lines, cursorLine, cursorCol, item, prefix) => base.applyCompletion(lines, cursorLine, cursorCol, item, prefix),
    shouldTriggerFileCompletion: (lines, cursorLine, cursorCol) => base.shouldTriggerFileCompletion(lines, cursorLine, cursorCol),
  };
}
