/**
 * parseCommandArgs / substituteArgs: property-based differential tests against
 * pi 0.73.1 where pi is right, and explicit tests where we differ on purpose
 * (pi #4553 newlines, pi #9588 re-expansion and `$&`, `${N:-default}`, empty
 * quoted arguments).
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCommandArgs, substituteArgs } from "../../src/adapters/prompt-templates/index.ts";

type PiTemplates = {
  parseCommandArgs(argsString: string): string[];
  substituteArgs(content: string, args: string[]): string;
  expandPromptTemplate(text: string, templates: { name: string; content: string }[]): string;
};

const piFile = resolve(dirname(fileURLToPath(import.meta.url)), "../../node_modules/@mariozechner/pi-coding-agent/dist/core/prompt-templates.js");
const pi = (await import(pathToFileURL(piFile).href)) as PiTemplates;

describe("parseCommandArgs", () => {
  it("equals pi on space/tab-separated input with quotes (property)", () => {
    const input = fc.string({ unit: fc.constantFrom("a", "b", "é", " ", "\t", '"', "'", "\\", "$"), maxLength: 40 });
    fc.assert(
      fc.property(input, (text) => {
        const ours = parseCommandArgs(text);
        fc.pre(!ours.includes("")); // pi drops empty quoted arguments; covered below
        expect(ours).toEqual(pi.parseCommandArgs(text));
      }),
      { numRuns: 500 },
    );
  });

  it("splits on newlines and every other whitespace (pi #4553 keeps them inside an argument)", () => {
    expect(parseCommandArgs("a\n\nb c")).toEqual(["a", "b", "c"]);
    expect(pi.parseCommandArgs("a\n\nb c")).toEqual(["a\n\nb", "c"]);
    expect(parseCommandArgs("one\r\ntwo\u00a0three\u2003four\vfive")).toEqual(["one", "two", "three", "four", "five"]);
    expect(parseCommandArgs('"keep\nthis" next')).toEqual(["keep\nthis", "next"]);
  });

  it("keeps an explicit empty quoted argument as bash does (pi drops it)", () => {
    expect(parseCommandArgs(`x "" y ''`)).toEqual(["x", "", "y", ""]);
    expect(pi.parseCommandArgs(`x "" y`)).toEqual(["x", "y"]);
  });

  it("handles quotes inside words, literal backslashes and unterminated quotes", () => {
    expect(parseCommandArgs(`a"b c"d 'it"s' C:\\dir "open end`)).toEqual(["ab cd", 'it"s', "C:\\dir", "open end"]);
    expect(parseCommandArgs("   ")).toEqual([]);
  });
});

describe("substituteArgs", () => {
  const piece = fc.constantFrom("$1", "$2", "$3", "$10", "$0", "$@", "$ARGUMENTS", "${@:2}", "${@:1:2}", "${@:0}", "${@:3:1}", " ", "x", "{", "}", "@", "\n");
  const safeArg = fc.string({ unit: fc.constantFrom("a", "b", " ", "1", "-", "{"), maxLength: 6 });

  it("equals pi when no argument contains a $ (property)", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(safeArg, { maxLength: 12 }), (pieces, args) => {
        const template = pieces.join("");
        expect(substituteArgs(template, args)).toBe(pi.substituteArgs(template, args));
      }),
      { numRuns: 1000 },
    );
  });

  it("inserts arguments verbatim: no re-expansion of placeholders inside arguments (pi #9588)", () => {
    expect(substituteArgs("A=$1 ALL=$@", ["$@", "x"])).toBe("A=$@ ALL=$@ x");
    expect(pi.substituteArgs("A=$1 ALL=$@", ["$@", "x"])).toBe("A=$@ x ALL=$@ x");
    expect(substituteArgs("$1 $2", ["$2", "two"])).toBe("$2 two");
    expect(substituteArgs("${@:1:1}|$ARGUMENTS", ["$ARGUMENTS", "z"])).toBe("$ARGUMENTS|$ARGUMENTS z");
  });

  it("never forms a new placeholder from template text around an empty substitution (pi does)", () => {
    expect(substituteArgs("$$1@ and $$1ARGUMENTS", ["a", "b"])).toBe("$a@ and $aARGUMENTS");
    expect(substituteArgs("$$1@", [])).toBe("$@");
    expect(pi.substituteArgs("$$1@", [])).toBe("");
  });

  it("never interprets $&, $` or $' in argument text (pi does)", () => {
    expect(substituteArgs("Q: $ARGUMENTS", ["a$&b"])).toBe("Q: a$&b");
    expect(pi.substituteArgs("Q: $ARGUMENTS", ["a$&b"])).toBe("Q: a$ARGUMENTSb");
    expect(substituteArgs("<$@>", ["$`", "$'", "$$"])).toBe("<$` $' $$>");
  });

  it("supports ${N} and ${N:-default} (pi 0.73.1 leaves them as text)", () => {
    expect(substituteArgs("branch ${1:-main}, mode ${2:-fast mode}, ${1}", ["dev"])).toBe("branch dev, mode fast mode, dev");
    expect(substituteArgs("${1:-main}", [""])).toBe("main");
    expect(substituteArgs("${1:-$2 stays}", [])).toBe("$2 stays");
    expect(pi.substituteArgs("${1:-main}", [])).toBe("${1:-main}");
    expect(substituteArgs("${@}", ["a", "b"])).toBe("a b");
  });

  it("slices with ${@:N} and ${@:N:L}", () => {
    const args = ["a", "b", "c", "d"];
    expect(substituteArgs("${@:2}|${@:2:2}|${@:0:1}|${@:9}|$5.", args)).toBe("b c d|b c|a||.");
  });
});
