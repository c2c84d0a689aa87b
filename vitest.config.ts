import { configDefaults, defineConfig } from "vitest/config";
import { missingServiceExcludes } from "./scripts/test-services.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // On a machine with only Node and npm, the files that need PostgreSQL, bubblewrap or
    // Chromium are left out with a line saying so; .ci/run sets ARBOR_REQUIRE_SERVICES=1,
    // which makes a missing service an error instead (scripts/test-services.ts).
    exclude: [...configDefaults.exclude, ...missingServiceExcludes()],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two cores on CI: keep the worker count small so child-process tests stay honest.
    maxWorkers: 2,
  },
});
