/**
 * The package's JavaScript (`npm run build`, P11 cold import): vite's SSR build bundles `src/` into
 * `dist/`, one file per entry point of package.json `exports` (`dist/index.js`, `dist/api/<name>.js`,
 * `dist/testing/index.js`) plus the CLI's `dist/cli/main.js`, and the modules they share into
 * `dist/chunks/`. Every dependency and Node built-in stays an import; dynamic `import()`s stay
 * lazy (their modules get chunks of their own). So `import("arbor-agent")` reads a few dozen files
 * instead of one per source module. tsc emits only the declarations (`tsconfig.build.json`).
 * Every file but `dist/index.js` sits one folder below `dist/`, as the sources it came from, so
 * paths relative to `import.meta.url` (`src/http/inspector-assets.ts`, `src/cli/main.ts`) hold;
 * `test/package/build.test.ts` checks that and what the root entry loads.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { exports: Record<string, string | { default: string }> };

/** `dist/<name>.js` → `src/<name>.ts`, for each entry point of `exports` and the CLI. */
export const packageEntries: Record<string, string> = { "cli/main": "src/cli/main.ts" };
for (const target of Object.values(pkg.exports)) {
  if (typeof target === "string") continue;
  const name = target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, "");
  packageEntries[name] = `src/${name}.ts`;
}

/** A bare specifier (a package or a Node built-in) stays an import of the output. */
const external = (id: string): boolean => !id.startsWith(".") && !id.startsWith("/") && !id.startsWith("\0");

export default defineConfig({
  root,
  logLevel: "warn",
  build: {
    ssr: true,
    outDir: "dist",
    emptyOutDir: true,
    target: "node22",
    minify: false,
    sourcemap: true,
    rolldownOptions: {
      input: packageEntries,
      external,
      // No comments: the TSDoc is in the declarations; it would only be parsed again at every import.
      output: { format: "es", entryFileNames: "[name].js", chunkFileNames: "chunks/[name]-[hash].js", comments: false },
    },
  },
});
