/**
 * The README's `npm test` on a machine with only Node and npm: test files that need a service
 * that is not there are left out, saying so, and `ARBOR_REQUIRE_SERVICES=1` (as `.ci/run` sets)
 * turns a missing service into an error instead. A closed loopback port stands in for a missing
 * database server; the probe really connects.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { missingServiceExcludes } from "../../scripts/test-services.ts";

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("test services", () => {
  it("leave out the files that need an unreachable database, and only those, saying how to provide it", async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/test`;
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (line: string) => warnings.push(line);
    try {
      const excluded = missingServiceExcludes("test", { ARBOR_TEST_PG: url });
      expect(excluded).toContain("test/store/event-log-postgres.test.ts");
      expect(excluded).toContain("test/cli/cli-postgres.test.ts");
      expect(excluded).not.toContain("test/store/old-log.test.ts");
      expect(excluded.every((file) => file.endsWith(".test.ts"))).toBe(true);
    } finally {
      console.warn = warn;
    }
    expect(warnings.join("\n")).toContain(`PostgreSQL: needed by`);
    expect(warnings.join("\n")).toContain(url);
  });

  it("make a missing service an error when ARBOR_REQUIRE_SERVICES=1", async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/test`;
    expect(() => missingServiceExcludes("test", { ARBOR_TEST_PG: url, ARBOR_REQUIRE_SERVICES: "1" })).toThrow(/PostgreSQL: needed by \d+ test files/);
  });

  // Under .ci/run every service is there; on a Node-only machine this one has nothing to check.
  it.runIf(process.env.ARBOR_REQUIRE_SERVICES === "1")("leave nothing out when every service is there (.ci/run)", () => {
    expect(missingServiceExcludes("test", { ...process.env, ARBOR_REQUIRE_SERVICES: "1" })).toEqual([]);
  });
});
