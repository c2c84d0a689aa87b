/**
 * Redaction of registered secrets (6+ characters) in their literal form and the encodings a command or model is likely to produce: reversed, hex,
 * URL-encoded, and base64/base64url at each byte alignment, with line breaks allowed between any two characters; every match becomes
 * {@link REDACTED}. {@link createStreamRedactor} holds back only a tail that could start a match, so its outputs concatenate to `redact(whole)`.
 * Not found: other encodings (base32, gzip, spaced-out keys); the sandbox (docs/security.md) keeps keys out of reach instead.
 * @example
 * const redactor = createSecretRedactor(["sk-test-SECRET-4242"]);
 * redactor.redact(`key=${Buffer.from("sk-test-SECRET-4242").toString("base64")}`); // "key=[redacted]"
 */

/** Secrets shorter than this (in UTF-16 code units) are ignored. */
const MIN_SECRET_LENGTH = 6;
/**
 * What a redacted match is replaced by.
 * @example
 * redactor.redact(`key=${secret}`) === `key=${REDACTED}`; // true
 */
export const REDACTED = "[redacted]";
const MIN_ENCODED_FORM_LENGTH = 8;
const BREAK = "(?:\\r?\\n)?";
const TAIL = "(?:\\r\\n?|\\n)?";

/**
 * Finds and replaces registered secrets (see the module contract).
 * @example
 * const redactor = createSecretRedactor(); redactor.add(process.env.OPENAI_API_KEY ?? "");
 */
export interface SecretRedactor {
  /** Number of registered secrets (0: every method returns its input). */
  readonly size: number;
  /** Length of the longest form, in UTF-16 code units (0 when there are none). */
  readonly longestForm: number;
  /** Registers a secret; ignored when shorter than 6 characters or not a string. */
  add(secret: string): void;
  /** `text` with every match replaced by {@link REDACTED}. */
  redact(text: string): string;
  /** Start and end offsets (end exclusive) of the matches in `text`, in order, not overlapping. */
  matches(text: string): [number, number][];
  /** Where the longest suffix of `text` that could begin a match starts; `text.length` when none. */
  partialStart(text: string): number;
  /** A copy of `value` with every string (and object key) redacted; `value` itself when nothing changed. */
  redactValue<T>(value: T): T;
}

function escapeChar(char: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(char) ? `\\${char}` : char;
}

/** The characters of the base64 encoding of `bytes` placed at offset `align` (0..2) of an encoded text that depend on `bytes` alone. */
function alignedBase64(bytes: Buffer, align: number): string {
  const encoded = Buffer.concat([Buffer.alloc(align), bytes]).toString("base64").replace(/=+$/, "");
  // Characters carrying a prefix bit come first; characters of the last partial group also carry bits of whatever follows the secret.
  const start = align === 0 ? 0 : 4;
  const totalBits = (align + bytes.length) * 8;
  const fullChars = Math.floor(totalBits / 6);
  return encoded.slice(start, fullChars);
}

/** Every form of `secret` searched for (see the module contract). */
function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const forms = new Set<string>([secret, [...secret].reverse().join("")]);
  const hex = bytes.toString("hex");
  forms.add(hex);
  forms.add(hex.toUpperCase());
  // URL-encoding: as encodeURIComponent writes it (upper- and lower-case escapes, `+` for a space as in forms), and with every byte escaped.
  const uri = encodeURIComponent(secret);
  forms.add(uri);
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
  forms.add(uri.replaceAll("%20", "+"));
  const escaped = hex.replace(/../g, (pair) => `%${pair}`);
  forms.add(escaped);
  forms.add(escaped.toUpperCase());
  for (let align = 0; align < 3; align += 1) {
    const base64 = alignedBase64(bytes, align);
    if (base64.length < MIN_ENCODED_FORM_LENGTH) continue;
    forms.add(base64);
    forms.add(base64.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/**
 * Creates a redactor for `secrets` (more can be added later with `add`).
 * @example
 * createSecretRedactor(["sk-abc123xyz"]).redact("key: sk-abc\n123xyz"); // "key: [redacted]"
 */
export function createSecretRedactor(secrets: Iterable<string> = []): SecretRedactor {
  const known = new Set<string>();
  let forms: string[] = [];
  let pattern: RegExp | undefined;
  let partial: RegExp | undefined;
  const add = (secret: string) => {
    if (typeof secret !== "string" || secret.length < MIN_SECRET_LENGTH || known.has(secret)) return;
    known.add(secret);
    forms = [...new Set([...forms, ...secretForms(secret)])].sort((a, b) => b.length - a.length);
    pattern = new RegExp(forms.map((form) => [...form].map(escapeChar).join(BREAK)).join("|"), "g");
    // Any non-empty beginning of a form, reaching the end of the text (a trailing break, or half of one, included): c1(?:B c2(?:B c3 ...)?)?B$
    partial = new RegExp(`(?:${forms.map((form) => [...form].reduceRight((rest, char, index) => (index === 0 ? `${escapeChar(char)}${rest}` : `(?:${TAIL}${escapeChar(char)}${rest})?`), "")).join("|")})${TAIL}$`);
  };
  for (const secret of secrets) add(secret);

  const matches = (text: string): [number, number][] => {
    if (!pattern || text.length === 0) return [];
    const found: [number, number][] = [];
    pattern.lastIndex = 0;
    for (const match of text.matchAll(pattern)) found.push([match.index, match.index + match[0].length]);
    return found;
  };
  const redact = (text: string): string => {
    if (!pattern || text.length === 0) return text;
    pattern.lastIndex = 0;
    return pattern.test(text) ? text.replace(pattern, REDACTED) : text;
  };
  const redactValue = <T>(value: T): T => {
    if (!pattern) return value;
    if (typeof value === "string") return redact(value) as T;
    if (Array.isArray(value)) {
      const next = value.map((item) => redactValue(item));
      return (next.some((item, index) => item !== value[index]) ? next : value) as T;
    }
    if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
      let changed = false;
      const entries = Object.entries(value).map(([key, item]) => {
        const [nextKey, nextItem] = [redact(key), redactValue(item)];
        if (nextKey !== key || nextItem !== item) changed = true;
        return [nextKey, nextItem] as const;
      });
      return (changed ? Object.fromEntries(entries) : value) as T;
    }
    return value;
  };
  const partialStart = (text: string): number => {
    if (!partial) return text.length;
    const found = partial.exec(text);
    return found ? found.index : text.length;
  };
  return {
    partialStart,
    get size() {
      return known.size;
    },
    get longestForm() {
      return forms[0]?.length ?? 0;
    },
    add,
    redact,
    matches,
    redactValue,
  };
}

/**
 * Redacts a text that arrives in pieces (see the module contract).
 * @example
 * const stream = createStreamRedactor(redactor);
 * const out = ["sk-t", "est-", "SECR", "ET-4242"].map((piece) => stream.push(piece)).join("") + stream.end(); // "[redacted]"
 */
export interface StreamRedactor {
  /** Adds a piece; returns the redacted text that can no longer change (possibly ""). */
  push(piece: string): string;
  /** Ends the text; returns the redacted rest. */
  end(): string;
  /** Everything returned so far, concatenated. */
  readonly emitted: string;
}

function countBreaks(text: string): number {
  let count = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) count += 1;
  return count;
}

/**
 * Creates a {@link StreamRedactor} over `redactor` (its secrets at each push).
 * @example
 * const stream = createStreamRedactor(createSecretRedactor([key]));
 */
export function createStreamRedactor(redactor: SecretRedactor): StreamRedactor {
  let pending = "";
  let emitted = "";
  const release = (cut: number, found: [number, number][]): string => {
    let out = "";
    let at = 0;
    for (const [start, end] of found) {
      if (end > cut) break;
      out += pending.slice(at, start) + REDACTED;
      at = end;
    }
    out += pending.slice(at, cut);
    pending = pending.slice(cut);
    emitted += out;
    return out;
  };
  return {
    push(piece) {
      pending += piece;
      if (redactor.size === 0) return release(pending.length, []);
      const longest = redactor.longestForm;
      // A match not complete yet has fewer than `longest` secret characters in the tail, plus its
      // breaks; of that tail only the part that begins a form is held back.
      const window = Math.min(pending.length, longest + 2 * countBreaks(pending.slice(-3 * longest)));
      const tailStart = pending.length - window;
      let cut = tailStart + redactor.partialStart(pending.slice(tailStart));
      if (cut <= 0) return "";
      const found = redactor.matches(pending);
      for (const [start, end] of found) if (start < cut && end > cut) cut = start;
      const code = pending.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // do not split a surrogate pair
      return cut > 0 ? release(cut, found) : "";
    },
    end() {
      return release(pending.length, redactor.matches(pending));
    },
    get emitted() {
      return emitted;
    },
  };
}
