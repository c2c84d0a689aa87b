/**
 * The inspector's build (issue 15 item 2): `npm run build` runs `vite build --config
 * web/inspector/vite.config.ts` into `dist/inspector/` with fixed file names
 * (`assets/inspector.js`, `assets/inspector.css`) under the base `/inspector/`, which
 * `src/http/inspector-assets.ts` serves. No network at run time: everything is bundled.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const inspectorRoot = fileURLToPath(new URL(".", import.meta.url));
const inspectorOutDir = fileURLToPath(new URL("../../dist/inspector/", import.meta.url));

export default defineConfig({
  root: inspectorRoot,
  base: "/inspector/",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: inspectorOutDir,
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 1_000,
    rolldownOptions: {
      output: { entryFileNames: "assets/inspector.js", chunkFileNames: "assets/inspector-[name].js", assetFileNames: "assets/inspector[extname]" },
    },
  },
});
