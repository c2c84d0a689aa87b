/**
 * Locating and splicing text replacements for the edit tool: matching happens in a normalized view ("exact", then "fuzzy", then "whitespace"),
 * splicing in the ORIGINAL text, so bytes outside matched regions never change. Uniqueness is judged level by level; a miss quotes the nearest
 * region; all edits match the original content; replacements take the line ending of the region they replace; the BOM is kept.
 */
import { distance as levenshtein } from "fastest-levenshtein";

/** One replacement: `oldText` must be unique in the file; `newText` replaces it. Source: pi. */
export interface TextEdit {
  oldText: string;
  newText: string;
}

/** How one edit was located. Offsets are UTF-16 offsets into the original text without BOM. */
export interface MatchedEdit {
  editIndex: number;
  start: number;
  end: number;
  fuzzy: boolean;
  replacement: string;
}

/** The result of {@link planEdits}. */
export interface EditPlan {
  /** The new file content, BOM and untouched bytes preserved. */
  content: string;
  /** The original content without BOM, LF line endings (for diffs). */
  baseText: string;
  /** The new content without BOM, LF line endings (for diffs). */
  newText: string;
  matches: MatchedEdit[];
}

/** A normalized view of a text: `text[i]` came from `original.slice(starts[i], ends[i])`. */
interface View {
  text: string;
  /** Original offset where normalized character `index` starts. */
  start(index: number): number;
  /** Original offset where normalized character `index` ends. */
  end(index: number): number;
}

/** Converts CRLF and lone CR to LF. Source: pi's normalizeToLF. */
export function normalizeToLF(text: string): string {
  return text.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
}

/** Exact level: CRLF and lone CR read as LF. Identity mapping when the text has no CR. */
function exactView(original: string): View {
  if (!original.includes("\r")) return { text: original, start: (index) => index, end: (index) => index + 1 };
  // crlfAt: normalized positions of "\n" characters that stand for a two-unit CRLF (sorted).
  const crlfAt: number[] = [];
  const text = original.replace(/\r\n?/g, (match, offset: number) => {
    if (match.length === 2) crlfAt.push(offset - crlfAt.length);
    return "\n";
  });
  const before = (index: number) => {
    let low = 0;
    let high = crlfAt.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (crlfAt[middle] < index) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  return {
    text,
    start: (index) => index + before(index),
    end: (index) => {
      const shift = before(index);
      return index + shift + (crlfAt[shift] === index ? 2 : 1);
    },
  };
}

/** Clusters normalized as one unit: a code point with its combining marks. (Not `Intl.Segmenter`: it is quadratic on long strings in Node 20.) */
const CLUSTER = /\P{M}\p{M}*|\p{M}+/suy;

const pieceCache = new Map<string, string>();

function fuzzyPiece(cluster: string): string {
  let piece = pieceCache.get(cluster);
  if (piece === undefined) {
    piece = normalizeCluster(cluster);
    if (pieceCache.size < 4096) pieceCache.set(cluster, piece);
  }
  return piece;
}

function normalizeCluster(cluster: string): string {
  return cluster
    .normalize("NFKC")
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g, "-")
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, " ");
}

/** Fuzzy level (pi's normalizeForFuzzyMatch), each normalized character mapped to its cluster. */
function fuzzyView(original: string): View {
  const texts: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  for (let index = 0; index < original.length; ) {
    const code = original.charCodeAt(index);
    const next = index + 1 < original.length ? original.charCodeAt(index + 1) : 0;
    let piece: string;
    let width: number;
    if (code === 13) {
      piece = "\n";
      width = next === 10 ? 2 : 1;
    } else if (code < 0x80 && next < 0x300) {
      piece = original[index];
      width = 1; // ASCII not followed by a combining mark: unchanged by every rule
    } else {
      CLUSTER.lastIndex = index;
      const cluster = CLUSTER.exec(original)?.[0] ?? original[index];
      piece = fuzzyPiece(cluster);
      width = cluster.length;
    }
    texts.push(piece);
    starts.push(index);
    ends.push(index + width);
    index += width;
  }
  // Drop trailing whitespace of every line (pieces before a "\n" piece or the end).
  let keepUntil = texts.length;
  for (let index = texts.length - 1; index >= -1; index -= 1) {
    if (index === -1 || texts[index] === "\n") {
      let cut = keepUntil;
      while (cut > index + 1 && /^\s*$/.test(texts[cut - 1])) cut -= 1;
      for (let drop = cut; drop < keepUntil; drop += 1) texts[drop] = "";
      keepUntil = index;
    }
  }
  const charStarts: number[] = [];
  const charEnds: number[] = [];
  texts.forEach((piece, index) => {
    for (let offset = 0; offset < piece.length; offset += 1) {
      charStarts.push(starts[index]);
      charEnds.push(ends[index]);
    }
  });
  return { text: texts.join(""), start: (index) => charStarts[index], end: (index) => charEnds[index] };
}

/** The fuzzy form of a search string (same rules as the file view). */
function fuzzyText(text: string): string {
  return fuzzyView(text).text;
}

/** Whitespace level: `view` with every run of spaces and tabs read as one space (mapped to the whole run). */
function collapsedView(view: View): View {
  const starts: number[] = [];
  const ends: number[] = [];
  const chars: string[] = [];
  let previousBlank = false;
  for (let index = 0; index < view.text.length; index += 1) {
    const char = view.text[index];
    const blank = char === " " || char === "\t";
    if (blank && previousBlank && ends[ends.length - 1] === view.start(index)) {
      ends[ends.length - 1] = view.end(index);
      continue;
    }
    previousBlank = blank;
    chars.push(blank ? " " : char);
    starts.push(view.start(index));
    ends.push(view.end(index));
  }
  return { text: chars.join(""), start: (index) => starts[index], end: (index) => ends[index] };
}

/** The whitespace-level form of a search string. */
function collapsedText(text: string): string {
  return fuzzyText(text).replace(/[ \t]+/g, " ");
}

/** Non-overlapping occurrences of `needle` (pi counts with `split`, which is the same). */
function occurrences(haystack: string, needle: string): { count: number; first: number } {
  let count = 0;
  let first = -1;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    if (count === 0) first = at;
    count += 1;
  }
  return { count, first };
}

function lineEndingOf(text: string): string {
  const newline = text.search(/\r\n|\n|\r/);
  if (newline === -1) return "";
  return text[newline] === "\r" ? (text[newline + 1] === "\n" ? "\r\n" : "\r") : "\n";
}

function notFound(path: string, index: number, total: number, nearest: string | undefined): Error {
  const hint = nearest === undefined ? "" : `\nThe most similar text in the file is:\n${nearest}`;
  return total === 1
    ? new Error(`Could not find the exact text in ${path}. The old text must match exactly including all whitespace and newlines.${hint}`)
    : new Error(`Could not find edits[${index}] in ${path}. The oldText must match exactly including all whitespace and newlines.${hint}`);
}

function duplicate(path: string, index: number, total: number, count: number): Error {
  return total === 1
    ? new Error(`Found ${count} occurrences of the text in ${path}. The text must be unique. Please provide more context to make it unique.`)
    : new Error(`Found ${count} occurrences of edits[${index}] in ${path}. Each oldText must be unique. Please provide more context to make it unique.`);
}

/** Above this many line-against-line comparisons (or this long a file) no nearest candidate is searched for. */
const NEAREST_BUDGET = 400_000;
const NEAREST_MAX_CHARS = 2_000_000;

/**
 * The region of `text` (LF) with as many lines as `oldText` that is closest to it: the least sum of line-by-line Levenshtein distances, whitespace
 * runs collapsed. Quoted as it stands in the file; undefined when nothing is reasonably close (more than half of the oldText would have to change) or
 * the search would be too big.
 */
function nearestCandidate(text: string, oldText: string): string | undefined {
  if (text.length > NEAREST_MAX_CHARS) return undefined;
  const lines = text.split("\n");
  const squash = (line: string) => line.replace(/[ \t]+/g, " ").trim();
  const wanted = oldText.replace(/\n$/, "").split("\n").map(squash);
  const span = Math.min(wanted.length, lines.length);
  if ((lines.length - span + 1) * span > NEAREST_BUDGET) return undefined;
  const squashed = lines.map(squash);
  const size = wanted.slice(0, span).reduce((sum, line) => sum + line.length, 0);
  let best: { at: number; distance: number } | undefined;
  for (let at = 0; at + span <= lines.length; at += 1) {
    let distance = 0;
    for (let index = 0; index < span && (!best || distance < best.distance); index += 1) distance += levenshtein(squashed[at + index], wanted[index]);
    if (squashed.slice(at, at + span).every((line) => line === "")) continue;
    if (!best || distance < best.distance) best = { at, distance };
  }
  if (!best || best.distance > size / 2) return undefined;
  return lines.slice(best.at, best.at + span).join("\n");
}

/**
 * Plans (and applies, in memory) replacements on a file's raw text. Pure; throws `Error` with pi's
 * message texts on empty oldText, not found, duplicates, overlaps, or no change.
 * @example
 * planEdits("x = “a”;  \ny = 1;  \n", [{ oldText: 'x = "a";', newText: "x = 2;" }], "f.ts").content;
 * // "x = 2;  \ny = 1;  \n"  (second line keeps its trailing spaces)
 */
export function planEdits(raw: string, edits: readonly TextEdit[], path: string): EditPlan {
  const bom = raw.startsWith("\uFEFF") ? "\uFEFF" : "";
  const original = raw.slice(bom.length);
  const total = edits.length;
  edits.forEach((edit, index) => {
    if (normalizeToLF(edit.oldText).length === 0) {
      throw new Error(total === 1 ? `oldText must not be empty in ${path}.` : `edits[${index}].oldText must not be empty in ${path}.`);
    }
  });
  const exact = exactView(original);
  let fuzzy: View | undefined;
  let collapsed: View | undefined;
  const fileEnding = lineEndingOf(original) || "\n";
  const matches: MatchedEdit[] = edits.map((edit, editIndex) => {
    const oldText = normalizeToLF(edit.oldText);
    let view = exact;
    let found = occurrences(exact.text, oldText);
    let matchLength = oldText.length;
    if (found.count === 0) {
      fuzzy ??= fuzzyView(original);
      const fuzzyOld = fuzzyText(oldText);
      if (fuzzyOld.length > 0) {
        view = fuzzy;
        found = occurrences(fuzzy.text, fuzzyOld);
        matchLength = fuzzyOld.length;
      }
      const collapsedOld = collapsedText(oldText);
      if (found.count === 0 && collapsedOld.trim().length > 0) {
        collapsed ??= collapsedView(fuzzy);
        view = collapsed;
        found = occurrences(collapsed.text, collapsedOld);
        matchLength = collapsedOld.length;
      }
    }
    if (found.count === 0) throw notFound(path, editIndex, total, nearestCandidate(exact.text, oldText));
    if (found.count > 1) throw duplicate(path, editIndex, total, found.count);
    const start = view.start(found.first);
    const end = view.end(found.first + matchLength - 1);
    const ending = lineEndingOf(original.slice(start, end)) || fileEnding;
    const replacement = normalizeToLF(edit.newText).replace(/\n/g, ending);
    return { editIndex, start, end, fuzzy: view !== exact, replacement };
  });
  const ordered = [...matches].sort((a, b) => a.start - b.start);
  for (let index = 1; index < ordered.length; index += 1) {
    const previous = ordered[index - 1];
    const current = ordered[index];
    if (previous.end > current.start) {
      throw new Error(
        `edits[${previous.editIndex}] and edits[${current.editIndex}] overlap in ${path}. Merge them into one edit or target disjoint regions.`,
      );
    }
  }
  let body = original;
  for (let index = ordered.length - 1; index >= 0; index -= 1) {
    const match = ordered[index];
    body = body.slice(0, match.start) + match.replacement + body.slice(match.end);
  }
  if (body === original) {
    throw new Error(
      total === 1
        ? `No changes made to ${path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.`
        : `No changes made to ${path}. The replacements produced identical content.`,
    );
  }
  return { content: bom + body, baseText: exact.text, newText: normalizeToLF(body), matches };
}
