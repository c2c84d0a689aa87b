import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crc32, deflateSync, gzipSync } from "node:zlib";
import { createReadToolDefinition } from "@mariozechner/pi-coding-agent";
import { beforeEach, describe, expect, it } from "vitest";
import { createExecutionEnv, type ExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createReadTool } from "../../src/adapters/tools/read.ts";
import { PathEscapeError } from "../../src/core/errors.ts";
import { outcome, piOutcome, tempDir } from "./tool-harness.ts";

let root: string;
let env: ExecutionEnv;

beforeEach(() => {
  root = tempDir();
  env = createExecutionEnv({ root });
});

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid 2x2 RGB PNG. */
function png(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(2, 0);
  header.writeUInt32BE(2, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.from([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const lines = (count: number, width = 0) => Array.from({ length: count }, (_, index) => `line ${index + 1}${"x".repeat(width)}`).join("\n");

describe("read: same texts as pi", () => {
  it.each([
    ["small file", "hello\nworld\n", {}],
    ["line limit", lines(2500), {}],
    ["offset and limit inside the file", lines(50), { offset: 10, limit: 5 }],
    ["limit reaching the end", lines(10), { offset: 8, limit: 5 }],
    ["byte limit", lines(100, 1000), {}],
    ["byte limit from an offset", lines(300, 400), { offset: 20 }],
    ["first line too long", `${"y".repeat(60_000)}\nshort`, {}],
    ["offset beyond the end", lines(3), { offset: 10 }],
    ["empty file", "", {}],
  ])("%s", async (_name, content, options) => {
    writeFileSync(join(root, "f.txt"), content);
    const ours = await outcome(createReadTool(env), { path: "f.txt", ...options });
    const theirs = await piOutcome(createReadToolDefinition(root), { path: "f.txt", ...options });
    expect({ error: ours.error, text: ours.text }).toEqual({ error: theirs.error, text: theirs.text });
    expect(ours.result?.details).toEqual(theirs.result?.details);
  });

  it("counts lines as editors do: a 2000-line file with a trailing newline is whole, not truncated (pi: 2001 lines)", async () => {
    writeFileSync(join(root, "f.txt"), `${lines(2000)}\n`);
    const ours = await outcome(createReadTool(env), { path: "f.txt" });
    expect(ours.text).toBe(`${lines(2000)}\n`);
    expect(ours.result?.details).toBeUndefined();
    const theirs = await piOutcome(createReadToolDefinition(root), { path: "f.txt" });
    expect(theirs.text).toContain("[Showing lines 1-2000 of 2001. Use offset=2001 to continue.]");
    // A window reports the editor's count; reading past the last line is an error.
    const window = await outcome(createReadTool(env), { path: "f.txt", offset: 1990, limit: 5 });
    expect(window.text).toContain("[6 more lines in file. Use offset=1995 to continue.]");
    const beyond = await outcome(createReadTool(env), { path: "f.txt", offset: 2001 });
    expect(beyond).toMatchObject({ error: true, text: "Offset 2001 is beyond end of file (2000 lines total)" });
    writeFileSync(join(root, "g.txt"), `${lines(2001)}\n`);
    expect((await outcome(createReadTool(env), { path: "g.txt" })).text).toContain("[Showing lines 1-2000 of 2001. Use offset=2001 to continue.]");
  });

  it("detects images by magic bytes and returns an image part, as pi does", async () => {
    writeFileSync(join(root, "picture.txt"), png());
    const ours = await outcome(createReadTool(env), { path: "picture.txt" });
    const theirs = await piOutcome(createReadToolDefinition(root), { path: "picture.txt" });
    expect(ours.result?.content).toEqual([
      { type: "text", text: "Read image file [image/png]" },
      { type: "image", mimeType: "image/png", data: png().toString("base64") },
    ]);
    expect(ours.result?.content).toEqual(theirs.result?.content);
  });
});

describe("read: fixes over pi", () => {
  it("gives a clear note for a binary non-image file instead of garbage", async () => {
    writeFileSync(join(root, "data.bin"), Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x41, 0x00, 0x42]));
    writeFileSync(join(root, "archive.txt"), gzipSync("hello world"));
    const ours = await outcome(createReadTool(env), { path: "data.bin" });
    expect(ours.text).toBe("[data.bin is a binary file (8B); its content is not shown as text. Use bash tools such as file, xxd or unzip -l to inspect it.]");
    const archive = await outcome(createReadTool(env), { path: "archive.txt" });
    expect(archive.text).toMatch(/^\[archive\.txt is a binary file \(application\/gzip, \d+B\)/);
    const theirs = await piOutcome(createReadToolDefinition(root), { path: "data.bin" });
    expect(theirs.text).toContain("\u0000"); // pi returns the raw bytes as text
  });

  it("says a directory is a directory", async () => {
    mkdirSync(join(root, "src"));
    const result = await outcome(createReadTool(env), { path: "src" });
    expect(result).toMatchObject({ error: true, text: "Cannot read src: it is a directory. Use ls to list it." });
  });

  it("refuses paths outside the root, but may read the bash spill directory", async () => {
    const escaped = await outcome(createReadTool(env), { path: "../../etc/passwd" });
    expect(PathEscapeError.isInstance((escaped as { thrown?: unknown }).thrown)).toBe(true);
    const spilled = createExecutionEnv({ root, spillDir: join(tempDir(), "spill") });
    const file = join(spilled.ensureSpillDir(), "out.log");
    writeFileSync(file, "full output");
    expect((await outcome(createReadTool(spilled), { path: file })).text).toBe("full output");
  });

  it("honours an aborted signal", async () => {
    writeFileSync(join(root, "f.txt"), "x");
    const controller = new AbortController();
    controller.abort();
    expect((await outcome(createReadTool(env), { path: "f.txt" }, { signal: controller.signal })).text).toBe("Operation aborted");
  });

  it("finds macOS screenshot names typed with a plain space before AM/PM", async () => {
    writeFileSync(join(root, "Screenshot 10.00.00\u202FAM.txt"), "shot");
    expect((await outcome(createReadTool(env), { path: "Screenshot 10.00.00 AM.txt" })).text).toBe("shot");
  });
});
