/**
 * The secret redactor: literal, reversed, hex, base64 and base64url forms at every alignment, line
 * breaks inside a form, and the stream redactor's hold-back window (issue 19 finding 3).
 */
import { describe, expect, it } from "vitest";
import { createSecretRedactor, createStreamRedactor, REDACTED } from "../../src/core/secrets.ts";

const KEY = "sk-proj-Q7xv3LmN0pRs8TuW2yZa5bCd";

/** A deterministic pseudo-random generator (the tests must be reproducible). */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe("createSecretRedactor", () => {
  const redactor = createSecretRedactor([KEY, "short"]);

  it("finds the key in its literal, reversed, hex and split forms", () => {
    const hex = Buffer.from(KEY).toString("hex");
    const cases = [
      `key=${KEY}!`,
      `rev ${[...KEY].reverse().join("")} end`,
      `hex ${hex}`,
      `HEX ${hex.toUpperCase()}`,
      `split ${KEY.slice(0, 11)}\n${KEY.slice(11)} end`,
      `crlf ${KEY.slice(0, 5)}\r\n${KEY.slice(5)}`,
      `folded ${KEY.match(/.{1,7}/g)!.join("\n")}`,
    ];
    for (const text of cases) {
      const out = redactor.redact(text);
      expect(out, text).toContain(REDACTED);
      expect(out).not.toContain(KEY.slice(4, 16));
      expect(out).not.toContain(hex.slice(4, 20));
    }
    expect(redactor.redact("nothing here")).toBe("nothing here");
    // Short values are not secrets (they would redact words).
    expect(redactor.redact("a short word")).toBe("a short word");
  });

  it("finds base64 and base64url of the key inside any longer encoded text, wrapped or not", () => {
    const next = random(7);
    for (let trial = 0; trial < 300; trial += 1) {
      const prefix = Buffer.from(Array.from({ length: Math.floor(next() * 9) }, () => Math.floor(next() * 256)));
      const suffix = Buffer.from(Array.from({ length: Math.floor(next() * 9) }, () => Math.floor(next() * 256)));
      const bytes = Buffer.concat([prefix, Buffer.from(`KEY=${KEY}\n`), suffix]);
      for (const encoding of ["base64", "base64url"] as const) {
        let encoded = bytes.toString(encoding);
        if (trial % 3 === 0) encoded = encoded.match(/.{1,20}/g)!.join("\n");
        const out = redactor.redact(`out: ${encoded}`);
        expect(out, `${encoding} ${encoded}`).toContain(REDACTED);
        // Whatever is left decodes to no more than a fragment of the key.
        const rest = Buffer.from(out.replaceAll("\n", "").replace("out: ", "").split(REDACTED).join(""), encoding).toString("latin1");
        expect(rest).not.toContain(KEY.slice(0, 12));
      }
    }
  });

  it("finds a URL-encoded key: encodeURIComponent with either case of escapes, + for spaces, every byte escaped", () => {
    const key = "sk-ant/Q7x+v3L=mN0 pRs8";
    const url = createSecretRedactor([key]);
    const encoded = encodeURIComponent(key);
    expect(encoded).not.toBe(key);
    for (const form of [encoded, encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()), encoded.replaceAll("%20", "+"), [...Buffer.from(key)].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join(""), [...Buffer.from(key)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")]) {
      expect(url.redact(`GET /v1?key=${form}&x=1`)).toBe(`GET /v1?key=${REDACTED}&x=1`);
    }
    // Streamed in pieces, too.
    const stream = createStreamRedactor(url);
    const text = `curl https://h/?k=${encoded} done`;
    const out = [...text].map((char) => stream.push(char)).join("") + stream.end();
    expect(out).toBe(`curl https://h/?k=${REDACTED} done`);
  });

  it("redactValue redacts every string and key and keeps unchanged objects identical", () => {
    const value = { a: [KEY, 1, { [KEY]: "x" }], b: "plain" };
    expect(redactor.redactValue(value)).toEqual({ a: [REDACTED, 1, { [REDACTED]: "x" }], b: "plain" });
    const clean = { a: ["x"], b: 2 };
    expect(redactor.redactValue(clean)).toBe(clean);
  });
});

describe("createStreamRedactor", () => {
  const redactor = createSecretRedactor([KEY]);
  const texts = [
    `Here is the key: ${KEY}. And again ${Buffer.from(KEY).toString("base64")} and ${Buffer.from(KEY).toString("hex")}.`,
    `split ${KEY.slice(0, 9)}\n${KEY.slice(9)} and reversed ${[...KEY].reverse().join("")}`,
    `${KEY}${KEY}`,
    "no secret at all, just a long enough sentence to pass the window ".repeat(4),
  ];

  for (const size of [1, 3, 4, 7, 50]) {
    it(`never releases a piece of the key, ${size} characters per push`, () => {
      for (const text of texts) {
        const stream = createStreamRedactor(redactor);
        const pieces: string[] = [];
        for (let offset = 0; offset < text.length; offset += size) pieces.push(stream.push(text.slice(offset, offset + size)));
        pieces.push(stream.end());
        expect(pieces.join("")).toBe(redactor.redact(text));
        expect(stream.emitted).toBe(pieces.join(""));
        for (const piece of pieces) expect(piece).not.toMatch(/Q7xv|3LmN|pRs8|2yZa/);
        expect(pieces.join("")).not.toContain(KEY.slice(0, 8));
      }
    });
  }

  it("holds back only a tail that begins a form of the key", () => {
    const stream = createStreamRedactor(redactor);
    expect(stream.push("Partial answer, no key")).toBe("Partial answer, no key");
    expect(stream.push(" then sk-pr")).toBe(" then ");
    expect(stream.push("oj-Q7xv3LmN0pRs8TuW2yZa5bCd!")).toBe("[redacted]!");
    expect(stream.push(" and sk-pr")).toBe(" and ");
    expect(stream.end()).toBe("sk-pr");
  });

  it("passes text through at once when there are no secrets", () => {
    const stream = createStreamRedactor(createSecretRedactor());
    expect(stream.push("hello")).toBe("hello");
    expect(stream.end()).toBe("");
  });
});
