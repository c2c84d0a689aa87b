/**
 * `@example` belongs to the public API: every example in src/ is on a declaration that a package
 * entry point exports (or a member of one), or in an entry module's header. Internal modules get a
 * short header instead (`scripts/public-examples.ts --fix` removes the others).
 */
import { describe, expect, it } from "vitest";
import { internalExamples } from "../../scripts/public-examples.ts";

describe("examples", () => {
  it("appear only on public exports", () => {
    const found = internalExamples().map((example) => `${example.file.slice(example.file.indexOf("src/"))}:${example.line}`);
    expect(found).toEqual([]);
    // Building the TypeScript program over src/ takes 30-60 s on a loaded two-core machine.
  }, 180_000);
});
