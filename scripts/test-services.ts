/**
 * The services some test files need beyond Node and npm, and which of those files to leave out
 * when a service is missing (read by vitest.config.ts).
 *
 * Contract (ours):
 * - a test file needs PostgreSQL when it names the test database (`pg-test-db`,
 *   `createPostgresEventLog`, `127.0.0.1:5432`), bubblewrap when it names `bwrap`/`bubblewrap`,
 *   Chromium when it drives the browser (`browser.ts`, `playwright`), strace when it names
 *   `/usr/bin/strace` (syscall counts, e.g. which commits sync the log);
 * - PostgreSQL is "there" when a connection to `ARBOR_TEST_PG` (default
 *   `postgres://postgres@127.0.0.1:5432/test`) succeeds within 3 s; bubblewrap and Chromium when
 *   `/usr/bin/bwrap` and `/usr/bin/chromium` exist; strace when `/usr/bin/strace` can trace a child;
 * - with every service there, nothing is left out; otherwise the files needing a missing service
 *   are left out and one line per service says how many and how to provide it, unless
 *   `ARBOR_REQUIRE_SERVICES=1` (set by `.ci/run`), which throws instead, naming what is missing.
 *
 * @example
 * ```ts
 * export default defineConfig({ test: { exclude: [...configDefaults.exclude, ...missingServiceExcludes()] } });
 * ```
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface Service {
  name: string;
  marker: RegExp;
  available: () => boolean;
  how: string;
}

function postgresReachable(url: string): boolean {
  const probe = `import pg from "pg"; const client = new pg.Client({ connectionString: process.env.URL, connectionTimeoutMillis: 3000 }); client.connect().then(() => client.end()).then(() => process.exit(0), () => process.exit(1));`;
  try {
    execFileSync(process.execPath, ["--input-type=module", "-e", probe], { env: { ...process.env, URL: url }, stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

function straceWorks(): boolean {
  try {
    execFileSync("/usr/bin/strace", ["-qq", "-o", "/dev/null", "/bin/true"], { stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

function services(pgUrl: string): Service[] {
  return [
  { name: "PostgreSQL", marker: /pg-test-db|createPostgresEventLog|127\.0\.0\.1:5432/, available: () => postgresReachable(pgUrl), how: `a PostgreSQL server at ${pgUrl} (trust auth; or set ARBOR_TEST_PG)` },
  { name: "bubblewrap", marker: /bwrap|bubblewrap/, available: () => existsSync("/usr/bin/bwrap"), how: "the Debian package bubblewrap (/usr/bin/bwrap)" },
  { name: "Chromium", marker: /browser\.ts|playwright/, available: () => existsSync("/usr/bin/chromium"), how: "the Debian package chromium (/usr/bin/chromium)" },
  { name: "strace", marker: /\/usr\/bin\/strace/, available: straceWorks, how: "the Debian package strace (/usr/bin/strace), allowed to ptrace its children" },
  ];
}

/**
 * The test files to leave out because a service they need is missing (see the module contract).
 * Throws when `ARBOR_REQUIRE_SERVICES=1` and a service is missing.
 *
 * @example
 * ```ts
 * const exclude = missingServiceExcludes(); // [] when PostgreSQL, bubblewrap and Chromium are there
 * ```
 */
export function missingServiceExcludes(testDir = "test", env: NodeJS.ProcessEnv = process.env): string[] {
  const pgUrl = env.ARBOR_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";
  const files = readdirSync(testDir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".test.ts"))
    .map((file) => ({ path: join(testDir, file), text: readFileSync(join(testDir, file), "utf8") }));
  const excluded: string[] = [];
  const missing: string[] = [];
  for (const service of services(pgUrl)) {
    const needing = files.filter((file) => service.marker.test(file.text)).map((file) => file.path);
    if (needing.length === 0 || service.available()) continue;
    missing.push(`${service.name}: needed by ${needing.length} test files; provide ${service.how}`);
    excluded.push(...needing);
  }
  if (missing.length > 0 && env.ARBOR_REQUIRE_SERVICES === "1") {
    throw new Error(`ARBOR_REQUIRE_SERVICES=1 and a test service is missing:\n- ${missing.join("\n- ")}`);
  }
  for (const line of missing) console.warn(`arbor tests: skipping files that need ${line} (.ci/run starts or installs every one).`);
  return [...new Set(excluded)];
}
